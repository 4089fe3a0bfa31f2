import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { queryOf } from '../support/get-streams.js';
import { UUID_V4, postJson } from '../support/http.js';
import { metricSum } from '../support/metric-sum.js';
import { findFreePort } from '../support/ports.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { http2Client, https1Client, type ProtocolClient, type ProtocolStream } from '../support/tls-clients.js';
import { TRANSCRIPT_REQUEST, transcriptNotification } from '../support/transcript.js';

/**
 * The stream limit (D44, docs/operations.md "Capacity planning") against the real server process
 * at `max_streams: 3`: with three streams open, `/health`, `/ready`, `/metrics` and a notify are
 * still answered `200`, and the next stream request, POST or GET, watch or replay, is answered
 * `503 TOO_MANY_STREAMS` with `Retry-After`, counted and logged once; when a stream closes, a new
 * one is accepted again. Over plain HTTP/1.1, and over HTTP/1.1 and HTTP/2 on the TLS port.
 */

const MAX_STREAMS = 3;
/** Three stream connections and a few spare: the probes and the notify must fit in the spare ones. */
const MAX_CONNECTIONS = 8;
const LIMITS = { max_streams: MAX_STREAMS, max_connections: MAX_CONNECTIONS };
const WATCH_QUERY = queryOf(TRANSCRIPT_REQUEST);
const REPLAY_BODY = { ...TRANSCRIPT_REQUEST, from_id: '1' };

interface Refusal {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly requestIdHeader: string | undefined;
  readonly body: Record<string, unknown>;
}

function expectRefusal(refusal: Refusal): void {
  expect(refusal.status).toBe(503);
  expect(refusal.body).toEqual({
    code: 'TOO_MANY_STREAMS',
    error: 'too_many_streams',
    message: `The server holds its limit of ${MAX_STREAMS} streams; retry later`,
    request_id: refusal.requestIdHeader,
  });
  expect(refusal.requestIdHeader).toMatch(UUID_V4);
  const seconds = Number(refusal.retryAfter);
  expect(Number.isInteger(seconds) && seconds >= 5 && seconds <= 15, `Retry-After: ${refusal.retryAfter}`).toBe(true);
}

function refusalLines(server: RunningServer): number {
  return server.logs.filter((line) => line.attributes?.['event.name'] === 'stream.limit.refused').length;
}

