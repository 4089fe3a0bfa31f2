import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID_V4, postJson, request } from '../support/http.js';
import { MARS_EXAMPLE, TEST_SCHEMAS, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * Prometheus metrics of the real server process (docs/design/rules/operations.md §3.3): scripted traffic on the
 * public port, then `GET /metrics` on the separate metrics port, parsed by the small exposition
 * parser below and compared series by series with exact values.
 *
 * Servers (all in-memory):
 * - `main`: the shared test schemas (strict mode), anonymous; notify/watch/replay/errors/404/405;
 * - `auth`: `auth.enabled` in `trusted_proxy` mode with HS256 tokens signed here with `jose`;
 * - `lenient` / `strict`: a thousand distinct unknown event types must not add series;
 * - `disabled`: `metrics.enabled: false`, nothing listens on the metrics port.
 */

const PACKAGE_VERSION = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string })
  .version;
const SCHEMA_NAMES = Object.keys(TEST_SCHEMAS);

// ---------------------------------------------------------------------------------------------
// Prometheus text exposition (format 0.0.4), parsed strictly: a malformed line fails the test.

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

interface Exposition {
  readonly samples: readonly Sample[];
  /** `# TYPE` per metric family. */
  readonly types: ReadonlyMap<string, string>;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

function parseNumber(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  // prom-client 15 writes NaN as `Nan`; Prometheus parses the value case-insensitively.
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`not a sample value: ${text}`);
  return Number(text);
}

/** Label set `{a="x",b="y"}` starting at `text[0] === '{'`; returns the labels and the rest of the line. */
function parseLabels(text: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let index = 1;
  for (;;) {
    if (text[index] === '}') return { labels, rest: text.slice(index + 1) };
    const name = LABEL_NAME.exec(text.slice(index))?.[0];
    if (!name) throw new Error(`bad label name in ${text}`);
    index += name.length;
    if (text.slice(index, index + 2) !== '="') throw new Error(`expected =" after ${name} in ${text}`);
    index += 2;
    let value = '';
    for (;;) {
      const char = text[index];
      if (char === undefined) throw new Error(`unterminated label value in ${text}`);
      if (char === '"') break;
      if (char === '\\') {
        const escaped = text[index + 1];
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else throw new Error(`bad escape in ${text}`);
        index += 2;
        continue;
      }
      value += char;
      index++;
    }
    index++;
    if (Object.hasOwn(labels, name)) throw new Error(`duplicate label ${name} in ${text}`);
    labels[name] = value;
    if (text[index] === ',') index++;
    else if (text[index] !== '}') throw new Error(`expected , or } in ${text}`);
  }
}

