import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, prometheusContentType } from 'prom-client';
import {
  DECISION_OUTCOMES,
  FETCH_OUTCOMES,
  noopEcpdsTelemetry,
  type EcpdsTelemetry,
} from '../auth/ecpds/ecpds-telemetry.js';
import type {
  Batch,
  BackendKind,
  BackendStats,
  DeleteOutcome,
  WipeOutcome,
  FetchRequest,
  LiveSink,
  LiveSubscription,
  NotificationBackend,
  NotificationToStore,
  PublishOptions,
  PublishResult,
  ReplayCursor,
  ReplayRequest,
  SchemaStorage,
} from '../backend/backend.js';
import type { IdempotencyRecords } from '../backend/idempotency-records.js';
import { noopMemoryHistoryTelemetry, type MemoryHistoryTelemetry } from '../backend/memory/history-telemetry.js';
import type { TopicPattern } from '../topic/topic-pattern.js';
import type { AuthModeLabel, AuthOutcome, AvisoMetrics, ConfigReloadResult, NotificationStatus, SseRoute } from './aviso-metrics.js';
import { registerCapacityMetrics, type CapacityLimits, type CapacityMetrics } from './capacity-metrics.js';
import { UNKNOWN_EVENT_TYPE, methodLabel } from './labels.js';
import { registerLiveGapMetrics, type LiveGapMetrics } from './live-gap-metrics.js';
import { registerMemoryHistoryMetrics } from './memory-history-metrics.js';
import { registerIdempotencyMetrics } from './idempotency-metrics.js';
import { noopIdempotencyTelemetry, type IdempotencyTelemetry } from '../idempotency/idempotency-telemetry.js';
import { registerOtlpMetrics } from './otlp-metrics.js';
import { defineStreamBufferMetrics, type StreamBufferMetrics } from './stream-buffer-metrics.js';
import type { SlowConsumerTrigger } from '../streaming/stream-request.js';
import type { OtlpExportStats } from '../logging/otlp/export-gate.js';

/** Histogram buckets unless stated otherwise (operations.md §3.3.2); spelled out so a library upgrade cannot move them. */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** `aviso_sse_connection_duration_seconds`: streams live from seconds to a day. */
export const SSE_DURATION_BUCKETS: readonly number[] = [
  1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400,
];

export const AUTH_MODES: readonly AuthModeLabel[] = ['direct', 'trusted_proxy'];
export const AUTH_OUTCOMES: readonly AuthOutcome[] = ['success', 'unauthorized', 'forbidden', 'service_unavailable'];
export const CONFIG_RELOAD_RESULTS: readonly ConfigReloadResult[] = ['success', 'failure'];
export const BACKEND_OPERATIONS = ['publish', 'get_batch', 'wipe_stream', 'wipe_all', 'delete_message'] as const;
export type BackendOperation = (typeof BACKEND_OPERATIONS)[number];
export const BACKEND_OUTCOMES = ['ok', 'error'] as const;
export type BackendOutcome = (typeof BACKEND_OUTCOMES)[number];

export interface PrometheusMetricsOptions {
  /** Server package version, the `version` label of `aviso_build_info`. */
  readonly version: string;
  /** The configured `notification_backend.kind`, the `backend` label. */
  readonly backendKind: BackendKind;
  /** Configured schema names, whose notification series exist from startup (§3.3.5). */
  readonly eventTypes: readonly string[];
  /** The OTLP log export's totals (`aviso_otlp_*`); absent when export is disabled. */
  readonly otlpStats?: () => OtlpExportStats;
  /** The configured connection and buffer limits (`aviso_http_max_connections`, `aviso_sse_max_total_buffered_bytes`). */
  readonly limits?: CapacityLimits;
  /** Labels on prom-client's process metrics: `worker` in a worker of several processes (D36). */
  readonly processLabels?: Readonly<Record<string, string>>;
}

