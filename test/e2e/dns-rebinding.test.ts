import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CROSS_ORIGIN_REFUSAL } from '../support/cross-origin.js';
import { requestOnNewConnection, UUID_V4, type JsonResponse } from '../support/http.js';
import { MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * Issue 30, D46, docs/security.md "DNS rebinding": a page on evil.example whose name re-resolves
 * to the server's address sends `Host: evil.example:PORT` and `Origin: http://evil.example:PORT`.
 * The server's own origins come from `application.base_url` and `application.additional_origins`,
 * never from `Host`, so with auth off such a write is refused like any cross-origin one, while the
 * server's own pages and every client without `Origin` are served whatever `Host` they send.
 */
const PUBLIC = 'https://aviso.example.org';
const FURTHER = 'https://aviso.example.int';
const NOTIFY = '/api/v1/notification';
const WIPE_ALL = '/api/v1/admin/wipe/all';

/** A notification told apart from the others by its `step`. */
const marked = (step: number) => ({ ...MARS_EXAMPLE, identifier: { ...MARS_EXAMPLE.identifier, step: String(step) } });
const KEPT = 1;
const REBOUND = 2;

function notify(server: RunningServer, step: number, headers: Record<string, string>): Promise<JsonResponse> {
  return requestOnNewConnection(`${server.url}${NOTIFY}`, { method: 'POST', body: JSON.stringify(marked(step)), headers });
}

function wipeAll(server: RunningServer, headers: Record<string, string>): Promise<JsonResponse> {
  return requestOnNewConnection(`${server.url}${WIPE_ALL}`, { method: 'DELETE', headers });
}

/** How many notifications a replay finds for `marked(step)`. */
async function stored(server: RunningServer, step: number): Promise<number> {
  const replay = await SseClient.open(`${server.url}/api/v1/replay`, {
    event_type: 'mars',
    identifier: marked(step).identifier,
    from_id: '1',
  });
  return (await replay.rest()).filter((event) => event.json.specversion).length;
}

function expectRefused(answer: JsonResponse, context: string): void {
  expect(answer.status, `${context} → ${answer.text}`).toBe(403);
  expect(answer.json, context).toEqual({ ...CROSS_ORIGIN_REFUSAL, request_id: answer.headers.get('x-request-id') });
  expect(answer.json.request_id, context).toMatch(UUID_V4);
}

function expectServed(answer: JsonResponse, context: string): void {
  expect(answer.status, `${context} → ${answer.text}`).toBe(200);
}

/** What a rebound page's browser sends: its own name as `Host` and as `Origin`, in the forms a page can pick. */
function rebindingContexts(port: number): Record<string, string>[] {
  const host = `evil.example:${port}`;
  const origin = `http://${host}`;
  return [
    { host, origin },
    { host, origin, 'content-type': 'text/plain' },
    // Were the browser to send Fetch Metadata here, it would say same-origin: the page asked for its own name.
    { host, origin, 'sec-fetch-site': 'same-origin' },
    // A form under `Referrer-Policy: no-referrer`.
    { host, origin: 'null', 'sec-fetch-site': 'same-origin' },
  ];
}

describe('auth off, base_url the public origin behind a proxy, one further origin listed', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      config: serverConfig({ application: { host: '127.0.0.1', port: 0, base_url: PUBLIC, additional_origins: [FURTHER] } }),
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses the rebound page’s notify and wipe, logs them, and stores or wipes nothing', async () => {
    expectServed(await wipeAll(server, {}), 'a clean start');
    expectServed(await notify(server, KEPT, {}), 'the notification a wipe would remove');
    const from = server.logs.length;
    const contexts = rebindingContexts(server.port);
    for (const headers of contexts) {
      expectRefused(await notify(server, REBOUND, headers), `notify ${JSON.stringify(headers)}`);
      expectRefused(await wipeAll(server, headers), `wipe ${JSON.stringify(headers)}`);
    }
    const refusal = await server.waitForLog('http.request.cross_origin.refused', { from });
    expect(refusal.attributes).toMatchObject({
      method: 'POST',
      path: NOTIFY,
      origin: `http://evil.example:${server.port}`,
      host: `evil.example:${server.port}`,
    });
    expect(await stored(server, KEPT)).toBe(1);
    expect(await stored(server, REBOUND)).toBe(0);
  });

  it('serves base_url’s origin and the further one, whatever Host the proxy passes', async () => {
    const hosts = ['aviso.example.org', `127.0.0.1:${server.port}`, `evil.example:${server.port}`];
    for (const origin of [PUBLIC, FURTHER]) {
      for (const host of hosts) {
        expectServed(await notify(server, 10, { host, origin }), `${origin} via ${host}`);
        expectServed(await notify(server, 10, { host, origin, 'sec-fetch-site': 'same-origin' }), `${origin} via ${host}, same-origin`);
      }
    }
    // Two origins, each through every Host, with and without Sec-Fetch-Site: all stored.
    expect(await stored(server, 10)).toBe(2 * hosts.length * 2);
  });

  it('refuses what only Host made its own before: the address it listens on, the public name over http, another port', async () => {
    const origins = [
      `http://127.0.0.1:${server.port}`,
      `http://localhost:${server.port}`,
      'http://aviso.example.org',
      'https://aviso.example.org:8443',
    ];
    for (const origin of origins) {
      const host = new URL(origin).host;
      expectRefused(await notify(server, 20, { host, origin }), `${origin} via its own Host`);
    }
  });

  it('serves every request without Origin whatever its Host: clients, curl, providers', async () => {
    const hosts = [`evil.example:${server.port}`, 'aviso.example.org', 'aviso-internal:8000', `127.0.0.1:${server.port}`];
    for (const [index, host] of hosts.entries()) expectServed(await notify(server, 30 + index, { host }), `notify via ${host}`);
    expect(await stored(server, 30)).toBe(1);
    expectServed(await wipeAll(server, { host: `evil.example:${server.port}` }), 'wipe without Origin');
    expect(await stored(server, 30)).toBe(0);
  });
});

