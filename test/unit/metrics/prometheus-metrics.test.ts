import { register as globalRegister } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { NotificationBackend } from '../../../src/backend/backend.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import type { AvisoMetrics } from '../../../src/metrics/aviso-metrics.js';
import { eventTypeLabel } from '../../../src/metrics/labels.js';
import { createDisabledMetrics, createPrometheusMetrics } from '../../../src/metrics/prometheus-metrics.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';
import { FaultyBackend } from '../../support/faulty-backend.js';
import { ManualClock } from '../../support/manual-clock.js';

type Labels = Readonly<Record<string, string>>;

interface Sample {
  readonly name: string;
  readonly labels: Labels;
  readonly value: number;
}

/** Parses the text exposition into samples; enough of the format for what prom-client writes. */
function parseSamples(body: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] as string] = pair[2] as string;
    const raw = match[3] as string;
    samples.push({ name: match[1] as string, labels, value: raw === '+Inf' ? Infinity : Number(raw) });
  }
  return samples;
}

function sameLabels(a: Labels, b: Labels): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

class Exposition {
  readonly samples: Sample[];

  constructor(readonly body: string) {
    this.samples = parseSamples(body);
  }

  static async of(metrics: AvisoMetrics): Promise<Exposition> {
    return new Exposition((await metrics.render()).body);
  }

  /** The value of the one sample with exactly these labels, `undefined` when it does not exist. */
  value(name: string, labels: Labels = {}): number | undefined {
    return this.samples.find((sample) => sample.name === name && sameLabels(sample.labels, labels))?.value;
  }

  series(name: string): Sample[] {
    return this.samples.filter((sample) => sample.name === name);
  }

  type(name: string): string | undefined {
    return new RegExp(`^# TYPE ${name} (\\w+)$`, 'm').exec(this.body)?.[1];
  }

  /** Sorted label names of every sample of the metric (histograms: of `_count`). */
  labelNames(name: string): string[][] {
    const sampleName = this.type(name) === 'histogram' ? `${name}_count` : name;
    return this.series(sampleName).map((sample) => Object.keys(sample.labels).sort());
  }

  bucketBounds(name: string, labels: Labels): string[] {
    return this.series(`${name}_bucket`)
      .filter((sample) => sameLabels(withoutLe(sample.labels), labels))
      .map((sample) => String(sample.labels.le));
  }
}

function withoutLe(labels: Labels): Labels {
  const { le: _le, ...rest } = labels;
  return rest;
}

const DEFAULT_BUCKETS = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];
const SSE_BUCKETS = ['1', '5', '15', '30', '60', '300', '900', '1800', '3600', '7200', '14400', '28800', '43200', '86400', '+Inf'];
const OPERATIONS = ['publish', 'get_batch', 'wipe_stream', 'wipe_all', 'delete_message'];
const WATCH = '/api/v1/watch';
const REPLAY = '/api/v1/replay';

function metrics(overrides: Partial<Parameters<typeof createPrometheusMetrics>[0]> = {}): AvisoMetrics {
  return createPrometheusMetrics({
    version: '1.2.3',
    backendKind: 'in_memory',
    eventTypes: ['mars', 'diss'],
    limits: { maxConnections: 500, maxStreams: 400, maxTotalBufferedBytes: 1_048_576 },
    ...overrides,
  });
}

function memoryBackend(): MemoryBackend {
  return new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 10, clock: new ManualClock() });
}

/** Records one of everything, so every metric has at least one series. */
function exerciseAll(m: AvisoMetrics): void {
  m.httpRequestStarted('GET');
  m.httpRequestCompleted('/health', 'GET', 200, 0.001);
  m.notification('mars', 'success');
  m.streamOpened(WATCH, 'mars', 'alice');
  m.notificationSent(WATCH, 'mars');
  m.streamErrorSent(WATCH, 'mars');
  m.streamClosed(WATCH, 'mars', 'alice', 2);
  m.slowConsumerClosed(WATCH, 'stalled');
  m.streamReset(WATCH);
  m.tokenExpiryClosed(WATCH);
  m.streamRefused(WATCH);
  m.connectionRefused();
  m.deliveryLag(BigInt(Date.now()) * 1_000_000n);
  m.authRequest('direct', 'success');
  m.configReload('success');
  m.memoryHistory.evicted('bytes', 1);
  m.memoryHistory.heldBytes(1034);
  m.idempotency.replayed('mars');
  m.idempotency.conflict('mars', 'in_progress');
  m.idempotency.evicted();
}

describe('aviso_idempotency_* (docs/metrics.md)', () => {
  it('start at 0 for every configured event type and reason, and count under their labels', async () => {
    const m = metrics();
    let exposition = await Exposition.of(m);
    expect(exposition.value('aviso_idempotency_replays_total', { event_type: 'mars' })).toBe(0);
    expect(exposition.value('aviso_idempotency_conflicts_total', { event_type: 'mars', reason: 'reused' })).toBe(0);
    expect(exposition.value('aviso_idempotency_conflicts_total', { event_type: 'mars', reason: 'in_progress' })).toBe(0);
    expect(exposition.value('aviso_idempotency_evictions_total')).toBe(0);
    m.idempotency.replayed('mars');
    m.idempotency.replayed('mars');
    m.idempotency.conflict('mars', 'reused');
    m.idempotency.evicted();
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_idempotency_replays_total', { event_type: 'mars' })).toBe(2);
    expect(exposition.value('aviso_idempotency_conflicts_total', { event_type: 'mars', reason: 'reused' })).toBe(1);
    expect(exposition.value('aviso_idempotency_conflicts_total', { event_type: 'mars', reason: 'in_progress' })).toBe(0);
    expect(exposition.value('aviso_idempotency_evictions_total')).toBe(1);
  });
});

describe('aviso_config_reloads_total (docs/design/rules/browser.md §5)', () => {
  it('starts at 0 for both results and counts each reload under its result', async () => {
    const m = metrics();
    let exposition = await Exposition.of(m);
    expect(exposition.series('aviso_config_reloads_total')).toHaveLength(2);
    expect(exposition.value('aviso_config_reloads_total', { result: 'success' })).toBe(0);
    expect(exposition.value('aviso_config_reloads_total', { result: 'failure' })).toBe(0);
    m.configReload('success');
    m.configReload('failure');
    m.configReload('failure');
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_config_reloads_total', { result: 'success' })).toBe(1);
    expect(exposition.value('aviso_config_reloads_total', { result: 'failure' })).toBe(2);
  });
});