/** A registry's metrics as plain data (`Registry.getMetricsAsJSON`), what prom-client aggregates. */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** One process's metrics as its primary aggregates them (D36, src/runtime/cluster-metrics.ts). */
export interface MetricsSnapshot {
  readonly metrics: MetricsJson;
  /** Per SSE route, the authenticated usernames with an open stream, so users are counted once across processes. */
  readonly streamUsers: Readonly<Partial<Record<SseRoute, readonly string[]>>>;
}

export interface PrometheusAvisoMetrics extends AvisoMetrics {
  snapshot(): Promise<MetricsSnapshot>;
}

/** All metrics in one dedicated registry, so nothing depends on prom-client's global one. */
export function createPrometheusMetrics(options: PrometheusMetricsOptions): PrometheusAvisoMetrics {
  const register = new Registry();
  collectDefaultMetrics({ register, ...(options.processLabels ? { labels: { ...options.processLabels } } : {}) });
  const core = defineCoreMetrics(register);
  const ecpds = defineEcpdsMetrics(register);
  precreateSeries(options, core, ecpds);
  registerOtlpMetrics(register, options.otlpStats);
  const streamBuffers = defineStreamBufferMetrics(register, options.backendKind);
  const liveGaps = registerLiveGapMetrics(register);
  const capacity = registerCapacityMetrics(register, options.backendKind, options.limits);
  const memoryHistory =
    options.backendKind === 'in_memory' ? registerMemoryHistoryMetrics(register) : noopMemoryHistoryTelemetry;
  return new PrometheusMetrics(register, core, createEcpdsTelemetry(ecpds), memoryHistory, options.backendKind, {
    streamBuffers,
    liveGaps,
    capacity,
    idempotency: registerIdempotencyMetrics(register, options.eventTypes),
  });
}

/** Metrics disabled: nothing is collected, nothing is registered, backends are not wrapped. */
export function createDisabledMetrics(): AvisoMetrics {
  return {
    enabled: false,
    httpRequestStarted: () => () => undefined,
    httpRequestCompleted: () => undefined,
    notification: () => undefined,
    streamOpened: () => undefined,
    streamClosed: () => undefined,
    notificationSent: () => undefined,
    notificationCounter: () => () => undefined,
    streamErrorSent: () => undefined,
    slowConsumerClosed: () => undefined,
    streamReset: () => undefined,
    tokenExpiryClosed: () => undefined,
    observeStreamBuffers: () => undefined,
    deliveryLag: () => undefined,
    authRequest: () => undefined,
    configReload: () => undefined,
    instrumentBackend: (backend) => backend,
    ecpds: noopEcpdsTelemetry,
    memoryHistory: noopMemoryHistoryTelemetry,
    idempotency: noopIdempotencyTelemetry,
    render: async () => ({ contentType: prometheusContentType, body: '' }),
  };
}

type HttpLabels = 'route' | 'method';
type SseLabels = 'route' | 'event_type';
type BackendLabels = 'backend' | 'operation' | 'outcome';

interface CoreMetrics {
  readonly buildInfo: Gauge<'version'>;
  readonly httpRequests: Counter<HttpLabels | 'status_code'>;
  readonly httpDuration: Histogram<HttpLabels>;
  readonly httpInFlight: Gauge<'method'>;
  readonly backendOperations: Counter<BackendLabels>;
  readonly backendDuration: Histogram<BackendLabels>;
  readonly notifications: Counter<'event_type' | 'status'>;
  readonly sseActive: Gauge<SseLabels>;
  readonly sseTotal: Counter<SseLabels>;
  readonly sseUniqueUsers: Gauge<'route'>;
  readonly sseEventsSent: Counter<SseLabels>;
  readonly sseStreamErrors: Counter<SseLabels>;
  readonly sseDuration: Histogram<'route'>;
  readonly authRequests: Counter<'mode' | 'outcome'>;
  readonly configReloads: Counter<'result'>;
}

interface EcpdsMetrics {
  readonly cacheHits: Counter;
  readonly cacheMisses: Counter;
  readonly cacheSize: Gauge;
  readonly decisions: Counter<'outcome'>;
  readonly fetches: Counter<'outcome'>;
}