function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1] as string, type[2] as string);
      else if (!line.startsWith('# HELP ')) throw new Error(`unexpected comment line: ${line}`);
      continue;
    }
    const name = METRIC_NAME.exec(line)?.[0];
    if (!name) throw new Error(`bad sample line: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest));
    const fields = rest.trim().split(/\s+/);
    if (fields.length < 1 || fields.length > 2 || fields[0] === '') throw new Error(`bad sample line: ${line}`);
    samples.push({ name, labels, value: parseNumber(fields[0] as string) });
  }
  return { samples, types };
}

function labelsKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
}

function seriesKey(sample: Sample): string {
  return `${sample.name}${labelsKey(sample.labels)}`;
}

/** The value of the series with exactly these labels, `undefined` when it does not exist. */
function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const key = labelsKey(labels);
  return exposition.samples.find((s) => s.name === name && labelsKey(s.labels) === key)?.value;
}

/** Every series of a sample name, keyed by the listed label values joined with a space. */
function table(exposition: Exposition, name: string, labelNames: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const sample of exposition.samples) {
    if (sample.name !== name) continue;
    expect(Object.keys(sample.labels).sort()).toEqual([...labelNames].sort());
    const key = labelNames.map((label) => sample.labels[label]).join(' ');
    expect(out[key], `duplicate series ${name} ${key}`).toBeUndefined();
    out[key] = sample.value;
  }
  return out;
}

/** Series keys of the application metrics (process and nodejs series come and go with the runtime). */
function applicationSeries(exposition: Exposition): string[] {
  return exposition.samples
    .filter((s) => s.name.startsWith('aviso_'))
    .map(seriesKey)
    .sort();
}

// ---------------------------------------------------------------------------------------------
// Helpers.

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

function metricsBlock(port: number): Record<string, unknown> {
  return { enabled: true, host: '127.0.0.1', port };
}

async function scrape(metricsPort: number): Promise<Exposition> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(response.status).toBe(200);
  return parseExposition(await response.text());
}

/** Scrapes until `ready` holds (stream release is asynchronous after a client disconnects). */
async function scrapeUntil(metricsPort: number, ready: (e: Exposition) => boolean, timeoutMs = 10_000): Promise<Exposition> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exposition = await scrape(metricsPort);
    if (ready(exposition) || Date.now() > deadline) return exposition;
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Runs `count` tasks with at most `width` in flight. */
async function inParallel(count: number, width: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

const DISS_A = { event_type: 'dissemination', identifier: { destination: 'A', class: 'od' } };
const DISS_B = { event_type: 'dissemination', identifier: { destination: 'B', class: 'od' } };

// ---------------------------------------------------------------------------------------------

describe('metrics after scripted anonymous traffic (strict schemas)', () => {
  let server: RunningServer;
  let metricsPort: number;
  let atStartup: Exposition;
  let after: Exposition;
  const replayEvents: string[] = [];

  beforeAll(async () => {
    metricsPort = await freePort();
    server = await startServer({ config: serverConfig({ metrics: metricsBlock(metricsPort) }) });
    atStartup = await scrape(metricsPort);

    const notify = (body: unknown) => postJson(`${server.url}/api/v1/notification`, body);
    // Successes: three dissemination (two before the watch, one it receives live), one mars.
    expect((await notify(DISS_A)).status).toBe(200);
    expect((await notify(DISS_A)).status).toBe(200);
    expect((await notify(MARS_EXAMPLE)).status).toBe(200);

    const watchA = await SseClient.open(`${server.url}/api/v1/watch`, DISS_A);
    const watchB = await SseClient.open(`${server.url}/api/v1/watch`, DISS_B);
    expect([watchA.status, watchB.status]).toEqual([200, 200]);
    expect((await watchA.nextSignificant())?.json.type).toBe('connection_established');
    expect((await watchB.nextSignificant())?.json.type).toBe('connection_established');
    expect((await notify(DISS_A)).status).toBe(200);
    expect((await watchA.nextSignificant())?.json.id).toMatch(/^dissemination@\d+$/);

    // A replay of the three stored dissemination notifications, ending by itself.
    const replay = await SseClient.open(`${server.url}/api/v1/replay`, { ...DISS_A, from_id: '1' });
    expect(replay.status).toBe(200);
    for (const event of await replay.rest()) if (event.event !== 'heartbeat') replayEvents.push(event.event);

    // Each error class of notify.
    expect((await notify('{"event_type": "dissemination",')).status).toBe(400); // parse → unknown/error
    expect((await notify({ event_type: 'no_such_type', identifier: {} })).status).toBe(400); // strict → unknown/rejected
    expect((await notify({ ...DISS_A, identifier: { destination: 'A' } })).status).toBe(400); // validation → dissemination/error
    expect((await notify({ ...MARS_EXAMPLE, identifier: { ...MARS_EXAMPLE.identifier, point: '1,2' } })).status).toBe(400); // point → mars/error

    // Stream requests refused before the stream is counted.
    expect((await postJson(`${server.url}/api/v1/watch`, { event_type: 'no_such_type', identifier: {} })).status).toBe(400);
    expect((await postJson(`${server.url}/api/v1/watch`, { ...DISS_A, identifier: { destination: 'A' } })).status).toBe(400);

    // Framework answers and other routes.
    expect((await request(`${server.url}/no/such/path`)).status).toBe(404);
    expect((await request(`${server.url}/api/v1/notification`)).status).toBe(405);
    expect((await request(`${server.url}/api/v1/notification`, { method: 'PROPFIND' })).status).toBe(405);
    expect((await request(`${server.url}/api/v1/schema/mars`)).status).toBe(200);
    expect((await request(`${server.url}/api/v1/schema/not_configured`)).status).toBe(404);
    expect((await request(`${server.url}/health`)).status).toBe(200);

    // Admin routes (auth disabled: open). mars@1 is the mars notification (sequences are per base, D28).
    expect((await request(`${server.url}/api/v1/admin/notification/mars@1`, { method: 'DELETE' })).status).toBe(200);
    expect((await request(`${server.url}/api/v1/admin/notification/mars@999`, { method: 'DELETE' })).status).toBe(404);
    const wipe = await request(`${server.url}/api/v1/admin/wipe/stream`, {
      method: 'DELETE',
      body: JSON.stringify({ stream_name: 'mars' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(wipe.status).toBe(200);

    // Both watches closed by the client.
    watchA.close();
    watchB.close();
    after = await scrapeUntil(
      metricsPort,
      (e) => valueOf(e, 'aviso_sse_connection_duration_seconds_count', { route: '/api/v1/watch' }) === 2,
    );
  });

  afterAll(async () => {
    await server?.stop();
  });

  describe('from startup', () => {
    it('exposes aviso_build_info with the package version', () => {
      expect(atStartup.types.get('aviso_build_info')).toBe('gauge');
      expect(table(atStartup, 'aviso_build_info', ['version'])).toEqual({ [PACKAGE_VERSION]: 1 });
    });

    it('pre-creates the 8 auth series at 0 whatever the auth configuration', () => {
      const expected: Record<string, number> = {};
      for (const mode of ['direct', 'trusted_proxy']) {
        for (const outcome of ['success', 'unauthorized', 'forbidden', 'service_unavailable']) expected[`${mode} ${outcome}`] = 0;
      }
      expect(table(atStartup, 'aviso_auth_requests_total', ['mode', 'outcome'])).toEqual(expected);
    });

    it('pre-creates the notification series: unknown error/rejected and success/error per schema', () => {
      const expected: Record<string, number> = { 'unknown error': 0, 'unknown rejected': 0 };
      for (const name of SCHEMA_NAMES) {
        expected[`${name} success`] = 0;
        expected[`${name} error`] = 0;
      }
      expect(table(atStartup, 'aviso_notifications_total', ['event_type', 'status'])).toEqual(expected);
    });

    it('pre-creates the batch notify series for its four statuses (D48)', () => {
      expect(table(atStartup, 'aviso_notification_batches_total', ['status'])).toEqual({ success: 0, partial: 0, error: 0, refused: 0 });
    });

    it('pre-creates the backend counters and zero-count histograms for 5 operations × 2 outcomes', () => {
      const expected: Record<string, number> = {};
      for (const operation of ['publish', 'get_batch', 'wipe_stream', 'wipe_all', 'delete_message']) {
        for (const outcome of ['ok', 'error']) expected[`in_memory ${operation} ${outcome}`] = 0;
      }
      const labels = ['backend', 'operation', 'outcome'];
      expect(table(atStartup, 'aviso_backend_operations_total', labels)).toEqual(expected);
      expect(table(atStartup, 'aviso_backend_operation_duration_seconds_count', labels)).toEqual(expected);
      expect(table(atStartup, 'aviso_backend_operation_duration_seconds_sum', labels)).toEqual(expected);
      expect(atStartup.types.get('aviso_backend_operation_duration_seconds')).toBe('histogram');
      const buckets = atStartup.samples.filter(
        (s) =>
          s.name === 'aviso_backend_operation_duration_seconds_bucket' && s.labels.operation === 'publish' && s.labels.outcome === 'ok',
      );
      expect(buckets.map((s) => s.labels.le)).toEqual([
        '0.005',
        '0.01',
        '0.025',
        '0.05',
        '0.1',
        '0.25',
        '0.5',
        '1',
        '2.5',
        '5',
        '10',
        '+Inf',
      ]);
      expect(buckets.every((s) => s.value === 0)).toBe(true);
    });

    it('pre-creates the OTLP export counters at 0 although export is disabled', () => {
      expect(valueOf(atStartup, 'aviso_otlp_export_failures_total')).toBe(0);
      expect(valueOf(atStartup, 'aviso_otlp_suppressed_log_records_total')).toBe(0);
    });

    it('starts the log output counters at 0 (D45)', () => {
      expect(valueOf(atStartup, 'aviso_log_lines_dropped_total')).toBe(0);
      expect(valueOf(atStartup, 'aviso_log_lines_rate_limited_total')).toBe(0);
    });

    it('pre-creates every ECPDS series at 0 although no ecpds section exists', () => {
      expect(valueOf(atStartup, 'aviso_ecpds_cache_hits_total')).toBe(0);
      expect(valueOf(atStartup, 'aviso_ecpds_cache_misses_total')).toBe(0);
      expect(valueOf(atStartup, 'aviso_ecpds_cache_size')).toBe(0);
      expect(table(atStartup, 'aviso_ecpds_access_decisions_total', ['outcome'])).toEqual({
        allow: 0,
        deny_destination: 0,
        deny_match_key_missing: 0,
        unavailable: 0,
        admin_bypass: 0,
        error: 0,
      });
      expect(table(atStartup, 'aviso_ecpds_fetch_total', ['outcome'])).toEqual({
        success: 0,
        http_401: 0,
        http_403: 0,
        http_4xx: 0,
        http_5xx: 0,
        invalid_response: 0,
        unreachable: 0,
      });
    });

    it('says the backend is connected and exposes the configured limits (defaults here)', () => {
      expect(valueOf(atStartup, 'aviso_backend_connected', { backend: 'in_memory' })).toBe(1);
      expect(valueOf(atStartup, 'aviso_http_max_connections')).toBe(11_000);
      expect(valueOf(atStartup, 'aviso_sse_max_streams')).toBe(10_000);
      expect(valueOf(atStartup, 'aviso_sse_max_total_buffered_bytes')).toBe(268_435_456);
      expect(table(atStartup, 'aviso_sse_token_expiry_closes_total', ['route'])).toEqual({ '/api/v1/watch': 0, '/api/v1/replay': 0 });
      expect(table(atStartup, 'aviso_sse_streams_refused_total', ['route'])).toEqual({ '/api/v1/watch': 0, '/api/v1/replay': 0 });
      expect(valueOf(atStartup, 'aviso_http_connections_refused_total')).toBe(0);
    });

    it('has no HTTP or SSE series before the first request (created on first use)', () => {
      const names = new Set(atStartup.samples.map((s) => s.name));
      for (const name of [
        'aviso_http_requests_total',
        'aviso_http_request_duration_seconds_count',
        'aviso_sse_connections_total',
        'aviso_sse_connections_active',
        'aviso_sse_events_sent_total',
        'aviso_sse_stream_errors_total',
      ]) {
        expect(names.has(name), name).toBe(false);
      }
    });

    it('declares each family with the type of the inventory (docs/design/rules/operations.md §3.3.2, docs/design/rules/operations.md §3.3.3)', () => {
      const expected: Record<string, string> = {
        aviso_build_info: 'gauge',
        aviso_http_requests_total: 'counter',
        aviso_http_request_duration_seconds: 'histogram',
        aviso_http_requests_in_flight: 'gauge',
        aviso_backend_operations_total: 'counter',
        aviso_backend_operation_duration_seconds: 'histogram',
        aviso_notifications_total: 'counter',
        aviso_sse_connections_active: 'gauge',
        aviso_sse_connections_total: 'counter',
        aviso_sse_unique_users_active: 'gauge',
        aviso_sse_events_sent_total: 'counter',
        aviso_sse_stream_errors_total: 'counter',
        aviso_sse_slow_consumer_closes_total: 'counter',
        aviso_sse_stream_resets_total: 'counter',
        aviso_sse_buffered_bytes: 'gauge',
        aviso_delivery_lag_seconds: 'histogram',
        aviso_jetstream_live_gap_sequences_total: 'counter',
        aviso_sse_connection_duration_seconds: 'histogram',
        aviso_auth_requests_total: 'counter',
        aviso_config_reloads_total: 'counter',
        aviso_ecpds_cache_hits_total: 'counter',
        aviso_ecpds_cache_misses_total: 'counter',
        aviso_ecpds_cache_size: 'gauge',
        aviso_ecpds_access_decisions_total: 'counter',
        aviso_ecpds_fetch_total: 'counter',
        aviso_otlp_export_failures_total: 'counter',
        aviso_otlp_suppressed_log_records_total: 'counter',
        aviso_log_lines_dropped_total: 'counter',
        aviso_log_lines_rate_limited_total: 'counter',
        // In-memory backend only (memory-budget.test.ts has their values).
        aviso_memory_history_evictions_total: 'counter',
        aviso_memory_history_bytes: 'gauge',
        aviso_sse_token_expiry_closes_total: 'counter',
        aviso_backend_connected: 'gauge',
        aviso_http_max_connections: 'gauge',
        aviso_sse_max_streams: 'gauge',
        aviso_sse_max_total_buffered_bytes: 'gauge',
        aviso_sse_streams_refused_total: 'counter',
        aviso_http_connections_refused_total: 'counter',
        // D41, D42.
        aviso_sse_history_gaps_total: 'counter',
        aviso_sse_sequence_resets_total: 'counter',
        aviso_idempotency_replays_total: 'counter',
        aviso_idempotency_conflicts_total: 'counter',
        aviso_idempotency_evictions_total: 'counter',
        // D48.
        aviso_notification_batches_total: 'counter',
      };
      const declared = Object.fromEntries([...atStartup.types].filter(([name]) => name.startsWith('aviso_')));
      expect(declared).toEqual(expected);
    });

    it('exposes the process metrics docs/design/rules/operations.md §3.3.1 requires', () => {
      for (const name of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'process_virtual_memory_bytes',
        'process_open_fds',
        'process_max_fds',
        'process_start_time_seconds',
      ]) {
        const value = valueOf(atStartup, name);
        expect(value, name).toBeDefined();
        expect(Number.isFinite(value)).toBe(true);
      }
      expect(valueOf(atStartup, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      const start = valueOf(atStartup, 'process_start_time_seconds') ?? 0;
      expect(Math.abs(start - Date.now() / 1000)).toBeLessThan(600);
    });
  });

  describe('after the traffic', () => {
    it('the streams behaved as scripted (replay ended by itself)', () => {
      expect(replayEvents).toEqual(['replay-control', 'replay', 'replay', 'replay', 'replay-control', 'connection-closing']);
    });

    it('counts aviso_http_requests_total by route pattern, method and status code', () => {
      expect(table(after, 'aviso_http_requests_total', ['route', 'method', 'status_code'])).toEqual({
        '/api/v1/notification POST 200': 4,
        '/api/v1/notification POST 400': 4,
        '/api/v1/notification GET 405': 1,
        '/api/v1/notification other 405': 1,
        '/api/v1/watch POST 200': 2,
        '/api/v1/watch POST 400': 2,
        '/api/v1/replay POST 200': 1,
        'unmatched GET 404': 1,
        '/api/v1/schema/{event_type} GET 200': 1,
        '/api/v1/schema/{event_type} GET 404': 1,
        '/health GET 200': 1,
        '/api/v1/admin/notification/{notification_id} DELETE 200': 1,
        '/api/v1/admin/notification/{notification_id} DELETE 404': 1,
        '/api/v1/admin/wipe/stream DELETE 200': 1,
      });
    });

    it('observes one request duration per request, by route and method, with the default buckets', () => {
      expect(table(after, 'aviso_http_request_duration_seconds_count', ['route', 'method'])).toEqual({
        '/api/v1/notification POST': 8,
        '/api/v1/notification GET': 1,
        '/api/v1/notification other': 1,
        '/api/v1/watch POST': 4,
        '/api/v1/replay POST': 1,
        'unmatched GET': 1,
        '/api/v1/schema/{event_type} GET': 2,
        '/health GET': 1,
        '/api/v1/admin/notification/{notification_id} DELETE': 2,
        '/api/v1/admin/wipe/stream DELETE': 1,
      });
      const buckets = after.samples.filter((s) => s.name === 'aviso_http_request_duration_seconds_bucket' && s.labels.route === '/health');
      expect(buckets.map((s) => s.labels.le)).toEqual([
        '0.005',
        '0.01',
        '0.025',
        '0.05',
        '0.1',
        '0.25',
        '0.5',
        '1',
        '2.5',
        '5',
        '10',
        '+Inf',
      ]);
      expect(buckets.at(-1)?.value).toBe(1);
      // SSE durations are set-up times, not stream lifetimes: the watches stayed open for a while.
      const watchSum = valueOf(after, 'aviso_http_request_duration_seconds_sum', { route: '/api/v1/watch', method: 'POST' }) ?? 99;
      expect(watchSum).toBeLessThan(5);
    });

    it('brings aviso_http_requests_in_flight back to 0 for every method', () => {
      const inFlight = table(after, 'aviso_http_requests_in_flight', ['method']);
      expect(Object.keys(inFlight).length).toBeGreaterThan(0);
      for (const [method, value] of Object.entries(inFlight)) expect(value, method).toBe(0);
    });

    it('counts aviso_notifications_total per event type and status', () => {
      const expected: Record<string, number> = { 'unknown error': 1, 'unknown rejected': 1 };
      for (const name of SCHEMA_NAMES) {
        expected[`${name} success`] = 0;
        expected[`${name} error`] = 0;
      }
      expected['dissemination success'] = 3;
      expected['dissemination error'] = 1;
      expected['mars success'] = 1;
      expected['mars error'] = 1;
      expect(table(after, 'aviso_notifications_total', ['event_type', 'status'])).toEqual(expected);
    });

    it('counts SSE connections, frames and lifetimes; the gauges are back to 0 after the streams closed', () => {
      const labels = ['route', 'event_type'];
      expect(table(after, 'aviso_sse_connections_total', labels)).toEqual({
        '/api/v1/watch dissemination': 2,
        '/api/v1/replay dissemination': 1,
      });
      expect(table(after, 'aviso_sse_connections_active', labels)).toEqual({
        '/api/v1/watch dissemination': 0,
        '/api/v1/replay dissemination': 0,
      });
      // One live frame on watch A (watch B matched nothing); three replayed frames; control frames excluded.
      expect(table(after, 'aviso_sse_events_sent_total', labels)).toEqual({
        '/api/v1/watch dissemination': 1,
        '/api/v1/replay dissemination': 3,
      });
      // That one live delivery's lag was observed; replayed frames are not live deliveries.
      expect(table(after, 'aviso_delivery_lag_seconds_count', ['backend'])).toEqual({ in_memory: 1 });
      // No error frame was sent: the series is created on first use only.
      expect(table(after, 'aviso_sse_stream_errors_total', labels)).toEqual({});
      expect(table(after, 'aviso_sse_connection_duration_seconds_count', ['route'])).toEqual({
        '/api/v1/watch': 2,
        '/api/v1/replay': 1,
      });
      const buckets = after.samples.filter(
        (s) => s.name === 'aviso_sse_connection_duration_seconds_bucket' && s.labels.route === '/api/v1/replay',
      );
      expect(buckets.map((s) => s.labels.le)).toEqual([
        '1',
        '5',
        '15',
        '30',
        '60',
        '300',
        '900',
        '1800',
        '3600',
        '7200',
        '14400',
        '28800',
        '43200',
        '86400',
        '+Inf',
      ]);
    });

    it('does not count anonymous streams as unique users', () => {
      const users = table(after, 'aviso_sse_unique_users_active', ['route']);
      for (const [route, value] of Object.entries(users)) expect(value, route).toBe(0);
    });

    it('counts and times the backend calls: publish per stored notification, get_batch for the replay', () => {
      const labels = ['backend', 'operation', 'outcome'];
      const expected: Record<string, number> = {};
      for (const operation of ['publish', 'get_batch', 'wipe_stream', 'wipe_all', 'delete_message']) {
        for (const outcome of ['ok', 'error']) expected[`in_memory ${operation} ${outcome}`] = 0;
      }
      expected['in_memory publish ok'] = 4;
      expected['in_memory get_batch ok'] = 1;
      expected['in_memory delete_message ok'] = 2; // `not_found` is an answer, not a failure
      expected['in_memory wipe_stream ok'] = 1;
      expect(table(after, 'aviso_backend_operations_total', labels)).toEqual(expected);
      expect(table(after, 'aviso_backend_operation_duration_seconds_count', labels)).toEqual(expected);
    });

    it('a request aborted mid-body does not leak in the in-flight gauge', async () => {
      const socket = connect({ host: '127.0.0.1', port: server.port });
      await new Promise<void>((done) => socket.once('connect', () => done()));
      socket.write('POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"event_type":');
      const inFlight = (e: Exposition) => valueOf(e, 'aviso_http_requests_in_flight', { method: 'POST' });
      expect(inFlight(await scrapeUntil(metricsPort, (e) => inFlight(e) === 1))).toBe(1);
      socket.destroy();
      const now = await scrapeUntil(metricsPort, (e) => inFlight(e) === 0);
      expect(inFlight(now)).toBe(0);
      // The handler never ran: the notification counters did not move.
      expect(table(now, 'aviso_notifications_total', ['event_type', 'status'])).toEqual(
        table(after, 'aviso_notifications_total', ['event_type', 'status']),
      );
    });

    it('leaves the auth series at 0 when auth is disabled', () => {
      const auth = table(after, 'aviso_auth_requests_total', ['mode', 'outcome']);
      expect(Object.keys(auth)).toHaveLength(8);
      for (const [key, value] of Object.entries(auth)) expect(value, key).toBe(0);
    });
  });

  describe('the metrics listener', () => {
    it('answers GET /metrics with the Prometheus content type and a fresh X-Request-ID', async () => {
      const first = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      const second = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { 'x-request-id': 'client-chosen' } });
      await Promise.all([first.text(), second.text()]);
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4(; ?charset=utf-8)?$/i);
      expect(first.headers.get('x-request-id')).toMatch(UUID_V4);
      expect(second.headers.get('x-request-id')).toMatch(UUID_V4);
      expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    });

    it('answers 404 with X-Request-ID on any other path', async () => {
      for (const path of ['/', '/health', '/metrics/extra', '/api/v1/notification']) {
        const response = await request(`http://127.0.0.1:${metricsPort}${path}`);
        expect(response.status, path).toBe(404);
        expect(response.headers.get('x-request-id'), path).toMatch(UUID_V4);
      }
    });

    it('is not served on the public port', async () => {
      const response = await request(`${server.url}/metrics`);
      expect(response.status).toBe(404);
      expect(response.text).not.toContain('aviso_build_info');
    });

    it('does not count its own requests in the public HTTP metrics', async () => {
      const exposition = await scrape(metricsPort);
      const routes = new Set(exposition.samples.filter((s) => s.name === 'aviso_http_requests_total').map((s) => s.labels.route));
      expect(routes.has('/metrics')).toBe(false);
    });

    it('logs startup.metrics.server.binding with the metrics host and port', () => {
      const binding = server.logs.find((l) => l.attributes?.['event.name'] === 'startup.metrics.server.binding');
      expect(binding?.attributes).toMatchObject({ host: '127.0.0.1', port: metricsPort });
    });
  });
});

