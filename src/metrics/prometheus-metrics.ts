import { Registry, collectDefaultMetrics, prometheusContentType } from 'prom-client';
import { noopEcpdsTelemetry, type EcpdsTelemetry } from '../auth/ecpds/ecpds-telemetry.js';
import type { BackendKind, NotificationBackend } from '../backend/backend.js';
import { noopMemoryHistoryTelemetry, type MemoryHistoryTelemetry } from '../backend/memory/history-telemetry.js';
import type {
  AuthModeLabel,
  AuthOutcome,
  AvisoMetrics,
  BatchStatus,
  ConfigReloadResult,
  NotificationStatus,
  SseRoute,
} from './aviso-metrics.js';
import { registerCapacityMetrics, type CapacityLimits, type CapacityMetrics } from './capacity-metrics.js';
import { createEcpdsTelemetry, defineCoreMetrics, defineEcpdsMetrics, precreateSeries, type CoreMetrics } from './core-metrics.js';
import { InstrumentedBackend } from './instrumented-backend.js';
import { methodLabel } from './labels.js';
import { registerLiveGapMetrics, type LiveGapMetrics } from './live-gap-metrics.js';
import { registerMemoryHistoryMetrics } from './memory-history-metrics.js';
import { registerIdempotencyMetrics } from './idempotency-metrics.js';
import { noopIdempotencyTelemetry, type IdempotencyTelemetry } from '../idempotency/idempotency-telemetry.js';
import { registerLogOutputMetrics } from './log-output-metrics.js';
import { registerOtlpMetrics } from './otlp-metrics.js';
import { defineStreamBufferMetrics, type StreamBufferMetrics } from './stream-buffer-metrics.js';
import type { GapScope } from '../streaming/frames.js';
import type { SlowConsumerTrigger } from '../streaming/stream-request.js';
import type { OtlpExportStats } from '../logging/otlp/export-gate.js';
import type { LogOutputStats } from '../logging/logger.js';

export interface PrometheusMetricsOptions {
  /** Server package version, the `version` label of `aviso_build_info`. */
  readonly version: string;
  /** The configured `notification_backend.kind`, the `backend` label. */
  readonly backendKind: BackendKind;
  /** Configured schema names, whose notification series exist from startup (docs/design/rules/operations.md §3.3.5). */
  readonly eventTypes: readonly string[];
  /** The OTLP log export's totals (`aviso_otlp_*`); absent when export is disabled. */
  readonly otlpStats?: () => OtlpExportStats;
  /** The log lines the logger did not write (`aviso_log_lines_*_total`). */
  readonly logStats?: () => LogOutputStats;
  /** The configured limits (`aviso_http_max_connections`, `aviso_sse_max_streams`, `aviso_sse_max_total_buffered_bytes`). */
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
  registerLogOutputMetrics(register, options.logStats);
  const streamBuffers = defineStreamBufferMetrics(register, options.backendKind);
  const liveGaps = registerLiveGapMetrics(register);
  const capacity = registerCapacityMetrics(register, options.backendKind, options.limits);
  const memoryHistory = options.backendKind === 'in_memory' ? registerMemoryHistoryMetrics(register) : noopMemoryHistoryTelemetry;
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
    notificationBatch: () => undefined,
    streamOpened: () => undefined,
    streamClosed: () => undefined,
    notificationSent: () => undefined,
    notificationCounter: () => () => undefined,
    streamErrorSent: () => undefined,
    slowConsumerClosed: () => undefined,
    streamReset: () => undefined,
    tokenExpiryClosed: () => undefined,
    streamRefused: () => undefined,
    connectionRefused: () => undefined,
    historyGap: () => undefined,
    sequenceReset: () => undefined,
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
  /** One per-frame incrementer per route and event type, shared by their streams. */
  private readonly frameIncrementers = new Map<string, () => void>();
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

  notificationBatch(status: BatchStatus): void {
    this.core.notificationBatches.inc({ status });
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
    const key = `${route} ${eventType}`;
    let increment = this.frameIncrementers.get(key);
    if (!increment) {
      increment = this.core.sseEventsPending.incrementer({ route, event_type: eventType });
      this.frameIncrementers.set(key, increment);
    }
    return increment;
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

  streamRefused(route: SseRoute): void {
    this.families.capacity.streamRefused(route);
  }

  connectionRefused(): void {
    this.families.capacity.connectionRefused();
  }

  historyGap(route: SseRoute, scope: GapScope): void {
    this.streamBuffers.historyGap(route, scope);
  }

  sequenceReset(route: SseRoute): void {
    this.streamBuffers.sequenceReset(route);
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

/** Anonymous streams (no user, or an empty name) are not distinct users (docs/design/rules/operations.md §3.3.2). */
function isAuthenticated(username: string | undefined): username is string {
  return username !== undefined && username !== '';
}
