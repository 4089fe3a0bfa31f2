import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UUID_V4, postJson, request } from '../support/http.js';
import { findFreePort } from '../support/ports.js';
import { MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';
import { TRANSCRIPT_REQUEST } from '../support/transcript.js';

/** docs/design/rules/browser.md §2: CORS for `/api/v1/*`, off unless `application.cors.allowed_origins` lists origins. */
const CONSOLE = 'https://console.example.org';
const STRANGER = 'https://stranger.example';

function corsHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => name.startsWith('access-control-')));
}

/** The preflight a browser sends before a JSON POST with a bearer token. */
function preflight(url: string, origin: string, method = 'POST') {
  return request(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' },
  });
}

const streams: SseClient[] = [];
afterEach(() => {
  for (const stream of streams.splice(0)) stream.close();
});
async function watch(server: RunningServer, headers: Record<string, string>): Promise<SseClient> {
  const stream = await SseClient.open(`${server.url}/api/v1/watch`, TRANSCRIPT_REQUEST, { headers });
  streams.push(stream);
  return stream;
}

describe('with allowed origins listed', () => {
  let server: RunningServer;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await findFreePort();
    server = await startServer({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', cors: { allowed_origins: [CONSOLE] } },
        metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
        // Preflights' access lines are checked below (D34 makes them debug lines by default).
        logging: { access_log: 'info' },
      }),
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers the preflight of a JSON POST with Authorization for a listed origin', async () => {
    const response = await preflight(`${server.url}/api/v1/notification`, CONSOLE);
    expect(response.status).toBe(204);
    expect(corsHeaders(response.headers)).toEqual({
      'access-control-allow-origin': CONSOLE,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, HEAD, POST, DELETE',
      'access-control-allow-headers': 'Authorization, Content-Type, Last-Event-ID, Idempotency-Key',
      'access-control-expose-headers': 'X-Request-ID, Idempotent-Replayed, Retry-After',
      'access-control-max-age': '600',
    });
    expect(response.headers.get('vary')).toContain('Origin');
    expect(response.headers.get('x-request-id')).toMatch(UUID_V4);
  });

  it('lets the listed origin read a notify answer, with credentials and X-Request-ID exposed', async () => {
    const response = await postJson(`${server.url}/api/v1/notification`, MARS_EXAMPLE, {
      origin: CONSOLE,
      'content-type': 'application/json',
    });
    expect(response.status).toBe(200);
    expect(corsHeaders(response.headers)).toEqual({
      'access-control-allow-origin': CONSOLE,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': 'X-Request-ID, Idempotent-Replayed, Retry-After',
    });
  });

  it('lets the listed origin read an error answer', async () => {
    const response = await postJson(`${server.url}/api/v1/notification`, { event_type: 'nope' }, { origin: CONSOLE });
    expect(response.status).toBe(400);
    expect(response.headers.get('access-control-allow-origin')).toBe(CONSOLE);
  });

  it('gives a stream of the listed origin its origin instead of *', async () => {
    const stream = await watch(server, { origin: CONSOLE });
    expect(stream.status).toBe(200);
    expect(corsHeaders(stream.headers)).toEqual({
      'access-control-allow-origin': CONSOLE,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': 'X-Request-ID, Idempotent-Replayed, Retry-After',
    });
    expect((await stream.next())?.json.type).toBe('connection_established');
  });

  it('gives another origin no CORS header at all, and no 5xx', async () => {
    const pre = await preflight(`${server.url}/api/v1/notification`, STRANGER);
    expect(pre.status).toBe(405);
    expect(pre.json).toMatchObject({ code: 'METHOD_NOT_ALLOWED', request_id: pre.headers.get('x-request-id') });
    expect(corsHeaders(pre.headers)).toEqual({});
    // A write from that origin is refused before it runs (docs/security.md, "Cross-site writes").
    const notify = await postJson(`${server.url}/api/v1/notification`, MARS_EXAMPLE, { origin: STRANGER });
    expect(notify.status).toBe(403);
    expect(notify.json).toMatchObject({ code: 'CROSS_ORIGIN_REQUEST_REFUSED', request_id: notify.headers.get('x-request-id') });
    expect(corsHeaders(notify.headers)).toEqual({});
    const stream = await watch(server, { origin: STRANGER });
    expect(stream.status).toBe(200);
    expect(corsHeaders(stream.headers)).toEqual({});
  });

  it('keeps the reference headers for a client that sends no Origin', async () => {
    const stream = await watch(server, {});
    expect(corsHeaders(stream.headers)).toEqual({ 'access-control-allow-origin': '*' });
    const notify = await postJson(`${server.url}/api/v1/notification`, MARS_EXAMPLE);
    expect(corsHeaders(notify.headers)).toEqual({});
  });

  it('adds nothing outside /api/v1/', async () => {
    const health = await request(`${server.url}/health`, { headers: { origin: CONSOLE } });
    expect(health.status).toBe(200);
    expect(corsHeaders(health.headers)).toEqual({});
    const pre = await preflight(`${server.url}/health`, CONSOLE, 'GET');
    expect(pre.status).toBe(405);
    expect(corsHeaders(pre.headers)).toEqual({});
  });

  it('answers an OPTIONS that is no preflight as without CORS', async () => {
    const response = await request(`${server.url}/api/v1/notification`, { method: 'OPTIONS', headers: { origin: CONSOLE } });
    expect(response.status).toBe(405);
    expect(response.json.code).toBe('METHOD_NOT_ALLOWED');
    expect(corsHeaders(response.headers)).toEqual({});
  });

  it('counts and logs a preflight under the route it asks about', async () => {
    const before = server.logs.length;
    expect((await preflight(`${server.url}/api/v1/watch`, CONSOLE)).status).toBe(204);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(
      /aviso_http_requests_total\{[^}]*route="\/api\/v1\/watch"[^}]*method="OPTIONS"[^}]*status_code="204"[^}]*\} [1-9]/,
    );
    expect(metrics).not.toMatch(/route="\*"/);
    const isPreflightLine = (entry: (typeof server.logs)[number]) =>
      entry.attributes?.['event.name'] === 'http.request.completed' && entry.attributes.route === '/api/v1/watch';
    await expect
      .poll(() => server.logs.slice(before).find(isPreflightLine)?.attributes)
      .toMatchObject({
        method: 'OPTIONS',
        route: '/api/v1/watch',
        status_code: 204,
      });
  });
});

