import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuthOTronClient, stripUserInfo } from '../../../src/auth/auth-o-tron.js';

/**
 * The outbound call and answer interpretation of docs/design/rules/operations.md §2.3.2–§2.3.3, against a local
 * server whose every answer the test scripts.
 */

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
const OTHER_JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ5In0.b3RoZXI';

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

type Script = (response: ServerResponse) => void;

let server: Server;
let base: string;
let script: Script;
const received: Received[] = [];
const open = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      open.add(response);
      response.on('close', () => open.delete(response));
      script(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const response of open) response.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  received.length = 0;
  for (const response of open) response.destroy();
  script = (response) => response.end();
});

function answer(status: number, body = '', headers: Record<string, string> = {}): Script {
  return (response) => {
    response.writeHead(status, headers);
    response.end(body);
  };
}

const client = (timeoutMs = 2000) => new AuthOTronClient(base, timeoutMs);

describe('AuthOTronClient: the outbound call (docs/design/rules/operations.md §2.3.2)', () => {
  it('sends GET <url>/authenticate with the Authorization value unchanged and no body', async () => {
    script = answer(200, '', { Authorization: `Bearer ${JWT}` });
    await client().authenticate('Basic YWRtaW4tdXNlcjphZG1pbi1wYXNz');
    expect(received).toHaveLength(1);
    expect(received[0]?.method).toBe('GET');
    expect(received[0]?.url).toBe('/authenticate');
    expect(received[0]?.headers.authorization).toBe('Basic YWRtaW4tdXNlcjphZG1pbi1wYXNz');
    expect(received[0]?.body).toBe('');
    expect(received[0]?.headers.cookie).toBeUndefined();
    expect(received[0]?.headers['x-request-id']).toBeUndefined();
  });

  it('removes every trailing "/" of the base URL and keeps a path prefix', async () => {
    script = answer(401);
    await new AuthOTronClient(`${base}///`, 2000).authenticate('Bearer x');
    await new AuthOTronClient(`${base}/prefix/auth/`, 2000).authenticate('Bearer x');
    expect(received.map((r) => r.url)).toEqual(['/authenticate', '/prefix/auth/authenticate']);
  });

  it('makes one call per authentication: no caching', async () => {
    script = answer(200, '', { Authorization: `Bearer ${JWT}` });
    await client().authenticate('Bearer x');
    await client().authenticate('Bearer x');
    const same = client();
    await same.authenticate('Bearer x');
    await same.authenticate('Bearer x');
    expect(received).toHaveLength(4);
  });
});

describe('AuthOTronClient: status codes (docs/design/rules/operations.md §2.3.3)', () => {
  it('401 is a rejection', async () => {
    script = answer(401);
    expect(await client().authenticate('Basic x')).toEqual({ kind: 'rejected' });
  });

  it('403 is a denial', async () => {
    script = answer(403);
    expect(await client().authenticate('Basic x')).toEqual({ kind: 'denied' });
  });

  it.each([500, 502, 503, 404, 400, 418, 302, 301, 304])('%i means unavailable, even with a token', async (status) => {
    script = answer(status, JWT, { Authorization: `Bearer ${JWT}`, Location: '/elsewhere' });
    expect((await client().authenticate('Basic x')).kind).toBe('unavailable');
  });

  it.each([200, 201, 203, 299])('%i with a token in the header is a success', async (status) => {
    script = answer(status, '', { Authorization: `Bearer ${JWT}` });
    expect(await client().authenticate('Basic x')).toEqual({ kind: 'token', token: JWT });
  });
});

