import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listStreams, only } from '../support/admin-streams.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * The `client_address` of the admin streams list (D49) against the real server process: the
 * connection's peer, unless `application.trusted_proxies` lists that peer; then the client its
 * `X-Forwarded-For` names (the last address in it that is not itself a listed proxy).
 */

const WATCH = { event_type: 'mars', identifier: { class: 'od' } };
const LOOPBACK = /^(127\.0\.0\.1|::ffff:127\.0\.0\.1)$/;

describe('client_address', () => {
  let plain: RunningServer;
  let proxied: RunningServer;
  const clients: SseClient[] = [];
  const open = async (server: RunningServer, forwardedFor?: string): Promise<string> => {
    const client = await SseClient.open(`${server.url}/api/v1/watch`, WATCH, {
      headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    });
    clients.push(client);
    expect(client.status, client.errorBody).toBe(200);
    return client.headers.get('x-request-id') as string;
  };
  const addressOf = async (server: RunningServer, id: string): Promise<string> => only(await listStreams(server), id).client_address;

  beforeAll(async () => {
    [plain, proxied] = await Promise.all([
      startServer({ config: serverConfig() }),
      startServer({
        config: serverConfig({
          application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', trusted_proxies: ['127.0.0.1', '10.1.0.0/16'] },
        }),
      }),
    ]);
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all([plain?.stop(), proxied?.stop()]);
  });

  it('is the peer address, X-Forwarded-For ignored, when no proxy is trusted', async () => {
    expect(await addressOf(plain, await open(plain, '203.0.113.9'))).toMatch(LOOPBACK);
  });

  it('is the forwarded client behind a trusted proxy, skipping the proxies it lists', async () => {
    expect(await addressOf(proxied, await open(proxied, '203.0.113.9'))).toBe('203.0.113.9');
    // Read from the right: 10.1.2.3 is a trusted proxy too, 198.51.100.1 the first that is not.
    expect(await addressOf(proxied, await open(proxied, '192.0.2.1, 198.51.100.1, 10.1.2.3'))).toBe('198.51.100.1');
    expect(await addressOf(proxied, await open(proxied))).toMatch(LOOPBACK);
  });
});
