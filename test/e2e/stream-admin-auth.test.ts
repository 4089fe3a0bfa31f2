import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeStream, expectErrorBody, listStreams, only } from '../support/admin-streams.js';
import { LOCAL_REALM, signToken, trustedProxyAuth } from '../support/fake-auth-o-tron.js';
import { request } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * The admin streams list and close with authentication on (D49, D12): the admin role as for every
 * `/api/v1/admin` path, `401` without credentials and `403` for a reader, in the standard error
 * body and with nothing of anyone's stream in it; an admin sees each stream's user (its name only,
 * never its token), filters by it, and is logged as the one who closed a stream.
 */

describe('the admin streams list with authentication on', () => {
  let server: RunningServer;
  const clients: SseClient[] = [];
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  let admin: Record<string, string>;
  let reader: Record<string, string>;
  let readerToken = '';
  let readerStream = '';
  let anonymousStream = '';

  beforeAll(async () => {
    server = await startServer({ config: serverConfig({ auth: trustedProxyAuth() }) });
    const token = (name: string, roles: string[]) => signToken({ sub: name, username: name, realm: LOCAL_REALM, roles, attributes: {} });
    admin = bearer(await token('alice-admin', ['admin']));
    readerToken = await token('bob-reader', ['reader']);
    reader = bearer(readerToken);
    const watch = { event_type: 'mars', identifier: { class: 'od', stream: 'secret-filter' } };
    const mine = await SseClient.open(`${server.url}/api/v1/watch`, watch, { headers: reader });
    const anonymous = await SseClient.open(`${server.url}/api/v1/watch`, {
      event_type: 'dissemination',
      identifier: { destination: 'X', class: 'od' },
    });
    clients.push(mine, anonymous);
    expect(mine.status, mine.errorBody).toBe(200);
    expect(anonymous.status, anonymous.errorBody).toBe(200);
    readerStream = mine.headers.get('x-request-id') as string;
    anonymousStream = anonymous.headers.get('x-request-id') as string;
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await server.stop();
  });

  it('answers 401 without credentials and 403 to a reader, with nothing of the streams in the answer', async () => {
    const refusals = [
      [401, 'UNAUTHORIZED', await request(`${server.url}/api/v1/admin/streams`)],
      [403, 'FORBIDDEN', await request(`${server.url}/api/v1/admin/streams?user=bob-reader`, { headers: reader })],
      [401, 'UNAUTHORIZED', await closeStream(server, readerStream)],
      [403, 'FORBIDDEN', await closeStream(server, readerStream, reader)],
      [401, 'UNAUTHORIZED', await request(`${server.url}/api/v1/admin/streams`, { headers: bearer('not-a-jwt') })],
    ] as const;
    for (const [status, code, response] of refusals) {
      expectErrorBody(response, status, code);
      expect(Object.keys(response.json).sort()).toEqual(['code', 'error', 'message', 'request_id']);
      for (const secret of [readerStream, anonymousStream, 'secret-filter', readerToken, 'mars.od'])
        expect(response.text).not.toContain(secret);
    }
    // Refused closes closed nothing.
    expect((await listStreams(server, '', admin)).total).toBe(2);
  });

  it("shows an admin each stream's user (never a credential) and filters by it", async () => {
    const answer = await listStreams(server, '', admin);
    expect(only(answer, readerStream).user).toBe('bob-reader');
    expect(only(answer, anonymousStream).user).toBeNull();
    expect(JSON.stringify(answer)).not.toContain(readerToken);
    const bobs = await listStreams(server, 'user=bob-reader', admin);
    expect(bobs.streams.map((stream) => stream.id)).toEqual([readerStream]);
    expect(bobs).toMatchObject({ total: 1, counts: { dissemination: 1, mars: 1 } });
  });

  it('logs the admin who closed a stream', async () => {
    const from = server.logs.length;
    const response = await closeStream(server, readerStream, admin);
    expect(response.status, response.text).toBe(200);
    expect((await (clients[0] as SseClient).rest()).at(-1)?.json).toMatchObject({ cause: 'operator_closed', reason: 'end_of_stream' });
    const performed = await server.waitForLog('admin.stream.close.performed', { from });
    expect(performed.attributes).toMatchObject({ request_id: readerStream, closed_by: 'alice-admin' });
    const succeeded = await server.waitForLog('admin.stream.close.succeeded', { from });
    expect(succeeded.attributes).toMatchObject({ stream_id: readerStream, closed_by: 'alice-admin' });
  });
});