/** The inventory of operations.md §3.3.2. */
function defineCoreMetrics(register: Registry): CoreMetrics {
  const registers = [register];
  return {
    buildInfo: new Gauge({
      name: 'aviso_build_info',
      help: 'Constant 1, labelled with the server version.',
      labelNames: ['version'],
      registers,
    }),
    httpRequests: new Counter({
      name: 'aviso_http_requests_total',
      help: 'Completed requests on the public server, counted when the response head is produced.',
      labelNames: ['route', 'method', 'status_code'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'aviso_http_request_duration_seconds',
      help: 'Time from request arrival until the response head is ready (stream set-up time for watch and replay).',
      labelNames: ['route', 'method'],
      buckets: [...DURATION_BUCKETS],
      registers,
    }),
    httpInFlight: new Gauge({
      name: 'aviso_http_requests_in_flight',
      help: 'Requests that arrived and have not yet produced a response head or been aborted.',
      labelNames: ['method'],
      registers,
    }),
    backendOperations: new Counter({
      name: 'aviso_backend_operations_total',
      help: 'Backend calls made by the server.',
      labelNames: ['backend', 'operation', 'outcome'],
      registers,
    }),
    backendDuration: new Histogram({
      name: 'aviso_backend_operation_duration_seconds',
      help: 'Caller-observed latency of backend calls.',
      labelNames: ['backend', 'operation', 'outcome'],
      buckets: [...DURATION_BUCKETS],
      registers,
    }),
    notifications: new Counter({
      name: 'aviso_notifications_total',
      help: 'Notify requests by result.',
      labelNames: ['event_type', 'status'],
      registers,
    }),
    sseActive: new Gauge({
      name: 'aviso_sse_connections_active',
      help: 'Open SSE streams.',
      labelNames: ['route', 'event_type'],
      registers,
    }),
    sseTotal: new Counter({
      name: 'aviso_sse_connections_total',
      help: 'SSE streams opened.',
      labelNames: ['route', 'event_type'],
      registers,
    }),
    sseUniqueUsers: new Gauge({
      name: 'aviso_sse_unique_users_active',
      help: 'Distinct authenticated usernames with at least one open stream on the route.',
      labelNames: ['route'],
      registers,
    }),
    sseEventsSent: new Counter({
      name: 'aviso_sse_events_sent_total',
      help: 'Notification frames delivered on SSE streams, live and replayed.',
      labelNames: ['route', 'event_type'],
      registers,
    }),
    sseStreamErrors: new Counter({
      name: 'aviso_sse_stream_errors_total',
      help: 'Error events sent on SSE streams after the 200.',
      labelNames: ['route', 'event_type'],
      registers,
    }),
    sseDuration: new Histogram({
      name: 'aviso_sse_connection_duration_seconds',
      help: 'SSE stream lifetime, observed when the stream closes.',
      labelNames: ['route'],
      buckets: [...SSE_DURATION_BUCKETS],
      registers,
    }),
    authRequests: new Counter({
      name: 'aviso_auth_requests_total',
      help: 'Authentication middleware results.',
      labelNames: ['mode', 'outcome'],
      registers,
    }),
    configReloads: new Counter({
      name: 'aviso_config_reloads_total',
      help: 'Configuration reloads (SIGHUP or POST /api/v1/admin/reload) by result.',
      labelNames: ['result'],
      registers,
    }),
  };
}

/** operations.md §3.3.3: registered whatever the configuration, like the reference's build feature. */
function defineEcpdsMetrics(register: Registry): EcpdsMetrics {
  const registers = [register];
  return {
    cacheHits: new Counter({
      name: 'aviso_ecpds_cache_hits_total',
      help: 'ECPDS checks served from the destination cache.',
      registers,
    }),
    cacheMisses: new Counter({
      name: 'aviso_ecpds_cache_misses_total',
      help: 'ECPDS checks not served from the destination cache (fetched or coalesced).',
      registers,
    }),
    cacheSize: new Gauge({
      name: 'aviso_ecpds_cache_size',
      help: 'Usernames currently in the ECPDS destination cache.',
      registers,
    }),
    decisions: new Counter({
      name: 'aviso_ecpds_access_decisions_total',
      help: 'ECPDS access decisions by outcome.',
      labelNames: ['outcome'],
      registers,
    }),
    fetches: new Counter({
      name: 'aviso_ecpds_fetch_total',
      help: 'Real upstream ECPDS fetches by merged outcome.',
      labelNames: ['outcome'],
      registers,
    }),
  };
}

/** operations.md §3.3.5: series `rate()` alerts need before the first event happens. */
function precreateSeries(options: PrometheusMetricsOptions, core: CoreMetrics, ecpds: EcpdsMetrics): void {
  core.buildInfo.set({ version: options.version }, 1);
  for (const mode of AUTH_MODES) {
    for (const outcome of AUTH_OUTCOMES) core.authRequests.inc({ mode, outcome }, 0);
  }
  for (const result of CONFIG_RELOAD_RESULTS) core.configReloads.inc({ result }, 0);
  core.notifications.inc({ event_type: UNKNOWN_EVENT_TYPE, status: 'error' }, 0);
  core.notifications.inc({ event_type: UNKNOWN_EVENT_TYPE, status: 'rejected' }, 0);
  for (const eventType of options.eventTypes) {
    core.notifications.inc({ event_type: eventType, status: 'success' }, 0);
    core.notifications.inc({ event_type: eventType, status: 'error' }, 0);
  }
  for (const operation of BACKEND_OPERATIONS) {
    for (const outcome of BACKEND_OUTCOMES) {
      const labels = { backend: options.backendKind, operation, outcome };
      core.backendOperations.inc(labels, 0);
      core.backendDuration.zero(labels);
    }
  }
  ecpds.cacheHits.inc(0);
  ecpds.cacheMisses.inc(0);
  ecpds.cacheSize.set(0);
  for (const outcome of DECISION_OUTCOMES) ecpds.decisions.inc({ outcome }, 0);
  for (const outcome of FETCH_OUTCOMES) ecpds.fetches.inc({ outcome }, 0);
}

function createEcpdsTelemetry(ecpds: EcpdsMetrics): EcpdsTelemetry {
  return {
    cacheHit: () => ecpds.cacheHits.inc(),
    cacheMiss: () => ecpds.cacheMisses.inc(),
    cacheSize: (entries) => ecpds.cacheSize.set(entries),
    fetched: (outcome) => ecpds.fetches.inc({ outcome }),
    decided: (outcome) => ecpds.decisions.inc({ outcome }),
  };
}

/**
 * prom-client throws on a non-finite observation, and a metric must never break the request it
 * measures; a negative duration (clock stepped back) is recorded as 0 rather than lowering the sum.
 */
function seconds(value: number): number {
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/** Open streams per key, so a gauge is driven by what is really open and a stray close cannot push it below 0. */
class OpenCounts {
  private readonly counts = new Map<string, number>();

  /** Returns the count after adding one. */
  add(key: string): number {
    const next = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, next);
    return next;
  }

  /** Returns false when nothing was open under the key. */
  remove(key: string): boolean {
    const current = this.counts.get(key);
    if (current === undefined) return false;
    if (current <= 1) this.counts.delete(key);
    else this.counts.set(key, current - 1);
    return true;
  }

  /** Distinct keys with something open. */
  get size(): number {
    return this.counts.size;
  }

  keys(): string[] {
    return [...this.counts.keys()];
  }
}

class PrometheusMetrics implements PrometheusAvisoMetrics {
  readonly enabled = true;

  /** Open streams per route and event type (a JSON pair, so no separator can collide). */
  private readonly openStreams = new OpenCounts();
  /** Per route, open streams per authenticated username. */
  private readonly usersByRoute = new Map<SseRoute, OpenCounts>();

  constructor(
    private readonly register: Registry,
    private readonly core: CoreMetrics,
    readonly ecpds: EcpdsTelemetry,
    readonly memoryHistory: MemoryHistoryTelemetry,
    private readonly backendKind: BackendKind,
    private readonly families: {
      readonly streamBuffers: StreamBufferMetrics;
      readonly liveGaps: LiveGapMetrics;
      readonly capacity: CapacityMetrics;
      readonly idempotency: IdempotencyTelemetry;
    },
  ) {}

  get idempotency(): IdempotencyTelemetry {
    return this.families.idempotency;
  }

  private get streamBuffers(): StreamBufferMetrics {
    return this.families.streamBuffers;
  }

  httpRequestStarted(method: string): () => void {
    const labels = { method: methodLabel(method) };
    this.core.httpInFlight.inc(labels);
    let ended = false;
    // A request can end through several paths (response head, abort, error); only the first counts.
    return () => {
      if (ended) return;
      ended = true;
      this.core.httpInFlight.dec(labels);
    };
  }

  httpRequestCompleted(route: string, method: string, statusCode: number, durationSeconds: number): void {
    const bucketedMethod = methodLabel(method);
    this.core.httpRequests.inc({ route, method: bucketedMethod, status_code: String(statusCode) });
    this.core.httpDuration.observe({ route, method: bucketedMethod }, seconds(durationSeconds));
  }

  notification(eventType: string, status: NotificationStatus): void {
    this.core.notifications.inc({ event_type: eventType, status });
  }

  streamOpened(route: SseRoute, eventType: string, username: string | undefined): void {
    const labels = { route, event_type: eventType };
    this.openStreams.add(JSON.stringify([route, eventType]));
    this.core.sseActive.inc(labels);
    this.core.sseTotal.inc(labels);
    const users = this.users(route);
    if (isAuthenticated(username)) users.add(username);
    this.core.sseUniqueUsers.set({ route }, users.size);
  }

  streamClosed(route: SseRoute, eventType: string, username: string | undefined, durationSeconds: number): void {
    // A close without a matching open is a caller bug; recording it would drive the gauges negative.
    if (!this.openStreams.remove(JSON.stringify([route, eventType]))) return;
    this.core.sseActive.dec({ route, event_type: eventType });
    this.core.sseDuration.observe({ route }, seconds(durationSeconds));
    const users = this.users(route);
    if (isAuthenticated(username)) users.remove(username);
    this.core.sseUniqueUsers.set({ route }, users.size);
  }

  notificationSent(route: SseRoute, eventType: string): void {
    this.core.sseEventsSent.inc({ route, event_type: eventType });
  }

  notificationCounter(route: SseRoute, eventType: string): () => void {
    const counter = this.core.sseEventsSent.labels({ route, event_type: eventType });
    return () => counter.inc();
  }

  streamErrorSent(route: SseRoute, eventType: string): void {
    this.core.sseStreamErrors.inc({ route, event_type: eventType });
  }

  slowConsumerClosed(route: SseRoute, trigger: SlowConsumerTrigger): void {
    this.streamBuffers.slowConsumerClosed(route, trigger);
  }

  streamReset(route: SseRoute): void {
    this.streamBuffers.streamReset(route);
  }

  tokenExpiryClosed(route: SseRoute): void {
    this.families.capacity.tokenExpiryClosed(route);
  }

  observeStreamBuffers(read: () => number): void {
    this.streamBuffers.observeStreamBuffers(read);
  }

  get deliveryLag(): (acceptedAtNs: bigint) => void {
    return this.streamBuffers.deliveryLag;
  }

  authRequest(mode: AuthModeLabel, outcome: AuthOutcome): void {
    this.core.authRequests.inc({ mode, outcome });
  }

  configReload(result: ConfigReloadResult): void {
    this.core.configReloads.inc({ result });
  }

  instrumentBackend(backend: NotificationBackend): NotificationBackend {
    this.families.liveGaps.follow(() => backend.stats());
    this.families.capacity.followBackend(() => backend.isConnected());
    const { backendOperations, backendDuration } = this.core;
    const kind = this.backendKind;
    return new InstrumentedBackend(backend, (operation, outcome, elapsed) => {
      const labels = { backend: kind, operation, outcome };
      backendOperations.inc(labels);
      backendDuration.observe(labels, seconds(elapsed));
    });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.register.contentType, body: await this.register.metrics() };
  }

  async snapshot(): Promise<MetricsSnapshot> {
    const streamUsers: Partial<Record<SseRoute, string[]>> = {};
    for (const [route, users] of this.usersByRoute) streamUsers[route] = users.keys();
    return { metrics: await this.register.getMetricsAsJSON(), streamUsers };
  }

  private users(route: SseRoute): OpenCounts {
    let users = this.usersByRoute.get(route);
    if (!users) {
      users = new OpenCounts();
      this.usersByRoute.set(route, users);
    }
    return users;
  }
}

