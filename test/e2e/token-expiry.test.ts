import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_USERS, FakeAuthOTron, JWT_SECRET, LOCAL_REALM, signToken } from '../support/fake-auth-o-tron.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type LogLine, type RunningServer } from '../support/server-process.js';
import { SseClient, withoutHeartbeats } from '../support/sse-client.js';
import { TOKEN_EXPIRED_CLOSE, expectControl } from '../support/transcript.js';

/**
 * docs/design/rules/browser.md §6 against the real server process: "A stream opened with a JWT that expires in 2 s
 * is closed as docs/design/rules/browser.md §6 says", in trusted-proxy mode (the JWT is the forwarded one) and in direct mode
 * (the JWT is the one the fake auth-o-tron returns). Frames are read with eventsource-parser.
 *
 * "Expires" is the server's own rule, the one every request is judged by: a JWT is refused from
 * `exp + 61 s` on (`exp < floor(now / 1000) − 60`, docs/design/rules/operations.md §2.5). A token that expires in 2 s
 * is therefore minted with `exp` 59 s in the past; the stream must end once that instant has
 * passed, and a reconnect with the same token must then get its 401.
 */

const EVENT = 'private_feed';
const SCHEMAS = {
  [EVENT]: {
    topic: { base: 'privfeed', key_order: ['name'] },
    identifier: { name: { type: 'StringHandler', required: true } },
    auth: { required: true },
  },
};
const WATCH = { event_type: EVENT, identifier: { name: 'n1' } };
const NOTIFICATION = { event_type: EVENT, identifier: { name: 'n1' }, payload: { note: 'before expiry' } };

type Mode = 'direct' | 'trusted_proxy';

const fake = new FakeAuthOTron();
const servers = {} as Record<Mode, RunningServer>;

function config(mode: Mode): Record<string, unknown> {
  return serverConfig({
    notification_schema: SCHEMAS,
    auth: {
      enabled: true,
      mode,
      auth_o_tron_url: fake.url,
      jwt_secret: JWT_SECRET,
      admin_roles: { [LOCAL_REALM]: ['admin'] },
      timeout_ms: 5000,
    },
    logging: { level: 'info' },
  });
}

beforeAll(async () => {
  await fake.start();
  [servers.direct, servers.trusted_proxy] = await Promise.all([
    startServer({ config: config('direct') }),
    startServer({ config: config('trusted_proxy') }),
  ]);
});

afterAll(async () => {
  await Promise.all([servers.direct?.stop(), servers.trusted_proxy?.stop()]);
  await fake.stop();
});

beforeEach(() => fake.reset());

/** The `exp` of a token the server refuses from about `ms` from now on, and that instant (epoch ms). */
function expiringIn(ms: number): { exp: number; refusedAt: number } {
  const refusedAtS = Math.ceil((Date.now() + ms) / 1000);
  return { exp: refusedAtS - 61, refusedAt: refusedAtS * 1000 };
}

async function adminBearer(exp?: number): Promise<string> {
  const claims = { sub: 'admin-user', username: 'admin-user', realm: LOCAL_REALM, roles: ['admin'] };
  return `Bearer ${await signToken(exp === undefined ? claims : { ...claims, exp })}`;
}

function post(server: RunningServer, path: string, body: unknown, authorization: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization }, body: JSON.stringify(body) });
}

async function expectUnauthorized(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  expect(await response.json()).toMatchObject({ code: 'UNAUTHORIZED', message: 'Invalid or expired token' });
}

function tokenExpiredLogs(server: RunningServer, requestId: string | null): LogLine[] {
  return server.logs.filter(
    (line) => line.attributes?.['event.name'] === 'stream.token_expired.closed' && line.attributes.request_id === requestId,
  );
}

/**
 * Opens a watch with `authorization`, sees a notification delivered, then reads until the server
 * ends the stream: the last frame must be the docs/design/rules/browser.md §6 close, after the token's refusal instant.
 */