describe('AuthOTronClient: where the JWT is found (docs/design/rules/operations.md §2.3.3)', () => {
  it.each([
    ['Bearer <jwt>', `Bearer ${JWT}`],
    ['bearer <jwt>', `bearer ${JWT}`],
    ['BEARER <jwt>', `BEARER ${JWT}`],
    ['padded', `  Bearer   ${JWT}  `],
  ])('takes the response header %s', async (_label, header) => {
    script = answer(200, 'Authenticated successfully', { Authorization: header });
    expect(await client().authenticate('Basic x')).toEqual({ kind: 'token', token: JWT });
  });

  it('prefers the header over the body', async () => {
    script = answer(200, JSON.stringify({ token: OTHER_JWT }), { Authorization: `Bearer ${JWT}` });
    expect(await client().authenticate('Basic x')).toEqual({ kind: 'token', token: JWT });
  });

  it.each([
    ['not JWT-shaped', 'Bearer not-a-jwt'],
    ['three parts', `Bearer ${JWT} extra`],
    ['another scheme', `Basic ${JWT}`],
    ['no scheme', JWT],
  ])('falls back to the body when the header is %s', async (_label, header) => {
    script = answer(200, JSON.stringify({ token: OTHER_JWT }), { Authorization: header });
    expect(await client().authenticate('Basic x')).toEqual({ kind: 'token', token: OTHER_JWT });
  });

  it.each([
    ['token', { token: JWT }],
    ['jwt', { jwt: JWT }],
    ['access_token', { access_token: JWT }],
    ['a trimmed token', { token: `  ${JWT}\n` }],
    ['token before jwt', { jwt: OTHER_JWT, token: JWT }],
    ['jwt before access_token', { access_token: OTHER_JWT, jwt: JWT }],
    ['a null token skipped', { token: null, jwt: JWT }],
    ['null token and jwt skipped', { token: null, jwt: null, access_token: JWT }],
  ])('takes a JSON object body field: %s', async (_label, body) => {
    script = answer(200, JSON.stringify(body), { 'Content-Type': 'application/json' });
    expect(await client().authenticate('Basic x')).toEqual({ kind: 'token', token: JWT });
  });

  it.each([
    ['a malformed token (no fall-through to jwt)', { token: 'not-a-jwt', jwt: JWT }],
    ['a blank token (no fall-through)', { token: '   ', jwt: JWT }],
    ['a numeric token (no fall-through)', { token: 42, access_token: JWT }],
    ['no known field', { id_token: JWT }],
    ['an empty object', {}],
  ])('finds no token in %s', async (_label, body) => {
    script = answer(200, JSON.stringify(body));
    expect((await client().authenticate('Basic x')).kind).toBe('unavailable');
  });

  it('takes a JSON string body, trimmed inside', async () => {
    script = answer(200, JSON.stringify(`  ${JWT}  `));
    expect(await client().authenticate('Basic x')).toEqual({ kind: 'token', token: JWT });
  });

  it('takes the raw trimmed body', async () => {
    script = answer(200, `\n  ${JWT}  \n`, { 'Content-Type': 'text/plain' });
    expect(await client().authenticate('Basic x')).toEqual({ kind: 'token', token: JWT });
  });

  it.each([
    ['empty', ''],
    ['blank', '   \n'],
    ['plain text', 'ok'],
    ['Authenticated successfully', 'Authenticated successfully'],
    ['a JSON array', JSON.stringify([JWT])],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['a JSON string that is no JWT', '"not-a-jwt"'],
    ['a raw body with two tokens', `${JWT} ${JWT}`],
  ])('2xx with a %s body and no header token is unavailable', async (_label, body) => {
    script = answer(200, body);
    expect((await client().authenticate('Basic x')).kind).toBe('unavailable');
  });
});

describe('AuthOTronClient: transport failures (docs/design/rules/operations.md §2.3.3)', () => {
  it('a closed port is unavailable', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const answerOf = await new AuthOTronClient(`http://127.0.0.1:${port}`, 2000).authenticate('Basic x');
    expect(answerOf.kind).toBe('unavailable');
  });

  it('no answer within timeout_ms is unavailable, and the wait is bounded', async () => {
    script = () => undefined;
    const started = Date.now();
    expect((await client(200).authenticate('Basic x')).kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('the timeout also covers reading the body', async () => {
    script = (response) => {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.write(JWT.slice(0, 10));
    };
    const started = Date.now();
    expect((await client(200).authenticate('Basic x')).kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('a connection dropped mid-body is unavailable', async () => {
    script = (response) => {
      response.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '100' });
      response.write('abc', () => response.destroy());
    };
    expect((await client().authenticate('Basic x')).kind).toBe('unavailable');
  });
});

describe('stripUserInfo', () => {
  it.each([
    ['connect to http://user:pass@auth.example/authenticate failed', 'connect to http://[REDACTED]@auth.example/authenticate failed'],
    ['https://token@host:8443/x', 'https://[REDACTED]@host:8443/x'],
    ['a http://a:b@h1/ and HTTPS://c:d@h2/', 'a http://[REDACTED]@h1/ and HTTPS://[REDACTED]@h2/'],
    ['no url here', 'no url here'],
    ['http://host/path?q=a@b', 'http://host/path?q=a@b'],
  ])('%j → %j', (input, output) => {
    expect(stripUserInfo(input)).toBe(output);
  });
});
