import { describe, expect, it } from 'vitest';
import { isAuthenticatedPath } from '../../../src/http/routes/auth-hook.js';
import { isJwtShaped, parseDirectHeader, parseTrustedProxyHeader } from '../../../src/auth/authorization-header.js';

/**
 * Header parsing of docs/design/rules/operations.md §2.3.1 (direct) and §2.4 (trusted proxy), the structural JWT
 * check of docs/design/rules/operations.md §2.3.3 and the path classes of docs/design/rules/operations.md §2.1. Messages are the exact catalogue strings of docs/design/rules/operations.md §2.8.
 */

const NOT_UTF8 = 'Authorization header is not valid UTF-8';
const EMPTY = 'Authorization header cannot be empty';
const SCHEME = 'Authorization header must use Bearer or Basic scheme';
const BEARER_TOKEN = 'Authorization header must use Bearer token';

describe('parseDirectHeader (docs/design/rules/operations.md §2.3.1)', () => {
  it('reports no credentials when the header is absent', () => {
    expect(parseDirectHeader(undefined)).toEqual({ kind: 'none' });
  });

  it.each([
    ['Basic YWRtaW4tdXNlcjphZG1pbi1wYXNz', 'Basic YWRtaW4tdXNlcjphZG1pbi1wYXNz', 'YWRtaW4tdXNlcjphZG1pbi1wYXNz'],
    ['Bearer a.b.c', 'Bearer a.b.c', 'a.b.c'],
    ['bearer a.b.c', 'bearer a.b.c', 'a.b.c'],
    ['BASIC abc', 'BASIC abc', 'abc'],
    ['bAsIc abc', 'bAsIc abc', 'abc'],
    ['  Basic abc  ', 'Basic abc', 'abc'],
    ['\tBearer a.b.c\t', 'Bearer a.b.c', 'a.b.c'],
    ['Bearer   a.b.c', 'Bearer   a.b.c', 'a.b.c'],
    // Direct mode only splits on the first space: anything after it is auth-o-tron's business.
    ['Bearer not a jwt', 'Bearer not a jwt', 'not a jwt'],
    ['Bearer not-a-jwt', 'Bearer not-a-jwt', 'not-a-jwt'],
  ])('accepts %j, keeping the trimmed value for forwarding', (raw, header, token) => {
    expect(parseDirectHeader(raw)).toEqual({ kind: 'present', header, token });
  });

  it.each([
    ['Basic \u00e9', 'a latin-1 byte'],
    ['Bearer \u00c3\u00a9', 'the bytes of UTF-8 "é" as a header carries them'],
    ['Bearer caf\u00e9.b.c', 'a non-ASCII token'],
    ['Basic abc\u0001', 'a control character'],
    ['Basic abc\u007f', 'DEL'],
    ['Basic\nabc', 'a line feed'],
    ['\u00a0', 'only a no-break space'],
  ])('rejects %j (%s) as not valid UTF-8', (raw) => {
    expect(parseDirectHeader(raw)).toEqual({ kind: 'malformed', message: NOT_UTF8 });
  });

  it.each(['', ' ', '   ', '\t', ' \t '])('rejects %j as empty', (raw) => {
    expect(parseDirectHeader(raw)).toEqual({ kind: 'malformed', message: EMPTY });
  });

  it.each([
    'Digest abc',
    'Negotiate abc',
    'Token abc',
    'Bearer',
    'Basic',
    'Bearerabc',
    'Bearer\tabc',
    'abc',
    'Bearer:abc',
    'Bearer  ',
    'Basic \t',
    'Basic:YWRtaW4=',
  ])('rejects %j as not using the Bearer or Basic scheme', (raw) => {
    expect(parseDirectHeader(raw)).toEqual({ kind: 'malformed', message: SCHEME });
  });

  it('cannot produce "credentials cannot be empty" from any header value: trimming leaves a non-blank tail after the first space', () => {
    // The catalogue lists the message (docs/design/rules/operations.md §2.8), but after trimming the first space is
    // always followed by the final non-blank character, as in the reference.
    for (const raw of ['Bearer ', 'Basic  ', 'Bearer \t ', ' Basic \t']) {
      expect(parseDirectHeader(raw)).toEqual({ kind: 'malformed', message: SCHEME });
    }
  });
});

describe('parseTrustedProxyHeader (docs/design/rules/operations.md §2.4)', () => {
  it('reports no credentials when the header is absent', () => {
    expect(parseTrustedProxyHeader(undefined)).toEqual({ kind: 'none' });
  });

  it.each([
    ['Bearer a.b.c', 'a.b.c'],
    ['bearer a.b.c', 'a.b.c'],
    ['BEARER a.b.c', 'a.b.c'],
    ['  Bearer   a.b.c  ', 'a.b.c'],
    ['Bearer\ta.b.c', 'a.b.c'],
    // Only the structure is checked here; the verifier judges the token.
    ['Bearer not-a-jwt', 'not-a-jwt'],
  ])('accepts %j with token %j', (raw, token) => {
    const parsed = parseTrustedProxyHeader(raw);
    expect(parsed.kind).toBe('present');
    expect(parsed.kind === 'present' ? parsed.token : undefined).toBe(token);
  });

  it.each([
    'Basic YWRtaW4tdXNlcjphZG1pbi1wYXNz',
    'Digest abc',
    'Bearer',
    'Bearer a.b.c extra',
    'Bearer a b',
    'a.b.c',
    'Token a.b.c',
    '',
    '   ',
  ])('rejects %j: must use Bearer token', (raw) => {
    expect(parseTrustedProxyHeader(raw)).toEqual({ kind: 'malformed', message: BEARER_TOKEN });
  });
});

describe('isJwtShaped (docs/design/rules/operations.md §2.3.3)', () => {
  it.each(['a.b.c', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', 'A-_z.0-9.x_-', 'abc.DEF.123'])('accepts %j', (text) => {
    expect(isJwtShaped(text)).toBe(true);
  });

  it.each([
    '',
    'a',
    'a.b',
    'a.b.c.d',
    '.b.c',
    'a..c',
    'a.b.',
    '..',
    'a+b.c.d',
    'a/b.c.d',
    'YQ==.b.c',
    'a.b.c ',
    ' a.b.c',
    'a.b.c\n',
    'a. b.c',
    'a.b.c\u00e9',
    'not-a-jwt',
  ])('rejects %j', (text) => {
    expect(isJwtShaped(text)).toBe(false);
  });
});

describe('isAuthenticatedPath (docs/design/rules/operations.md §2.1)', () => {
  it.each([
    '/api/v1/notification',
    '/api/v1/watch',
    '/api/v1/replay',
    '/api/v1/admin/wipe/all',
    '/api/v1/admin/wipe/stream',
    '/api/v1/admin/notification/mars@1',
    '/api/v1/admin/unknown',
    '/api/v1/unknown',
    '/api/v1',
  ])('authenticates %s', (path) => {
    expect(isAuthenticatedPath(path)).toBe(true);
  });

  it.each([
    '/api/v1/schema',
    '/api/v1/schema/mars',
    '/api/v1/schema/',
    // "Match is by path prefix /api/v1/schema".
    '/api/v1/schemas',
    '/',
    '/health',
    '/static/logo.png',
    '/swagger-ui/',
    '/api-docs/openapi.json',
    '/api/v10/notification',
    '/api/v2/notification',
  ])('skips %s', (path) => {
    expect(isAuthenticatedPath(path)).toBe(false);
  });
});
