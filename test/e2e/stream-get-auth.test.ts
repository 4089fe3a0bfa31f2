import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_REALM, signToken, trustedProxyAuth } from '../support/fake-auth-o-tron.js';
import { call, queryOf } from '../support/get-streams.js';
import { postJson } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * `auth.browser_cookie` (docs/design/rules/browser.md §1) against the real server process: the bearer token is also
 * read from the cookie on GET streams only; never on POST streams or notify; never from the URL.
 */

describe('auth.browser_cookie', () => {
  const COOKIE = 'aviso_token';
  const PRIVATE = { event_type: 'private', identifier: { name: 'x' } };
  const schemas = {
    private: {
      topic: { base: 'private', key_order: ['name'] },
      identifier: { name: { type: 'StringHandler', required: true } },
      auth: { required: true, read_roles: { [LOCAL_REALM]: ['reader'] } },
    },
  };
  let withCookie: RunningServer;
  let withoutCookie: RunningServer;
  let token = '';
  beforeAll(async () => {
    [withCookie, withoutCookie] = await Promise.all([
      startServer({ config: serverConfig({ notification_schema: schemas, auth: trustedProxyAuth({ browser_cookie: COOKIE }) }) }),
      startServer({ config: serverConfig({ notification_schema: schemas, auth: trustedProxyAuth() }) }),
    ]);
    token = await signToken({ sub: 'reader', username: 'reader', realm: LOCAL_REALM, roles: ['reader'], attributes: {} });
  });
  afterAll(async () => {
    await Promise.all([withCookie?.stop(), withoutCookie?.stop()]);
  });

  const cookie = (value: string) => ({ cookie: `theme=dark; ${COOKIE}=${value}; other=1` });

  it('opens a GET stream with the token read from the cookie', async () => {
    for (const endpoint of ['watch', 'replay'] as const) {
      const client = await SseClient.openGet(
        `${withCookie.url}/api/v1/${endpoint}?${queryOf({ ...PRIVATE, from_id: '1' })}`,
        cookie(token),
      );
      expect(client.status, client.errorBody).toBe(200);
      client.close();
    }
  });

  it('refuses a GET stream without credentials, and one whose cookie holds a bad token', async () => {
    const query = queryOf(PRIVATE);
    expect((await call(`${withCookie.url}/api/v1/watch?${query}`)).status).toBe(401);
    expect((await call(`${withCookie.url}/api/v1/watch?${query}`, { headers: cookie('not-a-jwt') })).status).toBe(401);
  });

  it('lets an Authorization header win over the cookie', async () => {
    const answer = await call(`${withCookie.url}/api/v1/watch?${queryOf(PRIVATE)}`, {
      headers: { ...cookie(token), authorization: 'Bearer not-a-jwt' },
    });
    expect(answer.status).toBe(401);
  });

  it('ignores the cookie on POST streams and on notify', async () => {
    for (const endpoint of ['watch', 'replay'] as const) {
      const answer = await call(`${withCookie.url}/api/v1/${endpoint}`, {
        method: 'POST',
        body: JSON.stringify({ ...PRIVATE, from_id: '1' }),
        headers: cookie(token),
      });
      expect(answer.status).toBe(401);
    }
    const notified = await postJson(`${withCookie.url}/api/v1/notification`, { ...PRIVATE, payload: 1 }, cookie(token));
    expect(notified.status).toBe(401);
  });

  it('is off by default: the cookie is not read', async () => {
    const answer = await call(`${withoutCookie.url}/api/v1/watch?${queryOf(PRIVATE)}`, { headers: cookie(token) });
    expect(answer.status).toBe(401);
  });

  it('never takes a token from the URL', async () => {
    for (const name of ['token', 'access_token']) {
      const answer = await call(`${withCookie.url}/api/v1/watch?${queryOf(PRIVATE)}&${name}=${token}`);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text).code).toBe('UNKNOWN_FIELD');
    }
  });
});