async function scrape(metricsPort: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

describe('the stream limit over plain HTTP/1.1', () => {
  let server: RunningServer;
  let metricsPort: number;
  const streams: SseClient[] = [];

  beforeAll(async () => {
    metricsPort = await findFreePort();
    server = await startServer({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', ...LIMITS },
        metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
      }),
    });
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await server?.stop();
  });

  function refusalOf(client: SseClient): Refusal {
    return {
      status: client.status,
      retryAfter: client.headers.get('retry-after') ?? undefined,
      requestIdHeader: client.headers.get('x-request-id') ?? undefined,
      body: JSON.parse(client.errorBody ?? '{}') as Record<string, unknown>,
    };
  }

  it('gives the place of a refused or invalid stream request back: more of them than the limit leave every place free', async () => {
    for (let index = 0; index < 2 * MAX_STREAMS; index++) {
      const invalid = await SseClient.open(`${server.url}/api/v1/watch`, { ...TRANSCRIPT_REQUEST, from_id: 'soon' });
      expect(invalid.status).toBe(400);
      const unknown = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'no_such_type', identifier: {} });
      expect(unknown.status).toBe(400);
    }
    const replays = await Promise.all(
      Array.from({ length: MAX_STREAMS }, () => SseClient.open(`${server.url}/api/v1/replay`, REPLAY_BODY)),
    );
    expect(replays.map((replay) => replay.status)).toEqual(Array.from({ length: MAX_STREAMS }, () => 200));
    // Each replay ends by itself and gives its place back.
    for (const replay of replays) await replay.rest();
  });

  it('answers the probes, /metrics and a notify at the limit, refuses the next stream of each kind, and accepts one again when a stream closes', async () => {
    // The limit reached with both forms: two POST watches and a GET watch.
    streams.push(await SseClient.open(`${server.url}/api/v1/watch`, TRANSCRIPT_REQUEST));
    streams.push(await SseClient.open(`${server.url}/api/v1/watch`, TRANSCRIPT_REQUEST));
    streams.push(await SseClient.openGet(`${server.url}/api/v1/watch?${WATCH_QUERY}`));
    for (const stream of streams) {
      expect(stream.status).toBe(200);
      expect((await stream.next())?.event).toBe('live-notification');
    }

    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    const atLimit = await scrape(metricsPort);
    expect(metricSum(atLimit, 'aviso_sse_connections_active')).toBe(MAX_STREAMS);
    expect(metricSum(atLimit, 'aviso_sse_max_streams')).toBe(MAX_STREAMS);
    const notified = await postJson(`${server.url}/api/v1/notification`, transcriptNotification('at the limit'));
    expect(notified.status, notified.text).toBe(200);
    // The open streams carry on.
    for (const stream of streams) expect((await stream.nextSignificant())?.json.data).toMatchObject({ payload: { note: 'at the limit' } });

    const refusedBefore = refusalLines(server);
    const refused = [
      await SseClient.open(`${server.url}/api/v1/watch`, TRANSCRIPT_REQUEST),
      await SseClient.openGet(`${server.url}/api/v1/watch?${WATCH_QUERY}`),
      await SseClient.open(`${server.url}/api/v1/replay`, REPLAY_BODY),
      await SseClient.openGet(`${server.url}/api/v1/replay?${queryOf(REPLAY_BODY)}`),
    ];
    for (const client of refused) expectRefusal(refusalOf(client));
    // The refused client's connection is closed, so refusals do not eat the spare connections.
    for (const client of refused) expect(client.headers.get('connection')).toBe('close');
    expect((await fetch(`${server.url}/health`)).status).toBe(200);

    const afterRefusals = await scrape(metricsPort);
    expect(metricSum(afterRefusals, 'aviso_sse_streams_refused_total', { route: '/api/v1/watch' })).toBe(2);
    expect(metricSum(afterRefusals, 'aviso_sse_streams_refused_total', { route: '/api/v1/replay' })).toBe(2);
    expect(metricSum(afterRefusals, 'aviso_http_requests_total', { route: '/api/v1/watch', status_code: '503' })).toBe(2);
    // Four refusals within 10 s: one line.
    await server.waitForLog('stream.limit.refused', { from: 0 });
    expect(refusalLines(server) - refusedBefore).toBe(1);
    const line = server.logs.find((entry) => entry.attributes?.['event.name'] === 'stream.limit.refused');
    expect(line?.severityText).toBe('WARN');
    expect(line?.attributes).toMatchObject({ max_streams: MAX_STREAMS, refused: 1 });

    streams.shift()?.close();
    const reopened = await eventually('a stream accepted again once one closed', async () => {
      const client = await SseClient.open(`${server.url}/api/v1/watch`, TRANSCRIPT_REQUEST);
      if (client.status === 200) return client;
      client.close();
      return undefined;
    });
    streams.push(reopened);
    expect((await reopened.next())?.event).toBe('live-notification');
    // And a replay too, once one more stream leaves: it ends by itself and gives its place back.
    streams.shift()?.close();
    await eventually('a replay accepted once a stream closed', async () => {
      const replay = await SseClient.open(`${server.url}/api/v1/replay`, REPLAY_BODY);
      if (replay.status !== 200) return false;
      await replay.rest();
      return true;
    });
  });
});

describe.each([
  ['HTTP/1.1', https1Client],
  ['HTTP/2', http2Client],
])('the stream limit on the TLS port over %s', (_protocol, clientFor) => {
  let certificates: TestCertificates;
  let server: RunningServer;
  let client: ProtocolClient;
  const streams: ProtocolStream[] = [];

  beforeAll(async () => {
    certificates = createTestCertificates();
    server = await startServer({ config: withTls(serverConfig(), certificates, LIMITS) });
    client = clientFor(`https://localhost:${server.port}`, certificates.ca);
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    client?.close();
    await server?.stop();
    certificates?.remove();
  });

  it('serves /health, /ready and a notify at the limit, and answers the next POST and GET stream 503 TOO_MANY_STREAMS', async () => {
    for (let index = 0; index < MAX_STREAMS; index++) {
      const stream = await client.stream('/api/v1/watch', TRANSCRIPT_REQUEST);
      expect(stream.status).toBe(200);
      expect((await stream.next())?.event).toBe('live-notification');
      streams.push(stream);
    }
    expect((await client.request('/health')).status).toBe(200);
    expect((await client.request('/ready')).status).toBe(200);
    const notified = await client.request('/api/v1/notification', { body: transcriptNotification('tls') });
    expect(notified.status, notified.text).toBe(200);

    for (const [path, body] of [
      ['/api/v1/watch', TRANSCRIPT_REQUEST],
      [`/api/v1/replay?${queryOf(REPLAY_BODY)}`, undefined],
    ] as const) {
      const answer = await client.request(path, body === undefined ? {} : { body });
      expectRefusal({
        status: answer.status,
        retryAfter: answer.headers['retry-after'],
        requestIdHeader: answer.headers['x-request-id'] as string | undefined,
        body: answer.json,
      });
    }
    // Still served after the refusals (on HTTP/2, on the very connection that carries the streams).
    expect((await client.request('/health')).status).toBe(200);

    streams.shift()?.close();
    await eventually('a stream accepted again once one closed', async () => {
      const stream = await client.stream('/api/v1/watch', TRANSCRIPT_REQUEST);
      if (stream.status !== 200) {
        stream.close();
        return false;
      }
      streams.push(stream);
      return true;
    });
  });
});