// ---------------------------------------------------------------------------------------------

const JWT_SECRET = 'metrics-test-jwt-secret';
const REALM = 'testrealm';

async function bearer(username: string, roles: readonly string[], secret = JWT_SECRET): Promise<string> {
  const token = await new SignJWT({ sub: username, username, realm: REALM, roles: [...roles], attributes: {} })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));
  return `Bearer ${token}`;
}

describe('auth and unique-user metrics (trusted_proxy)', () => {
  let server: RunningServer;
  let metricsPort: number;
  let whileOpen: Exposition;
  let after: Exposition;

  beforeAll(async () => {
    metricsPort = await freePort();
    server = await startServer({
      config: serverConfig({
        metrics: metricsBlock(metricsPort),
        auth: { enabled: true, mode: 'trusted_proxy', jwt_secret: JWT_SECRET, admin_roles: { [REALM]: ['admin'] } },
      }),
    });
    const reader = await bearer('reader-user', ['reader']);
    const admin = await bearer('admin-user', ['admin']);
    const forged = await bearer('reader-user', ['reader'], 'some-other-secret');
    const url = server.url;

    expect((await postJson(`${url}/api/v1/notification`, DISS_A, { authorization: reader })).status).toBe(200); // success
    expect((await postJson(`${url}/api/v1/notification`, DISS_A)).status).toBe(200); // anonymous: not counted
    expect((await postJson(`${url}/api/v1/notification`, DISS_A, { authorization: forged })).status).toBe(401); // unauthorized
    expect((await request(`${url}/api/v1/admin/wipe/all`, { method: 'DELETE' })).status).toBe(401); // unauthorized
    expect((await request(`${url}/api/v1/admin/wipe/all`, { method: 'DELETE', headers: { authorization: reader } })).status).toBe(403); // forbidden
    expect((await request(`${url}/api/v1/admin/wipe/all`, { method: 'DELETE', headers: { authorization: admin } })).status).toBe(200); // success
    expect((await request(`${url}/api/v1/schema`, { headers: { authorization: 'Garbage' } })).status).toBe(200); // public: not counted

    // Streams: reader twice, admin once (success ×3), one anonymous.
    const streams = [
      await SseClient.open(`${url}/api/v1/watch`, DISS_A, { headers: { authorization: reader } }),
      await SseClient.open(`${url}/api/v1/watch`, DISS_B, { headers: { authorization: reader } }),
      await SseClient.open(`${url}/api/v1/watch`, DISS_A, { headers: { authorization: admin } }),
      await SseClient.open(`${url}/api/v1/watch`, DISS_A),
    ];
    for (const stream of streams) {
      expect(stream.status).toBe(200);
      expect((await stream.nextSignificant())?.json.type).toBe('connection_established');
    }
    whileOpen = await scrape(metricsPort);
    for (const stream of streams) stream.close();
    after = await scrapeUntil(
      metricsPort,
      (e) => valueOf(e, 'aviso_sse_connections_active', { route: '/api/v1/watch', event_type: 'dissemination' }) === 0,
    );
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('counts aviso_auth_requests_total per mode and outcome', () => {
    expect(table(after, 'aviso_auth_requests_total', ['mode', 'outcome'])).toEqual({
      'direct success': 0,
      'direct unauthorized': 0,
      'direct forbidden': 0,
      'direct service_unavailable': 0,
      'trusted_proxy success': 5,
      'trusted_proxy unauthorized': 2,
      'trusted_proxy forbidden': 1,
      'trusted_proxy service_unavailable': 0,
    });
  });

  it('labels requests rejected by the auth middleware with their route pattern', () => {
    expect(table(after, 'aviso_http_requests_total', ['route', 'method', 'status_code'])).toEqual({
      '/api/v1/notification POST 200': 2,
      '/api/v1/notification POST 401': 1,
      '/api/v1/admin/wipe/all DELETE 401': 1,
      '/api/v1/admin/wipe/all DELETE 403': 1,
      '/api/v1/admin/wipe/all DELETE 200': 1,
      '/api/v1/schema GET 200': 1,
      '/api/v1/watch POST 200': 4,
    });
  });

  it('counts the admin wipe as a backend wipe_all call', () => {
    const labels = { backend: 'in_memory', operation: 'wipe_all', outcome: 'ok' };
    expect(valueOf(after, 'aviso_backend_operations_total', labels)).toBe(1);
    expect(valueOf(after, 'aviso_backend_operation_duration_seconds_count', labels)).toBe(1);
    expect(valueOf(after, 'aviso_backend_operations_total', { ...labels, operation: 'publish' })).toBe(2);
  });

  it('counts distinct authenticated users with an open stream, not anonymous ones, and drops to 0 on close', () => {
    expect(valueOf(whileOpen, 'aviso_sse_connections_active', { route: '/api/v1/watch', event_type: 'dissemination' })).toBe(4);
    expect(valueOf(whileOpen, 'aviso_sse_unique_users_active', { route: '/api/v1/watch' })).toBe(2);
    expect(valueOf(after, 'aviso_sse_unique_users_active', { route: '/api/v1/watch' })).toBe(0);
    expect(valueOf(after, 'aviso_sse_connections_total', { route: '/api/v1/watch', event_type: 'dissemination' })).toBe(4);
    expect(valueOf(after, 'aviso_sse_connection_duration_seconds_count', { route: '/api/v1/watch' })).toBe(4);
  });

  it('brings the in-flight gauge back to 0', () => {
    for (const [method, value] of Object.entries(table(after, 'aviso_http_requests_in_flight', ['method']))) {
      expect(value, method).toBe(0);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('a stream released at its maximum duration', () => {
  let server: RunningServer;
  let metricsPort: number;

  beforeAll(async () => {
    metricsPort = await freePort();
    server = await startServer({
      config: serverConfig({ metrics: metricsBlock(metricsPort), watch_endpoint: { connection_max_duration_sec: 1 } }),
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('releases the connection once (active back to 0, lifetime observed in the 1–5 s bucket)', async () => {
    const watch = await SseClient.open(`${server.url}/api/v1/watch`, DISS_A);
    expect(watch.status).toBe(200);
    const closing = (await watch.rest()).filter((e) => e.event === 'connection-closing');
    expect(closing.map((e) => e.json.reason)).toEqual(['max_duration_reached']);
    const labels = { route: '/api/v1/watch', event_type: 'dissemination' };
    const exposition = await scrapeUntil(metricsPort, (e) => valueOf(e, 'aviso_sse_connections_active', labels) === 0);
    expect(valueOf(exposition, 'aviso_sse_connections_active', labels)).toBe(0);
    expect(valueOf(exposition, 'aviso_sse_connections_total', labels)).toBe(1);
    const route = { route: '/api/v1/watch' };
    expect(valueOf(exposition, 'aviso_sse_connection_duration_seconds_count', route)).toBe(1);
    expect(valueOf(exposition, 'aviso_sse_connection_duration_seconds_bucket', { ...route, le: '1' })).toBe(0);
    expect(valueOf(exposition, 'aviso_sse_connection_duration_seconds_bucket', { ...route, le: '5' })).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------

const FLOOD = 1000;

describe.each([
  ['non-strict', false],
  ['strict', true],
] as const)('a thousand distinct unknown event types (%s mode)', (_mode, strict) => {
  let server: RunningServer;
  let metricsPort: number;
  const marker = `zz${Date.now().toString(36)}`;

  beforeAll(async () => {
    metricsPort = await freePort();
    server = await startServer({
      config: serverConfig({ metrics: metricsBlock(metricsPort), notification_schema_strict: strict }),
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  /** One request of each kind with caller-chosen text in the event type and the path. */
  async function traffic(index: number): Promise<void> {
    const eventType = `${marker}_${index}`;
    const body = { event_type: eventType, identifier: { name: `n${index}` } };
    const notified = await postJson(`${server.url}/api/v1/notification`, body);
    expect(notified.status).toBe(strict ? 400 : 200);
    if (index % 10 === 0) {
      const replay = await SseClient.open(`${server.url}/api/v1/replay`, { ...body, from_id: '1' });
      expect(replay.status).toBe(strict ? 400 : 200);
      if (!strict) await replay.rest();
      expect((await request(`${server.url}/${marker}/${index}`)).status).toBe(404);
      expect((await request(`${server.url}/api/v1/schema/${eventType}`)).status).toBe(404);
    }
  }

  it('adds no series: unknown types collapse to generic (accepted) or unknown (rejected)', { timeout: 120_000 }, async () => {
    // One round first, so every series the flood could touch exists already.
    await traffic(0);
    const before = await scrapeUntil(metricsPort, (e) =>
      e.samples.every((s) => s.name !== 'aviso_sse_connections_active' || s.value === 0),
    );
    await inParallel(FLOOD - 1, 8, (index) => traffic(index + 1));
    const afterFlood = await scrapeUntil(metricsPort, (e) =>
      e.samples.every((s) => s.name !== 'aviso_sse_connections_active' || s.value === 0),
    );

    expect(applicationSeries(afterFlood)).toEqual(applicationSeries(before));
    for (const sample of afterFlood.samples) {
      for (const value of Object.values(sample.labels)) expect(value, seriesKey(sample)).not.toContain(marker);
    }
    if (strict) {
      expect(valueOf(afterFlood, 'aviso_notifications_total', { event_type: 'unknown', status: 'rejected' })).toBe(FLOOD);
      expect(afterFlood.samples.some((s) => s.labels.event_type === 'generic')).toBe(false);
      // Only the series that exist from startup (the slow-consumer ones, by route, D37): none per event type.
      expect(afterFlood.samples.some((s) => s.name.startsWith('aviso_sse_') && s.labels.event_type !== undefined)).toBe(false);
    } else {
      expect(valueOf(afterFlood, 'aviso_notifications_total', { event_type: 'generic', status: 'success' })).toBe(FLOOD);
      expect(valueOf(afterFlood, 'aviso_sse_connections_total', { route: '/api/v1/replay', event_type: 'generic' })).toBe(FLOOD / 10);
      expect(valueOf(afterFlood, 'aviso_sse_events_sent_total', { route: '/api/v1/replay', event_type: 'generic' })).toBe(FLOOD / 10);
    }
    expect(valueOf(afterFlood, 'aviso_http_requests_total', { route: 'unmatched', method: 'GET', status_code: '404' })).toBe(FLOOD / 10);
    expect(
      valueOf(afterFlood, 'aviso_http_requests_total', { route: '/api/v1/schema/{event_type}', method: 'GET', status_code: '404' }),
    ).toBe(FLOOD / 10);

    // Log fields use the bucketed event type too (docs/design/rules/operations.md §1.4.8, §3.4.1).
    const configured = new Set([...SCHEMA_NAMES, 'generic', 'unknown']);
    for (const line of server.logs) {
      const eventType = line.attributes?.event_type as string | undefined;
      if (eventType !== undefined) expect(configured.has(String(eventType)), String(eventType)).toBe(true);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('metrics.enabled: false', () => {
  let server: RunningServer;
  let metricsPort: number;

  beforeAll(async () => {
    metricsPort = await freePort();
    server = await startServer({
      config: serverConfig({ metrics: { enabled: false, host: '127.0.0.1', port: metricsPort } }),
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('listens on nothing at the metrics port and logs no metrics binding', async () => {
    expect((await postJson(`${server.url}/api/v1/notification`, DISS_A)).status).toBe(200);
    const refused = await new Promise<string>((done) => {
      const socket = connect({ host: '127.0.0.1', port: metricsPort });
      socket.once('connect', () => {
        socket.destroy();
        done('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    expect(server.logs.some((l) => l.attributes?.['event.name'] === 'startup.metrics.server.binding')).toBe(false);
    expect((await request(`${server.url}/metrics`)).status).toBe(404);
  });
});