async function expectClosedAtExpiry(server: RunningServer, authorization: string, publisher: string, refusedAt: number) {
  const client = await SseClient.open(`${server.url}/api/v1/watch`, WATCH, { headers: { authorization } });
  try {
    expect(client.status).toBe(200);
    const requestId = client.headers.get('x-request-id');
    expect((await client.next())?.json.type).toBe('connection_established');
    expect((await post(server, '/api/v1/notification', NOTIFICATION, publisher)).status).toBe(200);
    expect((await client.nextSignificant())?.json.id).toBe(`${EVENT}@1`);

    const rest = withoutHeartbeats(await client.rest(10_000));
    const arrivedAt = Date.now();
    expect(rest).toHaveLength(1);
    expectControl(rest[0], 'connection-closing', { ...TOKEN_EXPIRED_CLOSE, request_id: requestId, topic: 'privfeed.n1' });
    expect(arrivedAt).toBeGreaterThanOrEqual(refusedAt);
    // The connection is over: nothing follows the close.
    expect(client.hasEnded).toBe(true);
    // The log line is written before the close, but stdout may reach us after the socket did.
    for (let i = 0; i < 100 && tokenExpiredLogs(server, requestId).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(tokenExpiredLogs(server, requestId)).toEqual([
      expect.objectContaining({
        severityText: 'INFO',
        attributes: expect.objectContaining({ cause: 'token_expired', reason: 'end_of_stream', endpoint: 'watch', topic: 'privfeed.n1' }),
      }),
    ]);
  } finally {
    client.close();
  }
}

describe('a stream opened with a JWT that expires in 2 s is closed as docs/design/rules/browser.md §6 says', () => {
  it('trusted proxy: the forwarded JWT; a reconnect with it gets 401, so do notify and admin; a fresh one resumes', async () => {
    const server = servers.trusted_proxy;
    const { exp, refusedAt } = expiringIn(2000);
    const expiring = await adminBearer(exp);
    await expectClosedAtExpiry(server, expiring, await adminBearer(), refusedAt);

    await expectUnauthorized(await post(server, '/api/v1/watch', WATCH, expiring));
    // Notify and the admin endpoints judge exp on every request, as before.
    await expectUnauthorized(await post(server, '/api/v1/notification', NOTIFICATION, expiring));
    await expectUnauthorized(
      await fetch(`${server.url}/api/v1/admin/wipe/all`, { method: 'DELETE', headers: { authorization: expiring } }),
    );

    const resumed = await SseClient.open(
      `${server.url}/api/v1/watch`,
      { ...WATCH, from_id: '2' },
      { headers: { authorization: await adminBearer() } },
    );
    try {
      expect(resumed.status).toBe(200);
      expect((await resumed.next())?.json.type).toBe('replay_started');
    } finally {
      resumed.close();
    }
    expect(fake.callCount).toBe(0);
  }, 30_000);

  it('direct: the JWT auth-o-tron returned for Basic credentials; the same JWT then gets 401, the credentials a fresh one', async () => {
    const server = servers.direct;
    const { exp, refusedAt } = expiringIn(2000);
    fake.setIssuedExp(exp);
    await expectClosedAtExpiry(server, FAKE_USERS.reader.authorization, FAKE_USERS.admin.authorization, refusedAt);

    // A JWT auth-o-tron issues for these credentials with that exp, presented again as a bearer
    // token (auth-o-tron echoes it): refused by the server.
    const answer = await fetch(`${fake.url}/authenticate`, { headers: { authorization: FAKE_USERS.reader.authorization } });
    const expired = answer.headers.get('authorization') ?? '';
    expect(expired).toMatch(/^Bearer /);
    await expectUnauthorized(await post(server, '/api/v1/watch', WATCH, expired));

    // The same Basic credentials get a fresh JWT from auth-o-tron: the client resumes.
    fake.setIssuedExp(undefined);
    const resumed = await SseClient.open(
      `${server.url}/api/v1/watch`,
      { ...WATCH, from_id: '2' },
      { headers: { authorization: FAKE_USERS.reader.authorization } },
    );
    try {
      expect(resumed.status).toBe(200);
      expect((await resumed.next())?.json.type).toBe('replay_started');
    } finally {
      resumed.close();
    }
  }, 30_000);
});
