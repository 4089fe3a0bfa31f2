import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { DECISION_OUTCOMES, FETCH_OUTCOMES, type EcpdsTelemetry } from '../auth/ecpds/ecpds-telemetry.js';
import type { BackendKind } from '../backend/backend.js';
import type { AuthModeLabel, AuthOutcome, ConfigReloadResult } from './aviso-metrics.js';
import { BACKEND_OPERATIONS, BACKEND_OUTCOMES } from './instrumented-backend.js';
import { UNKNOWN_EVENT_TYPE } from './labels.js';

/** The metric families every server registers: the inventory, the ECPDS checker's, their first series. */

/** Histogram buckets unless stated otherwise (docs/design/rules/operations.md §3.3.2); spelled out so a library upgrade cannot move them. */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** `aviso_sse_connection_duration_seconds`: streams live from seconds to a day. */
export const SSE_DURATION_BUCKETS: readonly number[] = [
  1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400,
];

export const AUTH_MODES: readonly AuthModeLabel[] = ['direct', 'trusted_proxy'];
export const AUTH_OUTCOMES: readonly AuthOutcome[] = ['success', 'unauthorized', 'forbidden', 'service_unavailable'];
export const CONFIG_RELOAD_RESULTS: readonly ConfigReloadResult[] = ['success', 'failure'];

/** What the series created at startup depend on. */
export interface SeriesOptions {
  readonly version: string;
  readonly backendKind: BackendKind;
  readonly eventTypes: readonly string[];
}

type HttpLabels = 'route' | 'method';
type SseLabels = 'route' | 'event_type';
type BackendLabels = 'backend' | 'operation' | 'outcome';

export interface CoreMetrics {
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

export interface EcpdsMetrics {
  readonly cacheHits: Counter;
  readonly cacheMisses: Counter;
  readonly cacheSize: Gauge;
  readonly decisions: Counter<'outcome'>;
  readonly fetches: Counter<'outcome'>;
}

/** The inventory of docs/design/rules/operations.md §3.3.2. */
export function defineCoreMetrics(register: Registry): CoreMetrics {
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

/** docs/design/rules/operations.md §3.3.3: registered whatever the configuration, like the reference's build feature. */
export function defineEcpdsMetrics(register: Registry): EcpdsMetrics {
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

/** docs/design/rules/operations.md §3.3.5: series `rate()` alerts need before the first event happens. */
export function precreateSeries(options: SeriesOptions, core: CoreMetrics, ecpds: EcpdsMetrics): void {
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

export function createEcpdsTelemetry(ecpds: EcpdsMetrics): EcpdsTelemetry {
  return {
    cacheHit: () => ecpds.cacheHits.inc(),
    cacheMiss: () => ecpds.cacheMisses.inc(),
    cacheSize: (entries) => ecpds.cacheSize.set(entries),
    fetched: (outcome) => ecpds.fetches.inc({ outcome }),
    decided: (outcome) => ecpds.decisions.inc({ outcome }),
  };
}
