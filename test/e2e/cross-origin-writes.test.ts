import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CROSS_ORIGIN_REFUSAL } from '../support/cross-origin.js';
import { eventually } from '../support/eventually.js';
import { UUID_V4, request } from '../support/http.js';
import { EVERY_CLIENT_ERROR_LINE, MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import type { SseEventQueue } from '../support/sse-event-queue.js';
import { SseClient } from '../support/sse-client.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { http2Client, https1Client, type ProtocolClient } from '../support/tls-clients.js';

/**
 * docs/security.md, "Cross-site writes": a request that would change state, sent by a page on an
 * origin the CORS policy does not allow, is refused with 403 before anything runs; non-browser
 * clients (no Origin, no Sec-Fetch-Site), the server's own pages and allowed origins are served.
 * On a plain server (fetch) and a TLS one (HTTP/2 and HTTP/1.1), CORS listing one origin. The
 * servers' `base_url` is loopback, so the address the tests reach them at is their own (D46);
 * dns-rebinding.test.ts covers a public `base_url` and other `Host` values.
 */
const ALLOWED = 'https://console.example.org';
const REFUSED = 'https://stranger.example';

interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown>;
  readonly requestId: string | undefined;
}

/** One way of talking to a server: `send` a request, `origin` the server's own as this client reaches it. */
interface Transport {
  readonly name: string;
  readonly origin: string;
  send(method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<Answer>;
  stream(path: string, body: unknown, headers: Record<string, string>): Promise<SseEventQueue & { status: number; close(): void }>;
  close(): void;
}

function fetchTransport(server: RunningServer): Transport {
  return {
    name: 'plain HTTP/1.1',
    origin: server.url,
    async send(method, path, body, headers) {
      // fetch would label a string body text/plain; the TLS clients send JSON's type, as here.
      const typed = body === undefined ? headers : { 'content-type': 'application/json', ...headers };
      const response = await request(`${server.url}${path}`, { method, ...(body === undefined ? {} : { body }), headers: typed });
      return { status: response.status, json: response.json, requestId: response.headers.get('x-request-id') ?? undefined };
    },
    stream: (path, body, headers) => SseClient.open(`${server.url}${path}`, body, { headers }),
    close: () => undefined,
  };
}

function tlsTransport(name: string, client: ProtocolClient, origin: string): Transport {
  return {
    name,
    origin,
    async send(method, path, body, headers) {
      const response = await client.request(path, { method, ...(body === undefined ? {} : { body }), headers });
      const requestId = response.headers['x-request-id'];
      return { status: response.status, json: response.json, requestId: typeof requestId === 'string' ? requestId : undefined };
    },
    stream: (path, body, headers) => client.stream(path, body, headers),
    close: () => client.close(),
  };
}

/** Every route that changes state, with a body it accepts. */
const WRITES: readonly (readonly [method: string, path: string, body: string | undefined])[] = [
  ['POST', '/api/v1/notification', JSON.stringify(MARS_EXAMPLE)],
  ['DELETE', '/api/v1/admin/notification/mars@1', undefined],
  ['DELETE', '/api/v1/admin/wipe/stream', JSON.stringify({ stream_name: 'mars' })],
  ['DELETE', '/api/v1/admin/wipe/all', undefined],
  ['POST', '/api/v1/admin/reload', undefined],
  ['DELETE', '/api/v1/admin/streams/00000000-0000-4000-8000-000000000000', undefined],
];

/**
 * What a page on a refused origin can make a browser send without a preflight, and its `null`-origin and
 * header-only forms; and the server's own origin with the other scheme, which `Sec-Fetch-Site: same-origin`
 * no longer vouches for (behind a proxy that terminates TLS, `base_url` names the public origin: D46).
 */
function refusedContexts(transport: Transport): readonly Record<string, string>[] {
  const otherScheme = transport.origin.replace(/^http(s?):/, (_all, tls: string) => (tls ? 'http:' : 'https:'));
  return [
    { origin: REFUSED },
    { origin: REFUSED, 'content-type': 'text/plain' },
    { origin: REFUSED, 'sec-fetch-site': 'cross-site' },
    { origin: 'null' },
    { origin: 'null', 'sec-fetch-site': 'cross-site' },
    { origin: 'null', 'sec-fetch-site': 'same-origin' },
    { origin: otherScheme, 'sec-fetch-site': 'same-origin' },
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site' },
  ];
}

/** Log events of the handlers of WRITES: none may appear for a refused request. */
function handlerEvents(server: RunningServer, from: number): unknown[] {
  return server.logs
    .slice(from)
    .map((line) => line.attributes?.['event.name'])
    .filter((name) => typeof name === 'string' && /^(api\.notification|api\.request|admin\.|configuration\.reload)/.test(name));
}

function expectRefused(answer: Answer, context: string): void {
  expect(answer.status, context).toBe(403);
  expect(answer.json, context).toEqual({ ...CROSS_ORIGIN_REFUSAL, request_id: answer.requestId });
  expect(answer.requestId, context).toMatch(UUID_V4);
}

/** The checks for one transport to one server whose CORS lists ALLOWED. */
function describeTransport(transportOf: () => Transport, serverOf: () => RunningServer): void {
  let transport: Transport;
  beforeAll(() => {
    transport = transportOf();
  });
  afterAll(() => transport?.close());

  const marker = (step: string) => ({ ...MARS_EXAMPLE, identifier: { ...MARS_EXAMPLE.identifier, step } });
  /** How many notifications a replay finds for `marker(step)`. */
  const stored = async (step: string): Promise<number> => {
    const replay = await transport.stream('/api/v1/replay', { event_type: 'mars', identifier: marker(step).identifier, from_id: '1' }, {});
    return (await replay.rest()).filter((event) => event.json.specversion).length;
  };

  it('refuses every state-changing route from a refused origin, a null origin or a cross-site fetch, and runs nothing', async () => {
    const server = serverOf();
    // Something for the admin routes to delete, were they to run.
    await transport.send('DELETE', '/api/v1/admin/wipe/all', undefined, {});
    const logged = server.waitForLog('api.notification.processed');
    const kept = await transport.send('POST', '/api/v1/notification', JSON.stringify(marker('1')), {});
    expect(kept.status).toBe(200);
    await logged;
    const from = server.logs.length;
    const contexts = refusedContexts(transport);
    for (const [method, path, body] of WRITES) {
      for (const headers of contexts) {
        const notifyBody = path === '/api/v1/notification' ? JSON.stringify(marker('2')) : body;
        expectRefused(await transport.send(method, path, notifyBody, headers), `${method} ${path} ${JSON.stringify(headers)}`);
      }
    }
    // Each refusal is logged; once the last one is in, any handler's line would be too.
    const refusals = (): number =>
      server.logs.slice(from).filter((line) => line.attributes?.['event.name'] === 'http.request.cross_origin.refused').length;
    await eventually('every refusal logged', () => refusals() >= WRITES.length * contexts.length);
    expect(refusals()).toBe(WRITES.length * contexts.length);
    expect(handlerEvents(server, from)).toEqual([]);
    // Nothing was wiped or deleted, nothing refused was stored.
    expect(await stored('1')).toBe(1);
    expect(await stored('2')).toBe(0);
  });

  it('serves every state-changing route from an allowed origin, its own origin, a same-origin or user-initiated fetch, and a client without Origin', async () => {
    const allowedContexts: Record<string, string>[] = [
      {},
      { origin: ALLOWED },
      { origin: ALLOWED, 'sec-fetch-site': 'cross-site' },
      { origin: transport.origin },
      { origin: transport.origin, 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none' },
    ];
    for (const [method, path, body] of WRITES) {
      for (const headers of allowedContexts) {
        const answer = await transport.send(method, path, body, headers);
        const context = `${method} ${path} ${JSON.stringify(headers)} → ${answer.status} ${JSON.stringify(answer.json)}`;
        // The route's own answer: stored, wiped, reloaded, or (a deleted id) not found.
        expect([200, 404], context).toContain(answer.status);
      }
    }
  });

  it('lets a refused origin open POST and GET streams: reads, which CORS keeps it from reading', async () => {
    const body = { event_type: 'mars', identifier: { class: 'od' } };
    const contexts: Record<string, string>[] = [
      { origin: REFUSED },
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'null', 'content-type': 'text/plain' },
    ];
    for (const headers of contexts) {
      for (const path of ['/api/v1/watch', '/api/v1/replay']) {
        const stream = await transport.stream(path, path.endsWith('replay') ? { ...body, from_id: '1' } : body, headers);
        stream.close();
        expect(stream.status, `${path} ${JSON.stringify(headers)}`).toBe(200);
      }
    }
  });
}

describe('a plain server with allowed origins', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', cors: { allowed_origins: [ALLOWED] } },
        // Every refusal of a burst is counted in the log.
        logging: EVERY_CLIENT_ERROR_LINE,
      }),
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  describeTransport(
    () => fetchTransport(server),
    () => server,
  );
});

