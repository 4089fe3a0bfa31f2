import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWT_SECRET, LOCAL_REALM, signToken } from '../../../../test/support/fake-auth-o-tron.js';
import { serverConfig } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { AuthError, AvisoClient, BearerAuth, type WatchStatus } from '../../src/index.js';
import { take } from '../support/take.js';

/**
 * What the client does when the server ends a watch because its JWT expired (docs/design/rules/browser.md §6:
 * `end_of_stream`, cause `token_expired`), against the real server in trusted-proxy mode. By
 * docs/design/rules/client.md §3 it reconnects from its cursor; the expired token gets a 401, the provider is
 * refreshed once, and a fresh token resumes the watch without a gap. A token that cannot be
 * refreshed ends in `AuthError` (the second 401).
 */
const EVENT = 'private_feed';
const IDENT = { name: 'n1' };
let server: RunningServer;

beforeAll(async () => {
  server = await startServer({
    config: serverConfig({
      notification_schema: {
        [EVENT]: {
          topic: { base: 'privfeed', key_order: ['name'] },
          identifier: { name: { type: 'StringHandler', required: true } },
          auth: { required: true },
        },
      },
      auth: { enabled: true, mode: 'trusted_proxy', jwt_secret: JWT_SECRET, admin_roles: { [LOCAL_REALM]: ['admin'] } },
      watch_endpoint: { sse_heartbeat_interval_sec: 1 },
    }),
  });
});
afterAll(() => server?.stop());

const CLAIMS = { sub: 'admin-user', username: 'admin-user', realm: LOCAL_REALM, roles: ['admin'] };

/** A token the server refuses about 2 s from now (exp + 61 s, docs/design/rules/operations.md §2.5). */
function expiringSoon(): Promise<string> {
  return signToken({ ...CLAIMS, exp: Math.ceil((Date.now() + 2000) / 1000) - 61 });
}

async function until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const reasons = (statuses: readonly WatchStatus[]): string[] => statuses.flatMap((s) => (s.type === 'reconnecting' ? [s.reason] : []));

describe('a watch whose token expires (docs/design/rules/browser.md §6, docs/design/rules/client.md §3)', () => {
  it('reconnects, refreshes its credential after the 401 and resumes without a gap', async () => {
    const publisher = new AvisoClient({ baseUrl: server.url, auth: new BearerAuth(await signToken(CLAIMS)) });
    const minted: string[] = [];
    const auth = new BearerAuth(async () => {
      const token = minted.length === 0 ? await expiringSoon() : await signToken(CLAIMS);
      minted.push(token);
      return token;
    });
    const statuses: WatchStatus[] = [];
    const stream = new AvisoClient({ baseUrl: server.url, auth }).watch({
      eventType: EVENT,
      identifier: IDENT,
      heartbeatIntervalMs: 1000,
      onStatus: (s) => statuses.push(s),
    });
    try {
      await stream.ready;
      await publisher.notify({ eventType: EVENT, identifier: IDENT, payload: 'one' });
      expect(await take(stream, 1)).toEqual([1]);
      await until(() => reasons(statuses).includes('end_of_stream (token_expired)'), 'the token_expired close');
      await publisher.notify({ eventType: EVENT, identifier: IDENT, payload: 'two' });
      expect(await take(stream, 1)).toEqual([2]);
      expect(reasons(statuses)).toEqual(['end_of_stream (token_expired)', '401, credential refreshed']);
      expect(minted).toHaveLength(2);
    } finally {
      stream.close();
    }
  }, 30_000);

  it('a fixed token that expired ends the watch with AuthError after the second 401', async () => {
    const statuses: WatchStatus[] = [];
    const stream = new AvisoClient({ baseUrl: server.url, auth: new BearerAuth(await expiringSoon()) }).watch({
      eventType: EVENT,
      identifier: IDENT,
      heartbeatIntervalMs: 1000,
      onStatus: (s) => statuses.push(s),
    });
    try {
      await stream.ready;
      await expect(stream.next()).rejects.toBeInstanceOf(AuthError);
      expect(reasons(statuses)).toEqual(['end_of_stream (token_expired)', '401, credential refreshed']);
    } finally {
      stream.close();
    }
  }, 30_000);
});