describe('auth off, a developer’s server on loopback (base_url http://localhost:8000)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ config: serverConfig() });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses a page rebound to 127.0.0.1, and wipes nothing', async () => {
    expectServed(await notify(server, KEPT, {}), 'the notification a wipe would remove');
    for (const headers of rebindingContexts(server.port)) {
      expectRefused(await notify(server, REBOUND, headers), `notify ${JSON.stringify(headers)}`);
      expectRefused(await wipeAll(server, headers), `wipe ${JSON.stringify(headers)}`);
    }
    expect(await stored(server, KEPT)).toBe(1);
    expect(await stored(server, REBOUND)).toBe(0);
  });

  it('serves every loopback name at the listening port and at base_url’s, and refuses another port', async () => {
    const names = ['localhost', '127.0.0.1', '[::1]'];
    for (const name of names) {
      for (const port of [server.port, 8000]) {
        const origin = `http://${name}:${port}`;
        expectServed(await notify(server, 40, { host: `127.0.0.1:${server.port}`, origin }), origin);
      }
    }
    const otherPort = server.port === 8001 ? 8002 : 8001;
    expectRefused(await notify(server, 40, { origin: `http://localhost:${otherPort}` }), 'another local port');
    expectRefused(await notify(server, 40, { origin: `https://localhost:${server.port}` }), 'https on a plain port');
  });
});

describe('application.additional_origins and reload', () => {
  let server: RunningServer;
  const config = (additional: string[]) =>
    serverConfig({ application: { host: '127.0.0.1', port: 0, base_url: PUBLIC, additional_origins: additional } });
  beforeAll(async () => {
    server = await startServer({ config: config([FURTHER]) });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('takes effect at the next restart, as cors does: a reload reports it and keeps the running list', async () => {
    const added = 'https://added.example.org';
    server.rewriteConfig(config([FURTHER, added]));
    const reload = await requestOnNewConnection(`${server.url}/api/v1/admin/reload`, { method: 'POST' });
    expectServed(reload, 'reload');
    expect(reload.json.restart_required).toEqual(['application.additional_origins']);
    expectRefused(await notify(server, 50, { origin: added }), 'the origin added by the reload');
    expectServed(await notify(server, 50, { origin: FURTHER }), 'the origin listed at startup');
  });
});
