import { CompactSign, SignJWT, UnsecuredJWT, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { JwtVerifier, TokenRejected } from '../../../src/auth/jwt-verifier.js';
import { JWT_SECRET, signToken } from '../../support/fake-auth-o-tron.js';

/** JWT verification and the user model of docs/design/rules/operations.md §2.5, against a fixed clock. */

const INVALID = 'Invalid or expired token';
const MISSING_USER = 'Token is missing required user claims';

/** Whole seconds, so the leeway boundary is exact. */
const NOW_S = 1_750_000_000;
const verifier = new JwtVerifier(JWT_SECRET, () => NOW_S * 1000);

const BASE = { sub: 'reader-user', username: 'reader-user', realm: 'localrealm', roles: ['reader'], attributes: {} };

/** A token over exactly `claims` (no `exp` added unless given). */
function token(claims: Record<string, unknown>, options: { secret?: string; alg?: 'HS256' | 'HS384' | 'none' } = {}) {
  return signToken(claims, { ...options, expiresInSeconds: null });
}

const valid = (extra: Record<string, unknown> = {}) => token({ ...BASE, exp: NOW_S + 3600, ...extra });

async function rejection(jwt: string): Promise<string> {
  try {
    await verifier.verify(jwt);
  } catch (error) {
    if (error instanceof TokenRejected) return error.message;
    throw error;
  }
  throw new Error('the token was accepted');
}

function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

describe('JwtVerifier: accepted tokens and the user model (docs/design/rules/operations.md §2.5)', () => {
  it('accepts a valid HS256 token and derives the user from its claims', async () => {
    const jwt = await valid({ roles: ['reader', 'extra'], attributes: { team: 'ops', site: 'reading' } });
    expect(await verifier.verify(jwt)).toEqual({
      username: 'reader-user',
      realm: 'localrealm',
      roles: ['reader', 'extra'],
      attributes: { team: 'ops', site: 'reading' },
      expiresAt: (NOW_S + 3600 + 61) * 1000,
    });
  });

  it('accepts a token as the fake auth-o-tron issues it (jose SignJWT, iat and exp set)', async () => {
    const jwt = await new SignJWT({ ...BASE })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(NOW_S)
      .setExpirationTime(NOW_S + 3600)
      .sign(bytes(JWT_SECRET));
    expect((await verifier.verify(jwt)).username).toBe('reader-user');
  });

  it('prefers username over sub', async () => {
    expect((await verifier.verify(await valid({ username: 'named', sub: 'subject' }))).username).toBe('named');
  });

  it('falls back to sub when username is absent or null', async () => {
    const { username: _username, ...withoutUsername } = BASE;
    expect((await verifier.verify(await token({ ...withoutUsername, sub: 'subject', exp: NOW_S + 60 }))).username).toBe('subject');
    expect((await verifier.verify(await valid({ username: null, sub: 'subject' }))).username).toBe('subject');
  });

  it('defaults realm to none, roles to [] and attributes to {}', async () => {
    expect(await verifier.verify(await token({ username: 'bare', exp: NOW_S + 60 }))).toEqual({
      username: 'bare',
      realm: undefined,
      roles: [],
      attributes: {},
      expiresAt: (NOW_S + 60 + 61) * 1000,
    });
  });

  it('treats a null realm and null iss as absent', async () => {
    const user = await verifier.verify(await valid({ realm: null, iss: null }));
    expect(user.realm).toBeUndefined();
  });

  it('keys the HMAC with the UTF-8 bytes of the secret', async () => {
    const secret = 'sécret-ü-☃';
    const own = new JwtVerifier(secret, () => NOW_S * 1000);
    const jwt = await new CompactSign(bytes(JSON.stringify({ ...BASE, exp: NOW_S + 60 })))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(bytes(secret));
    expect((await own.verify(jwt)).username).toBe('reader-user');
    // Latin-1 bytes of the same text are a different key.
    const latin1 = await new CompactSign(bytes(JSON.stringify({ ...BASE, exp: NOW_S + 60 })))
      .setProtectedHeader({ alg: 'HS256' })
      .sign(Uint8Array.from(Buffer.from('sécret-ü', 'latin1')));
    await expect(new JwtVerifier('sécret-ü', () => NOW_S * 1000).verify(latin1)).rejects.toThrow(INVALID);
  });

  it('does not validate nbf: a token not valid before next year is accepted', async () => {
    expect((await verifier.verify(await valid({ nbf: NOW_S + 365 * 86_400 }))).username).toBe('reader-user');
  });

  it('does not validate iat, iss or aud', async () => {
    const jwt = await valid({ iat: NOW_S + 86_400, iss: 'https://elsewhere.example', aud: 'someone-else' });
    expect((await verifier.verify(jwt)).username).toBe('reader-user');
    expect((await verifier.verify(await valid({ aud: ['a', 'b'] }))).username).toBe('reader-user');
  });

  it('ignores unknown claims', async () => {
    expect((await verifier.verify(await valid({ email: 'x@example.com', custom: { nested: [1, 2] } }))).username).toBe('reader-user');
  });
});

describe('JwtVerifier: exp and the 60 s leeway', () => {
  it.each([
    ['expires in an hour', NOW_S + 3600],
    ['expires now', NOW_S],
    ['expired 1 s ago', NOW_S - 1],
    ['expired 30 s ago', NOW_S - 30],
    ['expired exactly 60 s ago (the leeway boundary)', NOW_S - 60],
  ])('accepts a token that %s', async (_label, exp) => {
    expect((await verifier.verify(await valid({ exp }))).username).toBe('reader-user');
  });

  it.each([
    ['expired 61 s ago', NOW_S - 61],
    ['expired an hour ago', NOW_S - 3600],
    ['expired at the epoch', 0],
  ])('rejects a token that %s', async (_label, exp) => {
    expect(await rejection(await valid({ exp }))).toBe(INVALID);
  });

  it('carries the first instant it is refused as expiresAt: exp + 61 s, whole-second rule (docs/design/rules/browser.md §6)', async () => {
    const jwt = await valid({ exp: NOW_S });
    const expiresAt = (NOW_S + 61) * 1000;
    expect((await verifier.verify(jwt)).expiresAt).toBe(expiresAt);
    const justBefore = new JwtVerifier(JWT_SECRET, () => expiresAt - 1);
    expect((await justBefore.verify(jwt)).expiresAt).toBe(expiresAt);
    const atIt = new JwtVerifier(JWT_SECRET, () => expiresAt);
    await expect(atIt.verify(jwt)).rejects.toThrow(INVALID);
  });

  it('measures the leeway against the injected clock, not wall time', async () => {
    const later = new JwtVerifier(JWT_SECRET, () => (NOW_S + 61) * 1000);
    const jwt = await valid({ exp: NOW_S });
    expect((await verifier.verify(jwt)).username).toBe('reader-user');
    await expect(later.verify(jwt)).rejects.toThrow(INVALID);
  });

  it.each([
    ['missing', undefined],
    ['null', null],
    ['a non-integer number', NOW_S + 3600.5],
    ['a numeric string', String(NOW_S + 3600)],
    ['negative', -1],
    ['a large negative', -(NOW_S + 3600)],
    ['a boolean', true],
    ['an array', [NOW_S + 3600]],
    ['an object', { value: NOW_S + 3600 }],
  ])('rejects exp %s', async (_label, exp) => {
    const claims: Record<string, unknown> = { ...BASE };
    if (exp !== undefined) claims.exp = exp;
    expect(await rejection(await token(claims))).toBe(INVALID);
  });
});

describe('JwtVerifier: signature and algorithm', () => {
  it('rejects a token signed with another secret', async () => {
    expect(await rejection(await signToken(BASE, { secret: 'another-secret' }))).toBe(INVALID);
  });

  it('rejects a token signed with a secret that only shares a prefix', async () => {
    expect(await rejection(await signToken(BASE, { secret: `${JWT_SECRET}x` }))).toBe(INVALID);
  });

  it('rejects HS384 even when signed with the right secret', async () => {
    expect(await rejection(await signToken(BASE, { alg: 'HS384' }))).toBe(INVALID);
  });

  it('rejects alg "none", with an empty signature or with a valid HS256 MAC attached', async () => {
    const unsecured = new UnsecuredJWT({ ...BASE, exp: NOW_S + 3600 }).encode();
    expect(await rejection(unsecured)).toBe(INVALID);
    expect(await rejection(await signToken({ ...BASE, exp: NOW_S + 3600 }, { alg: 'none' }))).toBe(INVALID);
  });

  it('rejects RS256', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const jwt = await new CompactSign(bytes(JSON.stringify({ ...BASE, exp: NOW_S + 3600 })))
      .setProtectedHeader({ alg: 'RS256' })
      .sign(privateKey);
    expect(await rejection(jwt)).toBe(INVALID);
  });

  it('rejects a tampered payload', async () => {
    const [header, , signature] = (await valid()).split('.');
    const forged = Buffer.from(JSON.stringify({ ...BASE, roles: ['admin'], exp: NOW_S + 3600 })).toString('base64url');
    expect(await rejection(`${header}.${forged}.${signature}`)).toBe(INVALID);
  });

  it.each(['', 'not-a-jwt', 'a.b.c', 'a.b', 'a.b.c.d', '...'])('rejects the malformed token %j', async (jwt) => {
    expect(await rejection(jwt)).toBe(INVALID);
  });

  it.each([
    ['a JSON array', '[1,2,3]'],
    ['a JSON string', '"reader-user"'],
    ['JSON null', 'null'],
    ['not JSON', 'username=reader-user'],
  ])('rejects a correctly signed payload that is %s', async (_label, payload) => {
    const jwt = await new CompactSign(bytes(payload)).setProtectedHeader({ alg: 'HS256' }).sign(bytes(JWT_SECRET));
    expect(await rejection(jwt)).toBe(INVALID);
  });
});