/** Anonymous streams (no user, or an empty name) are not distinct users (§3.3.2). */
function isAuthenticated(username: string | undefined): username is string {
  return username !== undefined && username !== '';
}

type RecordOperation = (operation: BackendOperation, outcome: BackendOutcome, elapsedSeconds: number) => void;

/**
 * Counts and times the backend calls of §3.3.4 (`operation`); live subscription set-up, history
 * bounds, stats and shutdown are forwarded untimed because the spec does not measure them.
 */
class InstrumentedBackend implements NotificationBackend {
  readonly kind: BackendKind;

  constructor(
    private readonly inner: NotificationBackend,
    private readonly record: RecordOperation,
  ) {
    this.kind = inner.kind;
  }

  applySchemas(schemas: readonly SchemaStorage[]): Promise<void> {
    return this.inner.applySchemas(schemas);
  }

  publish(notification: NotificationToStore, options?: PublishOptions): Promise<PublishResult> {
    return this.timed('publish', () => this.inner.publish(notification, options));
  }

  get idempotency(): IdempotencyRecords {
    return this.inner.idempotency;
  }

  subscribe(pattern: TopicPattern, sink: LiveSink): Promise<LiveSubscription> {
    return this.inner.subscribe(pattern, sink);
  }

  captureHistoryBound(pattern: TopicPattern): Promise<number> {
    return this.inner.captureHistoryBound(pattern);
  }

