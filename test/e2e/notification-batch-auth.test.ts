import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_REALM, signToken, trustedProxyAuth } from '../support/fake-auth-o-tron.js';
import { postJson } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';

/**
 * Batch notify under authentication (D48, docs/design/rules/operations.md §2.7): each item is
 * checked against the write roles of its own event type, exactly as the same notification sent
 * alone, so one batch may hold items a caller may write and items it may not.
 */

function stream(base: string, auth?: Record<string, unknown>): Record<string, unknown> {
  return {
    topic: { base, key_order: ['name'] },
    identifier: { name: { type: 'StringHandler', required: true } },
    ...(auth ? { auth } : {}),
  };
}

const SCHEMAS = {
  pub: stream('pub'),
  write_roles_only: stream('writeroles', { required: true, write_roles: { [LOCAL_REALM]: ['producer'] } }),
  admins_write: stream('adminswrite', { required: true }),
};

const ITEMS = [
  { event_type: 'pub', identifier: { name: 'a' } },
  { event_type: 'write_roles_only', identifier: { name: 'b' } },
  { event_type: 'admins_write', identifier: { name: 'c' } },
  { event_type: 'write_roles_only', identifier: { name: 'd' } },
];

let server: RunningServer;
const callers: Record<string, Record<string, string>> = { anonymous: {} };

beforeAll(async () => {
  server = await startServer({ config: serverConfig({ notification_schema: SCHEMAS, auth: trustedProxyAuth() }) });
  for (const [name, roles] of [
    ['reader', ['reader']],
    ['producer', ['producer']],
    ['admin', ['admin']],
  ] as const) {
    const token = await signToken({ sub: name, username: name, realm: LOCAL_REALM, roles: [...roles], attributes: {} });
    callers[name] = { authorization: `Bearer ${token}` };
  }
});
afterAll(async () => {
  await server?.stop();
});

describe('batch notify checks the write roles of each item', () => {
  it.each([
    ['anonymous', 207],
    ['reader', 207],
    ['producer', 207],
    ['admin', 200],
  ])('%s: every item answered as the single endpoint answers it', async (caller, status) => {
    const headers = callers[caller] as Record<string, string>;
    const alone: Record<string, unknown>[] = [];
    for (const item of ITEMS) {
      const response = await postJson(`${server.url}/api/v1/notification`, item, headers);
      const { request_id: _id, processed_at: _at, ...body } = response.json;
      alone.push({ ...body, http_status: response.status });
    }
    const batch = await postJson(`${server.url}/api/v1/notification/batch`, ITEMS, headers);
    expect(batch.status, batch.text).toBe(status);
    const results = (batch.json.results as Record<string, unknown>[]).map(
      ({ index: _index, request_id: _id, processed_at: _at, ...body }) => body,
    );
    expect(results).toEqual(alone.map(({ http_status: _status, ...body }) => body));
    // The codes are the refusals notify gives: 401 for the anonymous caller, 403 for the others.
    const codes = (batch.json.results as Record<string, unknown>[]).map((result) => result.code ?? result.status);
    expect(codes).toEqual(alone.map((body) => (body.http_status === 200 ? 'success' : body.code)));
  });

  it('answers 400 when every item was refused by auth, and stores nothing', async () => {
    const refused = ITEMS.filter((item) => item.event_type !== 'pub');
    const batch = await postJson(`${server.url}/api/v1/notification/batch`, refused);
    expect(batch.status, batch.text).toBe(400);
    expect(batch.json).toMatchObject({ status: 'error', stored: 0, failed: 3 });
    expect((batch.json.results as Record<string, unknown>[]).map((result) => result.code)).toEqual([
      'UNAUTHORIZED',
      'UNAUTHORIZED',
      'UNAUTHORIZED',
    ]);
  });

  it('refuses a bad token for the whole batch, as the authentication of every /api/v1 request does', async () => {
    const batch = await postJson(`${server.url}/api/v1/notification/batch`, ITEMS, { authorization: 'Bearer not-a-token' });
    expect(batch.status).toBe(401);
    expect(batch.json.code).toBe('UNAUTHORIZED');
    expect(batch.json.results).toBeUndefined();
  });
});