describe('a TLS server with allowed origins', () => {
  let certificates: TestCertificates;
  let server: RunningServer;
  beforeAll(async () => {
    certificates = createTestCertificates();
    server = await startServer({
      config: withTls(serverConfig({ logging: EVERY_CLIENT_ERROR_LINE }), certificates, { cors: { allowed_origins: [ALLOWED] } }),
    });
  });
  afterAll(async () => {
    await server?.stop();
    certificates?.remove();
  });

  const origin = () => `https://localhost:${server.port}`;
  describe('over HTTP/2', () => {
    describeTransport(
      () => tlsTransport('HTTP/2', http2Client(origin(), certificates.ca), origin()),
      () => server,
    );
  });
  describe('over HTTP/1.1', () => {
    describeTransport(
      () => tlsTransport('HTTP/1.1', https1Client(origin(), certificates.ca), origin()),
      () => server,
    );
  });
});

describe('a server without allowed origins (the default)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ config: serverConfig({ logging: EVERY_CLIENT_ERROR_LINE }) });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses a foreign origin, serves its own origin and a client without Origin', async () => {
    const transport = fetchTransport(server);
    for (const [method, path, body] of WRITES) {
      expectRefused(await transport.send(method, path, body, { origin: ALLOWED }), `${method} ${path}`);
      expect([200, 404]).toContain(
        (await transport.send(method, path, body, { origin: server.url, 'sec-fetch-site': 'same-origin' })).status,
      );
      expect([200, 404]).toContain((await transport.send(method, path, body, {})).status);
    }
  });
});