describe('aviso_otlp_* (docs/design/rules/reference-0.13.md §7)', () => {
  it('are 0 when OTLP export is disabled', async () => {
    const exposition = await Exposition.of(metrics());
    expect(exposition.value('aviso_otlp_export_failures_total')).toBe(0);
    expect(exposition.value('aviso_otlp_suppressed_log_records_total')).toBe(0);
  });

  it("follow the export's totals at every scrape", async () => {
    let stats = { exportFailures: 2, suppressedRecords: 40 };
    const m = metrics({ otlpStats: () => stats });
    let exposition = await Exposition.of(m);
    expect(exposition.value('aviso_otlp_export_failures_total')).toBe(2);
    expect(exposition.value('aviso_otlp_suppressed_log_records_total')).toBe(40);
    stats = { exportFailures: 3, suppressedRecords: 41 };
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_otlp_export_failures_total')).toBe(3);
    expect(exposition.value('aviso_otlp_suppressed_log_records_total')).toBe(41);
  });
});

describe('aviso_log_lines_* (D45)', () => {
  it('are 0 without a logger to read', async () => {
    const exposition = await Exposition.of(metrics());
    expect(exposition.value('aviso_log_lines_dropped_total')).toBe(0);
    expect(exposition.value('aviso_log_lines_rate_limited_total')).toBe(0);
  });

  it("follow the logger's totals at every scrape", async () => {
    let stats = { droppedLines: 5, rateLimitedLines: 900 };
    const m = metrics({ logStats: () => stats });
    let exposition = await Exposition.of(m);
    expect(exposition.value('aviso_log_lines_dropped_total')).toBe(5);
    expect(exposition.value('aviso_log_lines_rate_limited_total')).toBe(900);
    stats = { droppedLines: 7, rateLimitedLines: 1_000 };
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_log_lines_dropped_total')).toBe(7);
    expect(exposition.value('aviso_log_lines_rate_limited_total')).toBe(1_000);
  });
});

describe('aviso_jetstream_live_gap_sequences_total (D39)', () => {
  const value = (exposition: Exposition, outcome: string) => exposition.value('aviso_jetstream_live_gap_sequences_total', { outcome });

  it('is 0 for both outcomes before a backend is instrumented and on the in-memory backend', async () => {
    const m = metrics();
    let exposition = await Exposition.of(m);
    expect([value(exposition, 'filled'), value(exposition, 'skipped')]).toEqual([0, 0]);
    m.instrumentBackend(memoryBackend());
    exposition = await Exposition.of(m);
    expect([value(exposition, 'filled'), value(exposition, 'skipped')]).toEqual([0, 0]);
  });

  it("follows the backend's totals at every scrape, and keeps the last ones when they cannot be read", async () => {
    const m = metrics({ backendKind: 'jetstream' });
    let totals: Record<string, number> | undefined = { live_gap_sequences_filled: 7, live_gap_sequences_skipped: 1 };
    const stats = async () => {
      if (totals === undefined) throw new Error('stats failed');
      return totals;
    };
    m.instrumentBackend({ ...failingBackend(new Error('unused')), stats });
    let exposition = await Exposition.of(m);
    expect([value(exposition, 'filled'), value(exposition, 'skipped')]).toEqual([7, 1]);
    totals = { live_gap_sequences_filled: 9, live_gap_sequences_skipped: 1 };
    exposition = await Exposition.of(m);
    expect([value(exposition, 'filled'), value(exposition, 'skipped')]).toEqual([9, 1]);
    totals = undefined;
    exposition = await Exposition.of(m);
    expect([value(exposition, 'filled'), value(exposition, 'skipped')]).toEqual([9, 1]);
  });
});

describe('aviso_memory_history_* (in-memory backend)', () => {
  it('start at 0 for every cause and for the bytes held', async () => {
    const exposition = await Exposition.of(metrics());
    expect(exposition.series('aviso_memory_history_evictions_total').map((s) => [s.labels.cause, s.value])).toEqual([
      ['bytes', 0],
      ['topics', 0],
      ['per_topic', 0],
    ]);
    expect(exposition.value('aviso_memory_history_bytes')).toBe(0);
  });

  it("follow the backend's evictions by cause and the bytes it holds", async () => {
    const m = metrics();
    const memory = new MemoryBackend({
      maxHistoryPerTopic: 2,
      maxTopics: 3,
      maxTotalBytes: 5 * 1034,
      clock: new ManualClock(),
      telemetry: m.memoryHistory,
    });
    // 1034 bytes each (1 KiB overhead, six-character topic, payload `null`).
    for (const topic of ['mars.a', 'mars.a', 'mars.a']) await memory.publish({ topic, payload: 'null' }); // 3rd: mars@1 per_topic
    for (const topic of ['mars.b', 'mars.c', 'mars.d']) await memory.publish({ topic, payload: 'null' }); // mars.d: topic mars.a (2) goes
    for (const topic of ['mars.b', 'mars.c', 'mars.d']) await memory.publish({ topic, payload: 'null' }); // the 5th held, then mars@4 for bytes
    let exposition = await Exposition.of(m);
    const stats = await memory.stats();
    expect(exposition.value('aviso_memory_history_evictions_total', { cause: 'per_topic' })).toBe(1);
    expect(exposition.value('aviso_memory_history_evictions_total', { cause: 'topics' })).toBe(2);
    expect(exposition.value('aviso_memory_history_evictions_total', { cause: 'bytes' })).toBe(1);
    expect(stats.total_messages).toBe(5);
    expect(exposition.value('aviso_memory_history_bytes')).toBe(stats.held_bytes);
    await memory.wipeAll();
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_memory_history_bytes')).toBe(0);
  });

  it('are not registered with the JetStream backend', async () => {
    const exposition = await Exposition.of(metrics({ backendKind: 'jetstream' }));
    expect(exposition.type('aviso_memory_history_evictions_total')).toBeUndefined();
    expect(exposition.type('aviso_memory_history_bytes')).toBeUndefined();
  });
});