  fetchBatch(request: FetchRequest): Promise<Batch> {
    return this.timed('get_batch', () => this.inner.fetchBatch(request));
  }

  /** Each batch a replay cursor reads counts as one `get_batch`, like `fetchBatch`. */
  async openReplay(request: ReplayRequest): Promise<ReplayCursor> {
    const cursor = await this.inner.openReplay(request);
    return {
      next: (limit) => this.timed('get_batch', () => cursor.next(limit)),
      close: () => cursor.close(),
      ...(cursor.unshared === true ? { unshared: true } : {}),
    };
  }

  /** `not_found` is a successful call: the backend answered. */
  deleteMessage(streamKey: string, sequence: number): Promise<DeleteOutcome> {
    return this.timed('delete_message', () => this.inner.deleteMessage(streamKey, sequence));
  }

  wipeStream(streamName: string): Promise<WipeOutcome> {
    return this.timed('wipe_stream', () => this.inner.wipeStream(streamName));
  }

  wipeAll(): Promise<void> {
    return this.timed('wipe_all', () => this.inner.wipeAll());
  }

  stats(): Promise<BackendStats> {
    return this.inner.stats();
  }

  isConnected(): boolean {
    return this.inner.isConnected();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  /** A synchronous throw and a rejection both count as `error`; the original error is rethrown. */
  private async timed<T>(operation: BackendOperation, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      this.record(operation, 'ok', (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      this.record(operation, 'error', (performance.now() - started) / 1000);
      throw error;
    }
  }
}