describe('with "*" in the list', () => {
  const TRUSTED = 'https://trusted.example';
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', cors: { allowed_origins: ['*', TRUSTED] } },
      }),
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('lets any origin read, without credentials', async () => {
    const pre = await preflight(`${server.url}/api/v1/watch`, STRANGER);
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
    const stream = await watch(server, { origin: STRANGER });
    expect(corsHeaders(stream.headers)).toEqual({
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'X-Request-ID, Idempotent-Replayed, Retry-After',
    });
  });

  it('lets any origin write, as its preflight would let it send JSON', async () => {
    const notify = await postJson(`${server.url}/api/v1/notification`, MARS_EXAMPLE, { origin: STRANGER, 'content-type': 'text/plain' });
    expect(notify.status).toBe(200);
    expect((await postJson(`${server.url}/api/v1/notification`, MARS_EXAMPLE, { origin: 'null' })).status).toBe(200);
  });

  it('still grants credentials to an origin listed by name', async () => {
    const pre = await preflight(`${server.url}/api/v1/watch`, TRUSTED);
    expect(pre.headers.get('access-control-allow-origin')).toBe(TRUSTED);
    expect(pre.headers.get('access-control-allow-credentials')).toBe('true');
  });
});

describe('without allowed origins (the default)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ config: serverConfig() });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('sends no CORS headers, answers OPTIONS with 405, and streams keep Access-Control-Allow-Origin: *', async () => {
    const pre = await preflight(`${server.url}/api/v1/notification`, CONSOLE);
    expect(pre.status).toBe(405);
    expect(corsHeaders(pre.headers)).toEqual({});
    expect(pre.headers.get('vary')).toBeNull();
    const notify = await postJson(`${server.url}/api/v1/notification`, MARS_EXAMPLE, { origin: server.url });
    expect(notify.status).toBe(200);
    expect(corsHeaders(notify.headers)).toEqual({});
    const stream = await watch(server, { origin: CONSOLE });
    expect(corsHeaders(stream.headers)).toEqual({ 'access-control-allow-origin': '*' });
  });
});

describe('with authentication enabled', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', cors: { allowed_origins: [CONSOLE] } },
        auth: {
          enabled: true,
          mode: 'trusted_proxy',
          jwt_secret: 'a-test-secret-of-enough-length-0123456789',
          admin_roles: { localrealm: ['admin'] },
        },
      }),
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers the preflight of an admin call without credentials, and lets the page read the 401', async () => {
    const path = `${server.url}/api/v1/admin/notification/mars@1`;
    const pre = await preflight(path, CONSOLE, 'DELETE');
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(CONSOLE);
    const refused = await request(path, { method: 'DELETE', headers: { origin: CONSOLE } });
    expect(refused.status).toBe(401);
    expect(refused.json.request_id).toBe(refused.headers.get('x-request-id'));
    expect(corsHeaders(refused.headers)).toMatchObject({
      'access-control-allow-origin': CONSOLE,
      'access-control-expose-headers': 'X-Request-ID, Idempotent-Replayed, Retry-After',
    });
  });

  it('refuses a write from another origin before authentication: 403, no credential check', async () => {
    const before = server.logs.length;
    const refused = await request(`${server.url}/api/v1/admin/wipe/all`, {
      method: 'DELETE',
      headers: { origin: STRANGER, authorization: 'Bearer not-even-a-token' },
    });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ code: 'CROSS_ORIGIN_REQUEST_REFUSED', request_id: refused.headers.get('x-request-id') });
    const line = await server.waitForLog('http.request.cross_origin.refused', { from: before });
    expect(line.attributes).toMatchObject({ method: 'DELETE', path: '/api/v1/admin/wipe/all', origin: STRANGER });
    // Matched by request id: the previous test's auth line can reach the log reader after `before` was taken.
    const requestId = refused.headers.get('x-request-id');
    const authLines = server.logs.slice(before).filter((entry) => String(entry.attributes?.['event.name']).startsWith('auth.'));
    expect(authLines.filter((entry) => entry.attributes?.['request_id'] === requestId)).toEqual([]);
  });
});