describe('createPrometheusMetrics: inventory', () => {
  it('declares every metric with its type', async () => {
    const m = metrics();
    exerciseAll(m);
    const exposition = await Exposition.of(m);
    const expected: Record<string, string> = {
      aviso_build_info: 'gauge',
      aviso_http_requests_total: 'counter',
      aviso_http_request_duration_seconds: 'histogram',
      aviso_http_requests_in_flight: 'gauge',
      aviso_backend_operations_total: 'counter',
      aviso_backend_operation_duration_seconds: 'histogram',
      aviso_notifications_total: 'counter',
      aviso_notification_batches_total: 'counter',
      aviso_sse_connections_active: 'gauge',
      aviso_sse_connections_total: 'counter',
      aviso_sse_unique_users_active: 'gauge',
      aviso_sse_events_sent_total: 'counter',
      aviso_sse_history_gaps_total: 'counter',
      aviso_sse_sequence_resets_total: 'counter',
      aviso_sse_stream_errors_total: 'counter',
      aviso_sse_slow_consumer_closes_total: 'counter',
      aviso_sse_stream_resets_total: 'counter',
      aviso_sse_buffered_bytes: 'gauge',
      aviso_delivery_lag_seconds: 'histogram',
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
      aviso_jetstream_live_gap_sequences_total: 'counter',
      aviso_memory_history_evictions_total: 'counter',
      aviso_memory_history_bytes: 'gauge',
      aviso_sse_token_expiry_closes_total: 'counter',
      aviso_backend_connected: 'gauge',
      aviso_http_max_connections: 'gauge',
      aviso_sse_max_streams: 'gauge',
      aviso_sse_max_total_buffered_bytes: 'gauge',
      aviso_sse_streams_refused_total: 'counter',
      aviso_http_connections_refused_total: 'counter',
      aviso_idempotency_replays_total: 'counter',
      aviso_idempotency_conflicts_total: 'counter',
      aviso_idempotency_evictions_total: 'counter',
    };
    for (const [name, type] of Object.entries(expected)) expect({ name, type: exposition.type(name) }).toEqual({ name, type });
    const declared = [...exposition.body.matchAll(/^# TYPE (aviso_\w+) /gm)].map((match) => match[1]);
    expect(declared.sort()).toEqual(Object.keys(expected).sort());
  });

  it('uses exactly the specified label names', async () => {
    const m = metrics();
    exerciseAll(m);
    const exposition = await Exposition.of(m);
    const expected: Record<string, string[]> = {
      aviso_build_info: ['version'],
      aviso_http_requests_total: ['method', 'route', 'status_code'],
      aviso_http_request_duration_seconds: ['method', 'route'],
      aviso_http_requests_in_flight: ['method'],
      aviso_backend_operations_total: ['backend', 'operation', 'outcome'],
      aviso_backend_operation_duration_seconds: ['backend', 'operation', 'outcome'],
      aviso_notifications_total: ['event_type', 'status'],
      aviso_notification_batches_total: ['status'],
      aviso_sse_connections_active: ['event_type', 'route'],
      aviso_sse_connections_total: ['event_type', 'route'],
      aviso_sse_unique_users_active: ['route'],
      aviso_sse_events_sent_total: ['event_type', 'route'],
      aviso_sse_history_gaps_total: ['route', 'scope'],
      aviso_sse_sequence_resets_total: ['route'],
      aviso_sse_stream_errors_total: ['event_type', 'route'],
      aviso_sse_slow_consumer_closes_total: ['route', 'trigger'],
      aviso_sse_stream_resets_total: ['route'],
      aviso_sse_buffered_bytes: [],
      aviso_delivery_lag_seconds: ['backend'],
      aviso_sse_connection_duration_seconds: ['route'],
      aviso_auth_requests_total: ['mode', 'outcome'],
      aviso_config_reloads_total: ['result'],
      aviso_ecpds_cache_hits_total: [],
      aviso_ecpds_cache_misses_total: [],
      aviso_ecpds_cache_size: [],
      aviso_ecpds_access_decisions_total: ['outcome'],
      aviso_ecpds_fetch_total: ['outcome'],
      aviso_otlp_export_failures_total: [],
      aviso_otlp_suppressed_log_records_total: [],
      aviso_log_lines_dropped_total: [],
      aviso_log_lines_rate_limited_total: [],
      aviso_jetstream_live_gap_sequences_total: ['outcome'],
      aviso_memory_history_evictions_total: ['cause'],
      aviso_memory_history_bytes: [],
      aviso_sse_token_expiry_closes_total: ['route'],
      aviso_backend_connected: ['backend'],
      aviso_http_max_connections: [],
      aviso_sse_max_streams: [],
      aviso_sse_max_total_buffered_bytes: [],
      aviso_sse_streams_refused_total: ['route'],
      aviso_http_connections_refused_total: [],
      aviso_idempotency_replays_total: ['event_type'],
      aviso_idempotency_conflicts_total: ['event_type', 'reason'],
      aviso_idempotency_evictions_total: [],
    };
    for (const [name, labels] of Object.entries(expected)) {
      const sets = exposition.labelNames(name);
      expect(sets.length, name).toBeGreaterThan(0);
      for (const set of sets) expect({ name, set }).toEqual({ name, set: labels });
    }
  });

  it('uses the default buckets, and its own for the SSE connection duration', async () => {
    const m = metrics();
    exerciseAll(m);
    const exposition = await Exposition.of(m);
    expect(exposition.bucketBounds('aviso_http_request_duration_seconds', { route: '/health', method: 'GET' })).toEqual(DEFAULT_BUCKETS);
    expect(
      exposition.bucketBounds('aviso_backend_operation_duration_seconds', { backend: 'in_memory', operation: 'publish', outcome: 'ok' }),
    ).toEqual(DEFAULT_BUCKETS);
    expect(exposition.bucketBounds('aviso_sse_connection_duration_seconds', { route: WATCH })).toEqual(SSE_BUCKETS);
  });

  it('exposes the required process metrics', async () => {
    const exposition = await Exposition.of(metrics());
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_virtual_memory_bytes',
      'process_open_fds',
      'process_max_fds',
      'process_start_time_seconds',
    ]) {
      expect(exposition.series(name), name).toHaveLength(1);
    }
  });

  it('keeps its metrics in a dedicated registry, not the global one', async () => {
    const first = metrics();
    const second = metrics({ version: '9.9.9' });
    first.notification('mars', 'success');
    expect(await globalRegister.metrics()).not.toContain('aviso_');
    expect((await Exposition.of(second)).value('aviso_notifications_total', { event_type: 'mars', status: 'success' })).toBe(0);
    expect((await Exposition.of(second)).value('aviso_build_info', { version: '1.2.3' })).toBeUndefined();
  });

  it('renders with the Prometheus text content type', async () => {
    expect((await metrics().render()).contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });
});

describe('createPrometheusMetrics: series that exist from startup', () => {
  it('sets build info to 1 with the version', async () => {
    const exposition = await Exposition.of(metrics());
    expect(exposition.series('aviso_build_info')).toEqual([{ name: 'aviso_build_info', labels: { version: '1.2.3' }, value: 1 }]);
  });

  it('creates both auth modes times all four outcomes at 0', async () => {
    const exposition = await Exposition.of(metrics());
    const series = exposition.series('aviso_auth_requests_total');
    expect(series).toHaveLength(8);
    for (const mode of ['direct', 'trusted_proxy']) {
      for (const outcome of ['success', 'unauthorized', 'forbidden', 'service_unavailable']) {
        expect(exposition.value('aviso_auth_requests_total', { mode, outcome })).toBe(0);
      }
    }
  });

  it('creates unknown error/rejected and success/error for every configured schema', async () => {
    const exposition = await Exposition.of(metrics({ eventTypes: ['mars', 'diss', 'test_polygon'] }));
    const series = exposition.series('aviso_notifications_total').map((s) => `${s.labels.event_type}/${s.labels.status}=${s.value}`);
    expect(series.sort()).toEqual(
      [
        'unknown/error=0',
        'unknown/rejected=0',
        'mars/success=0',
        'mars/error=0',
        'diss/success=0',
        'diss/error=0',
        'test_polygon/success=0',
        'test_polygon/error=0',
      ].sort(),
    );
  });

  it('creates the configured backend times five operations times two outcomes, counter and histogram', async () => {
    const exposition = await Exposition.of(metrics({ backendKind: 'jetstream' }));
    expect(exposition.series('aviso_backend_operations_total')).toHaveLength(10);
    expect(exposition.series('aviso_backend_operation_duration_seconds_count')).toHaveLength(10);
    for (const operation of OPERATIONS) {
      for (const outcome of ['ok', 'error']) {
        const labels = { backend: 'jetstream', operation, outcome };
        expect(exposition.value('aviso_backend_operations_total', labels)).toBe(0);
        expect(exposition.value('aviso_backend_operation_duration_seconds_count', labels)).toBe(0);
        expect(exposition.value('aviso_backend_operation_duration_seconds_sum', labels)).toBe(0);
        expect(exposition.bucketBounds('aviso_backend_operation_duration_seconds', labels)).toEqual(DEFAULT_BUCKETS);
      }
    }
    expect(exposition.body).not.toContain('backend="in_memory"');
  });

  it('creates every ECPDS series at 0', async () => {
    const exposition = await Exposition.of(metrics());
    expect(exposition.value('aviso_ecpds_cache_hits_total')).toBe(0);
    expect(exposition.value('aviso_ecpds_cache_misses_total')).toBe(0);
    expect(exposition.value('aviso_ecpds_cache_size')).toBe(0);
    const decisions = ['allow', 'deny_destination', 'deny_match_key_missing', 'unavailable', 'admin_bypass', 'error'];
    expect(exposition.series('aviso_ecpds_access_decisions_total')).toHaveLength(6);
    for (const outcome of decisions) expect(exposition.value('aviso_ecpds_access_decisions_total', { outcome })).toBe(0);
    const fetches = ['success', 'http_401', 'http_403', 'http_4xx', 'http_5xx', 'invalid_response', 'unreachable'];
    expect(exposition.series('aviso_ecpds_fetch_total')).toHaveLength(7);
    for (const outcome of fetches) expect(exposition.value('aviso_ecpds_fetch_total', { outcome })).toBe(0);
  });

  it('creates HTTP and SSE series only on first use', async () => {
    const exposition = await Exposition.of(metrics());
    for (const name of [
      'aviso_http_requests_total',
      'aviso_http_request_duration_seconds_count',
      'aviso_http_requests_in_flight',
      'aviso_sse_connections_active',
      'aviso_sse_connections_total',
      'aviso_sse_unique_users_active',
      'aviso_sse_events_sent_total',
      'aviso_sse_stream_errors_total',
      'aviso_sse_connection_duration_seconds_count',
    ]) {
      expect(exposition.series(name), name).toEqual([]);
    }
  });
});

describe('createPrometheusMetrics: HTTP', () => {
  it('counts a completed request and observes its duration', async () => {
    const m = metrics();
    m.httpRequestCompleted('/api/v1/notification', 'POST', 400, 0.03);
    m.httpRequestCompleted('/api/v1/notification', 'POST', 400, 0.2);
    m.httpRequestCompleted('/api/v1/notification', 'POST', 200, 0.004);
    const exposition = await Exposition.of(m);
    const route = '/api/v1/notification';
    expect(exposition.value('aviso_http_requests_total', { route, method: 'POST', status_code: '400' })).toBe(2);
    expect(exposition.value('aviso_http_requests_total', { route, method: 'POST', status_code: '200' })).toBe(1);
    const labels = { route, method: 'POST' };
    expect(exposition.value('aviso_http_request_duration_seconds_count', labels)).toBe(3);
    expect(exposition.value('aviso_http_request_duration_seconds_sum', labels)).toBeCloseTo(0.234, 9);
    expect(exposition.value('aviso_http_request_duration_seconds_bucket', { ...labels, le: '0.005' })).toBe(1);
    expect(exposition.value('aviso_http_request_duration_seconds_bucket', { ...labels, le: '0.05' })).toBe(2);
    expect(exposition.value('aviso_http_request_duration_seconds_bucket', { ...labels, le: '0.25' })).toBe(3);
  });

  it('buckets unknown methods as other', async () => {
    const m = metrics();
    m.httpRequestStarted('PROPFIND')();
    m.httpRequestCompleted('unmatched', 'PROPFIND', 404, 0.001);
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_http_requests_total', { route: 'unmatched', method: 'other', status_code: '404' })).toBe(1);
    expect(exposition.value('aviso_http_requests_in_flight', { method: 'other' })).toBe(0);
    expect(exposition.body).not.toContain('PROPFIND');
  });

  it('records an unusable duration as 0 instead of throwing', async () => {
    const m = metrics();
    m.httpRequestCompleted('/health', 'GET', 200, Number.NaN);
    m.httpRequestCompleted('/health', 'GET', 200, -1);
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_http_request_duration_seconds_count', { route: '/health', method: 'GET' })).toBe(2);
    expect(exposition.value('aviso_http_request_duration_seconds_sum', { route: '/health', method: 'GET' })).toBe(0);
  });

  it('tracks requests in flight per method', async () => {
    const m = metrics();
    const endGet = m.httpRequestStarted('GET');
    m.httpRequestStarted('GET');
    const endPost = m.httpRequestStarted('POST');
    let exposition = await Exposition.of(m);
    expect(exposition.value('aviso_http_requests_in_flight', { method: 'GET' })).toBe(2);
    expect(exposition.value('aviso_http_requests_in_flight', { method: 'POST' })).toBe(1);
    endGet();
    endPost();
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_http_requests_in_flight', { method: 'GET' })).toBe(1);
    expect(exposition.value('aviso_http_requests_in_flight', { method: 'POST' })).toBe(0);
  });

  it('ends a request once however many times it is ended, so the gauge never goes below 0', async () => {
    const m = metrics();
    const endFirst = m.httpRequestStarted('GET');
    const endSecond = m.httpRequestStarted('GET');
    // Both the response head and an abort end the same request.
    endFirst();
    endFirst();
    endFirst();
    expect((await Exposition.of(m)).value('aviso_http_requests_in_flight', { method: 'GET' })).toBe(1);
    endSecond();
    endSecond();
    expect((await Exposition.of(m)).value('aviso_http_requests_in_flight', { method: 'GET' })).toBe(0);
  });

  it('does not leak across many double-ended requests', async () => {
    const m = metrics();
    for (let index = 0; index < 500; index++) {
      const end = m.httpRequestStarted(index % 2 === 0 ? 'GET' : 'POST');
      end();
      end();
    }
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_http_requests_in_flight', { method: 'GET' })).toBe(0);
    expect(exposition.value('aviso_http_requests_in_flight', { method: 'POST' })).toBe(0);
  });
});

describe('createPrometheusMetrics: notifications and auth', () => {
  it('counts notify results by event type and status', async () => {
    const m = metrics();
    m.notification('mars', 'success');
    m.notification('mars', 'success');
    m.notification('generic', 'success');
    m.notification('unknown', 'rejected');
    m.notification('diss', 'error');
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_notifications_total', { event_type: 'mars', status: 'success' })).toBe(2);
    expect(exposition.value('aviso_notifications_total', { event_type: 'generic', status: 'success' })).toBe(1);
    expect(exposition.value('aviso_notifications_total', { event_type: 'unknown', status: 'rejected' })).toBe(1);
    expect(exposition.value('aviso_notifications_total', { event_type: 'unknown', status: 'error' })).toBe(0);
    expect(exposition.value('aviso_notifications_total', { event_type: 'diss', status: 'error' })).toBe(1);
  });

  it('keeps one series for a thousand unknown event types passed through eventTypeLabel', async () => {
    const m = metrics();
    const configured = new Set(['mars', 'diss']);
    for (let index = 0; index < 1000; index++) m.notification(eventTypeLabel(configured, `random-${index}`, false), 'success');
    const exposition = await Exposition.of(m);
    const generic = exposition
      .series('aviso_notifications_total')
      .filter((s) => !['mars', 'diss', 'unknown'].includes(String(s.labels.event_type)));
    expect(generic).toEqual([{ name: 'aviso_notifications_total', labels: { event_type: 'generic', status: 'success' }, value: 1000 }]);
    expect(exposition.body).not.toContain('random-');
  });

  it('counts auth middleware results', async () => {
    const m = metrics();
    m.authRequest('trusted_proxy', 'unauthorized');
    m.authRequest('direct', 'service_unavailable');
    m.authRequest('direct', 'service_unavailable');
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_auth_requests_total', { mode: 'trusted_proxy', outcome: 'unauthorized' })).toBe(1);
    expect(exposition.value('aviso_auth_requests_total', { mode: 'direct', outcome: 'service_unavailable' })).toBe(2);
    expect(exposition.value('aviso_auth_requests_total', { mode: 'direct', outcome: 'success' })).toBe(0);
  });
});

describe('createPrometheusMetrics: SSE', () => {
  it('counts an opened stream as active and in the total', async () => {
    const m = metrics();
    m.streamOpened(WATCH, 'mars', 'alice');
    m.streamOpened(WATCH, 'mars', undefined);
    m.streamOpened(REPLAY, 'diss', 'bob');
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_connections_active', { route: WATCH, event_type: 'mars' })).toBe(2);
    expect(exposition.value('aviso_sse_connections_total', { route: WATCH, event_type: 'mars' })).toBe(2);
    expect(exposition.value('aviso_sse_connections_active', { route: REPLAY, event_type: 'diss' })).toBe(1);
  });

  it('releases a closed stream: active back down, total kept, duration observed once', async () => {
    const m = metrics();
    m.streamOpened(WATCH, 'mars', 'alice');
    m.streamClosed(WATCH, 'mars', 'alice', 42);
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_connections_active', { route: WATCH, event_type: 'mars' })).toBe(0);
    expect(exposition.value('aviso_sse_connections_total', { route: WATCH, event_type: 'mars' })).toBe(1);
    expect(exposition.value('aviso_sse_connection_duration_seconds_count', { route: WATCH })).toBe(1);
    expect(exposition.value('aviso_sse_connection_duration_seconds_sum', { route: WATCH })).toBe(42);
    expect(exposition.value('aviso_sse_connection_duration_seconds_bucket', { route: WATCH, le: '30' })).toBe(0);
    expect(exposition.value('aviso_sse_connection_duration_seconds_bucket', { route: WATCH, le: '60' })).toBe(1);
  });

  it('ignores a close without a matching open stream, so gauges never go below 0', async () => {
    const m = metrics();
    m.streamOpened(WATCH, 'mars', 'alice');
    m.streamClosed(WATCH, 'mars', 'alice', 1);
    m.streamClosed(WATCH, 'mars', 'alice', 1);
    m.streamClosed(REPLAY, 'mars', 'alice', 1);
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_connections_active', { route: WATCH, event_type: 'mars' })).toBe(0);
    expect(exposition.value('aviso_sse_unique_users_active', { route: WATCH })).toBe(0);
    expect(exposition.value('aviso_sse_connection_duration_seconds_count', { route: WATCH })).toBe(1);
    expect(exposition.series('aviso_sse_connection_duration_seconds_count')).toHaveLength(1);
  });

  it('counts a user with two open streams once, until both have closed', async () => {
    const m = metrics();
    const unique = async () => (await Exposition.of(m)).value('aviso_sse_unique_users_active', { route: WATCH });
    m.streamOpened(WATCH, 'mars', 'alice');
    m.streamOpened(WATCH, 'diss', 'alice');
    expect(await unique()).toBe(1);
    m.streamOpened(WATCH, 'mars', 'bob');
    expect(await unique()).toBe(2);
    m.streamClosed(WATCH, 'mars', 'alice', 1);
    expect(await unique()).toBe(2);
    m.streamClosed(WATCH, 'diss', 'alice', 1);
    expect(await unique()).toBe(1);
    m.streamClosed(WATCH, 'mars', 'bob', 1);
    expect(await unique()).toBe(0);
  });

  it('does not count anonymous streams as users', async () => {
    const m = metrics();
    m.streamOpened(WATCH, 'mars', undefined);
    m.streamOpened(WATCH, 'mars', undefined);
    m.streamOpened(WATCH, 'mars', 'alice');
    let exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_unique_users_active', { route: WATCH })).toBe(1);
    expect(exposition.value('aviso_sse_connections_active', { route: WATCH, event_type: 'mars' })).toBe(3);
    m.streamClosed(WATCH, 'mars', undefined, 1);
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_unique_users_active', { route: WATCH })).toBe(1);
  });

  it('counts unique users per route', async () => {
    const m = metrics();
    m.streamOpened(WATCH, 'mars', 'alice');
    m.streamOpened(REPLAY, 'mars', 'alice');
    m.streamOpened(REPLAY, 'mars', 'bob');
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_unique_users_active', { route: WATCH })).toBe(1);
    expect(exposition.value('aviso_sse_unique_users_active', { route: REPLAY })).toBe(2);
  });

  it('counts notification frames and error events', async () => {
    const m = metrics();
    m.notificationSent(REPLAY, 'mars');
    m.notificationSent(REPLAY, 'mars');
    m.notificationSent(WATCH, 'generic');
    m.streamErrorSent(WATCH, 'generic');
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_events_sent_total', { route: REPLAY, event_type: 'mars' })).toBe(2);
    expect(exposition.value('aviso_sse_events_sent_total', { route: WATCH, event_type: 'generic' })).toBe(1);
    expect(exposition.value('aviso_sse_stream_errors_total', { route: WATCH, event_type: 'generic' })).toBe(1);
  });
});

describe('createPrometheusMetrics: slow consumers and stalls (D37)', () => {
  it('has every route × trigger series at 0 from startup and counts each close under its trigger', async () => {
    const m = metrics();
    let exposition = await Exposition.of(m);
    expect(exposition.series('aviso_sse_slow_consumer_closes_total')).toHaveLength(8);
    expect(exposition.series('aviso_sse_stream_resets_total')).toHaveLength(2);
    m.slowConsumerClosed(WATCH, 'buffered_bytes');
    m.slowConsumerClosed(WATCH, 'buffered_bytes');
    m.slowConsumerClosed('/api/v1/replay', 'stalled');
    m.streamReset(WATCH);
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_slow_consumer_closes_total', { route: WATCH, trigger: 'buffered_bytes' })).toBe(2);
    expect(exposition.value('aviso_sse_slow_consumer_closes_total', { route: '/api/v1/replay', trigger: 'stalled' })).toBe(1);
    expect(exposition.value('aviso_sse_slow_consumer_closes_total', { route: WATCH, trigger: 'stalled' })).toBe(0);
    expect(exposition.value('aviso_sse_stream_resets_total', { route: WATCH })).toBe(1);
  });

  it('observes each live delivery lag under the backend, never below 0', async () => {
    const m = metrics();
    let exposition = await Exposition.of(m);
    expect(exposition.value('aviso_delivery_lag_seconds_count', { backend: 'in_memory' })).toBe(0);
    // Accepted 4 ms and 200 ms ago, and (a broker clock ahead of ours) 10 ms in the future.
    const acceptedAgo = (ms: number): bigint => BigInt(Date.now() - ms) * 1_000_000n;
    m.deliveryLag(acceptedAgo(4));
    m.deliveryLag(acceptedAgo(200));
    m.deliveryLag(acceptedAgo(-10));
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_delivery_lag_seconds_count', { backend: 'in_memory' })).toBe(3);
    expect(exposition.value('aviso_delivery_lag_seconds_bucket', { backend: 'in_memory', le: '0.001' })).toBe(1);
    expect(exposition.value('aviso_delivery_lag_seconds_bucket', { backend: 'in_memory', le: '0.1' })).toBe(2);
    expect(exposition.value('aviso_delivery_lag_seconds_bucket', { backend: 'in_memory', le: '30' })).toBe(3);
    const sum = exposition.value('aviso_delivery_lag_seconds_sum', { backend: 'in_memory' });
    expect(sum).toBeGreaterThanOrEqual(0.204);
    expect(sum).toBeLessThan(1);
  });

  it('reads the bytes held for clients at every scrape', async () => {
    const m = metrics();
    let held = 0;
    m.observeStreamBuffers(() => held);
    expect((await Exposition.of(m)).value('aviso_sse_buffered_bytes', {})).toBe(0);
    held = 12345;
    expect((await Exposition.of(m)).value('aviso_sse_buffered_bytes', {})).toBe(12345);
  });
});

describe('createPrometheusMetrics: ECPDS telemetry', () => {
  it('records cache hits, misses, size, fetches and decisions', async () => {
    const m = metrics();
    m.ecpds.cacheMiss();
    m.ecpds.fetched('http_5xx');
    m.ecpds.decided('unavailable');
    m.ecpds.cacheSize(0);
    m.ecpds.cacheMiss();
    m.ecpds.fetched('success');
    m.ecpds.decided('allow');
    m.ecpds.cacheSize(1);
    m.ecpds.cacheHit();
    m.ecpds.decided('deny_destination');
    m.ecpds.cacheSize(1);
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_ecpds_cache_hits_total')).toBe(1);
    expect(exposition.value('aviso_ecpds_cache_misses_total')).toBe(2);
    expect(exposition.value('aviso_ecpds_cache_size')).toBe(1);
    expect(exposition.value('aviso_ecpds_fetch_total', { outcome: 'http_5xx' })).toBe(1);
    expect(exposition.value('aviso_ecpds_fetch_total', { outcome: 'success' })).toBe(1);
    expect(exposition.value('aviso_ecpds_access_decisions_total', { outcome: 'unavailable' })).toBe(1);
    expect(exposition.value('aviso_ecpds_access_decisions_total', { outcome: 'allow' })).toBe(1);
    expect(exposition.value('aviso_ecpds_access_decisions_total', { outcome: 'deny_destination' })).toBe(1);
    expect(exposition.value('aviso_ecpds_access_decisions_total', { outcome: 'error' })).toBe(0);
  });
});

describe('instrumentBackend', () => {
  const op = (operation: string, outcome: string, backend = 'in_memory') => ({ backend, operation, outcome });

  it('counts and times successful operations of a real backend', async () => {
    const m = metrics();
    const memory = memoryBackend();
    const backend = m.instrumentBackend(memory);
    expect(backend.kind).toBe('in_memory');
    expect(await backend.publish({ topic: 'mars.a', payload: 'null' })).toEqual({ sequence: 1 });
    await backend.publish({ topic: 'mars.b', payload: 'null' });
    const batch = await backend.fetchBatch({
      pattern: new TopicPattern(['mars', '*']),
      start: { kind: 'sequence', sequence: 0 },
      limit: 10,
      upperBound: 10,
    });
    expect(batch.messages.map((message) => message.sequence)).toEqual([1, 2]);
    expect(await backend.deleteMessage('mars', 1)).toBe('deleted');
    await backend.wipeStream('mars');
    await backend.wipeAll();
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_backend_operations_total', op('publish', 'ok'))).toBe(2);
    expect(exposition.value('aviso_backend_operations_total', op('get_batch', 'ok'))).toBe(1);
    expect(exposition.value('aviso_backend_operations_total', op('delete_message', 'ok'))).toBe(1);
    expect(exposition.value('aviso_backend_operations_total', op('wipe_stream', 'ok'))).toBe(1);
    expect(exposition.value('aviso_backend_operations_total', op('wipe_all', 'ok'))).toBe(1);
    expect(exposition.value('aviso_backend_operation_duration_seconds_count', op('publish', 'ok'))).toBe(2);
    expect(exposition.value('aviso_backend_operation_duration_seconds_count', op('get_batch', 'ok'))).toBe(1);
    for (const operation of OPERATIONS) expect(exposition.value('aviso_backend_operations_total', op(operation, 'error'))).toBe(0);
  });

  it('counts a not_found delete as ok', async () => {
    const m = metrics();
    const backend = m.instrumentBackend(memoryBackend());
    expect(await backend.deleteMessage('mars', 99)).toBe('not_found');
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_backend_operations_total', op('delete_message', 'ok'))).toBe(1);
    expect(exposition.value('aviso_backend_operations_total', op('delete_message', 'error'))).toBe(0);
  });

  it('counts a rejected call as error and passes the same error on', async () => {
    const m = metrics();
    const faulty = new FaultyBackend(memoryBackend());
    faulty.failFetchCalls.add(1);
    const backend = m.instrumentBackend(faulty);
    const request = {
      pattern: new TopicPattern(['mars', '*']),
      start: { kind: 'sequence', sequence: 0 },
      limit: 1,
      upperBound: 1,
    } as const;
    await expect(backend.fetchBatch(request)).rejects.toThrow('injected failure of fetch 1');
    await backend.fetchBatch(request);
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_backend_operations_total', op('get_batch', 'error'))).toBe(1);
    expect(exposition.value('aviso_backend_operations_total', op('get_batch', 'ok'))).toBe(1);
    expect(exposition.value('aviso_backend_operation_duration_seconds_count', op('get_batch', 'error'))).toBe(1);
  });

  it('counts every timed operation of a failing backend as error, a synchronous throw included', async () => {
    const m = metrics({ backendKind: 'jetstream' });
    const failure = new Error('nats down');
    const failing = failingBackend(failure);
    const backend = m.instrumentBackend(failing);
    await expect(backend.publish({ topic: 'mars.a', payload: 'null' })).rejects.toBe(failure);
    await expect(
      backend.fetchBatch({ pattern: new TopicPattern(['mars']), start: { kind: 'sequence', sequence: 0 }, limit: 1, upperBound: 1 }),
    ).rejects.toBe(failure);
    await expect(backend.deleteMessage('mars', 1)).rejects.toBe(failure);
    await expect(backend.wipeStream('mars')).rejects.toBe(failure);
    await expect(backend.wipeAll()).rejects.toBe(failure);
    const exposition = await Exposition.of(m);
    for (const operation of OPERATIONS) {
      expect(exposition.value('aviso_backend_operations_total', op(operation, 'error', 'jetstream')), operation).toBe(1);
      expect(exposition.value('aviso_backend_operations_total', op(operation, 'ok', 'jetstream')), operation).toBe(0);
      expect(exposition.value('aviso_backend_operation_duration_seconds_count', op(operation, 'error', 'jetstream'))).toBe(1);
    }
  });

  it('counts each notification of a publishMany as one publish with its own outcome (D48)', async () => {
    const m = metrics({ backendKind: 'jetstream' });
    const failure = new Error('nats down');
    const backend = m.instrumentBackend({
      ...failingBackend(failure),
      publishMany: async () => [
        { stored: true, sequence: 1 },
        { stored: false, error: failure, sent: true },
        { stored: false, error: failure, sent: false },
      ],
    });
    const outcomes = await backend.publishMany([1, 2, 3].map((n) => ({ topic: `mars.${n}`, payload: 'null' })));
    expect(outcomes.map((outcome) => outcome.stored)).toEqual([true, false, false]);
    const exposition = await Exposition.of(m);
    expect(exposition.value('aviso_backend_operations_total', op('publish', 'ok', 'jetstream'))).toBe(1);
    expect(exposition.value('aviso_backend_operations_total', op('publish', 'error', 'jetstream'))).toBe(2);
    expect(exposition.value('aviso_backend_operation_duration_seconds_count', op('publish', 'error', 'jetstream'))).toBe(2);
  });

  it('forwards subscribe, history bounds, stats, the connection state and shutdown without timing them', async () => {
    const m = metrics();
    const memory = memoryBackend();
    const backend = m.instrumentBackend(memory);
    const delivered: number[] = [];
    const subscription = await backend.subscribe(new TopicPattern(['mars', '*']), {
      deliver: (notification) => delivered.push(notification.sequence),
      end: () => undefined,
    });
    expect(subscription.historyBound).toBe(0);
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    expect(delivered).toEqual([1]);
    expect(await backend.captureHistoryBound(new TopicPattern(['mars', '*']))).toBe(1);
    expect(await backend.stats()).toEqual(await memory.stats());
    expect(backend.isConnected()).toBe(true);
    expect(m.instrumentBackend(failingBackend(new Error('down'))).isConnected()).toBe(false);
    subscription.close();
    await backend.shutdown();
    const exposition = await Exposition.of(m);
    expect(exposition.series('aviso_backend_operations_total').every((sample) => sample.value === 0)).toBe(true);
    expect(exposition.series('aviso_backend_operations_total')).toHaveLength(10);
  });
});

describe('createPrometheusMetrics: capacity (the dashboard and alert rules of deploy/)', () => {
  it('has both routes of aviso_sse_token_expiry_closes_total at 0 from startup and counts each close', async () => {
    const m = metrics();
    let exposition = await Exposition.of(m);
    expect(exposition.series('aviso_sse_token_expiry_closes_total')).toHaveLength(2);
    expect(exposition.value('aviso_sse_token_expiry_closes_total', { route: REPLAY })).toBe(0);
    m.tokenExpiryClosed(WATCH);
    m.tokenExpiryClosed(WATCH);
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_token_expiry_closes_total', { route: WATCH })).toBe(2);
    expect(exposition.value('aviso_sse_token_expiry_closes_total', { route: REPLAY })).toBe(0);
  });

  it("reads the instrumented backend's connection state at every scrape", async () => {
    const m = metrics({ backendKind: 'jetstream' });
    let connected = true;
    m.instrumentBackend({ ...failingBackend(new Error('unused')), isConnected: () => connected });
    expect((await Exposition.of(m)).value('aviso_backend_connected', { backend: 'jetstream' })).toBe(1);
    connected = false;
    expect((await Exposition.of(m)).value('aviso_backend_connected', { backend: 'jetstream' })).toBe(0);
    connected = true;
    expect((await Exposition.of(m)).value('aviso_backend_connected', { backend: 'jetstream' })).toBe(1);
  });

  it('says 0 (not connected) before any backend is instrumented', async () => {
    expect((await Exposition.of(metrics())).value('aviso_backend_connected', { backend: 'in_memory' })).toBe(0);
  });

  it('exposes the configured limits, and no limit series when none were given', async () => {
    const exposition = await Exposition.of(
      metrics({ limits: { maxConnections: 11_000, maxStreams: 10_000, maxTotalBufferedBytes: 268_435_456 } }),
    );
    expect(exposition.value('aviso_http_max_connections')).toBe(11_000);
    expect(exposition.value('aviso_sse_max_streams')).toBe(10_000);
    expect(exposition.value('aviso_sse_max_total_buffered_bytes')).toBe(268_435_456);
    const without = await Exposition.of(createPrometheusMetrics({ version: '1', backendKind: 'in_memory', eventTypes: [] }));
    expect(without.series('aviso_http_max_connections')).toEqual([]);
    expect(without.series('aviso_sse_max_streams')).toEqual([]);
    expect(without.series('aviso_sse_max_total_buffered_bytes')).toEqual([]);
  });

  it('has both routes of aviso_sse_streams_refused_total and aviso_http_connections_refused_total at 0 from startup, and counts each refusal (D44)', async () => {
    const m = metrics();
    let exposition = await Exposition.of(m);
    expect(exposition.series('aviso_sse_streams_refused_total')).toHaveLength(2);
    expect(exposition.value('aviso_sse_streams_refused_total', { route: WATCH })).toBe(0);
    expect(exposition.value('aviso_http_connections_refused_total')).toBe(0);
    m.streamRefused(REPLAY);
    m.streamRefused(REPLAY);
    m.connectionRefused();
    exposition = await Exposition.of(m);
    expect(exposition.value('aviso_sse_streams_refused_total', { route: REPLAY })).toBe(2);
    expect(exposition.value('aviso_sse_streams_refused_total', { route: WATCH })).toBe(0);
    expect(exposition.value('aviso_http_connections_refused_total')).toBe(1);
  });
});

/** Every timed operation fails; `publish` throws synchronously, the others reject. */
function failingBackend(failure: Error): NotificationBackend {
  const reject = () => Promise.reject(failure);
  return {
    kind: 'jetstream',
    applySchemas: reject,
    publish: () => {
      throw failure;
    },
    publishMany: reject,
    subscribe: reject,
    captureHistoryBound: reject,
    fetchBatch: reject,
    openReplay: async () => ({ next: reject, close: () => undefined }),
    deleteMessage: reject,
    wipeStream: reject,
    wipeAll: reject,
    stats: reject,
    isConnected: () => false,
    shutdown: async () => undefined,
    idempotency: { begin: reject, complete: reject, abandon: reject },
  };
}

describe('createDisabledMetrics', () => {
  it('records nothing and renders an empty body', async () => {
    const m = createDisabledMetrics();
    expect(m.enabled).toBe(false);
    exerciseAll(m);
    m.httpRequestStarted('GET')();
    m.ecpds.cacheHit();
    m.ecpds.fetched('success');
    m.ecpds.decided('allow');
    m.ecpds.cacheSize(3);
    const rendered = await m.render();
    expect(rendered.body).toBe('');
    expect(rendered.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await globalRegister.metrics()).not.toContain('aviso_');
  });

  it('returns the backend itself', () => {
    const memory = memoryBackend();
    expect(createDisabledMetrics().instrumentBackend(memory)).toBe(memory);
  });
});