describe('JwtVerifier: claim types', () => {
  it.each([
    ['username a number', { username: 42 }],
    ['username an object', { username: { name: 'x' } }],
    ['username an array', { username: ['x'] }],
    ['sub a number', { sub: 42 }],
    ['sub a number while username is fine', { username: 'ok', sub: 7 }],
    ['realm a number', { realm: 1 }],
    ['realm an array', { realm: ['localrealm'] }],
    ['iss a number', { iss: 5 }],
    ['iss a boolean', { iss: true }],
    ['roles a string', { roles: 'reader' }],
    ['roles holding a number', { roles: ['reader', 1] }],
    ['roles holding null', { roles: [null] }],
    ['roles an object', { roles: { reader: true } }],
    ['attributes an array', { attributes: ['a'] }],
    ['attributes a string', { attributes: 'team=ops' }],
    ['attributes with a number value', { attributes: { level: 3 } }],
    ['attributes with a nested object', { attributes: { team: { name: 'ops' } } }],
    ['iat a string', { iat: String(NOW_S) }],
    ['iat a non-integer', { iat: NOW_S + 0.5 }],
  ])('rejects %s as invalid', async (_label, extra) => {
    expect(await rejection(await valid(extra))).toBe(INVALID);
  });

  it('accepts an integer iat', async () => {
    expect((await verifier.verify(await valid({ iat: NOW_S }))).username).toBe('reader-user');
  });
});

describe('JwtVerifier: user claims', () => {
  it.each([
    ['neither username nor sub', {}],
    ['both null', { username: null, sub: null }],
    ['username null, no sub', { username: null }],
    ['sub null, no username', { sub: null }],
  ])('rejects a valid token with %s: missing required user claims', async (_label, userClaims) => {
    const { username: _u, sub: _s, ...rest } = BASE;
    expect(await rejection(await token({ ...rest, ...userClaims, exp: NOW_S + 3600 }))).toBe(MISSING_USER);
  });

  it('judges signature and expiry before the user claims', async () => {
    const { username: _u, sub: _s, ...rest } = BASE;
    expect(await rejection(await token({ ...rest, exp: NOW_S - 61 }))).toBe(INVALID);
    expect(await rejection(await token({ ...rest, exp: NOW_S + 60 }, { secret: 'wrong' }))).toBe(INVALID);
  });
});
