import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DECISION_OUTCOMES, FETCH_OUTCOMES, type EcpdsTelemetry } from '../auth/ecpds/ecpds-telemetry.js';
import type { BackendKind } from '../backend/backend.js';
import { BATCH_STATUSES, type AuthModeLabel, type AuthOutcome, type ConfigReloadResult } from './aviso-metrics.js';
import { BACKEND_OPERATIONS, BACKEND_OUTCOMES } from './instrumented-backend.js';
import { UNKNOWN_EVENT_TYPE } from './labels.js';
import { counter, gauge, histogram } from './metric-family.js';
import { PendingIncrements } from './pending-counts.js';

/** The metric families every server registers: the inventory, the ECPDS checker's, their first series. */

/** Histogram buckets unless stated otherwise (docs/design/rules/operations.md §3.3.2); spelled out so a library upgrade cannot move them. */
const DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** `aviso_sse_connection_duration_seconds`: streams live from seconds to a day. */
const SSE_DURATION_BUCKETS: readonly number[] = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400];

const AUTH_MODES: readonly AuthModeLabel[] = ['direct', 'trusted_proxy'];
export const AUTH_OUTCOMES: readonly AuthOutcome[] = ['success', 'unauthorized', 'forbidden', 'service_unavailable'];
const CONFIG_RELOAD_RESULTS: readonly ConfigReloadResult[] = ['success', 'failure'];

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
  /** The per-frame increments of `sseEventsSent`, added to it when it is read. */
  readonly sseEventsPending: PendingIncrements<SseLabels>;
  readonly httpRequests: Counter<HttpLabels | 'status_code'>;
  readonly httpDuration: Histogram<HttpLabels>;
  readonly httpInFlight: Gauge<'method'>;
  readonly backendOperations: Counter<BackendLabels>;
  readonly backendDuration: Histogram<BackendLabels>;
  readonly notifications: Counter<'event_type' | 'status'>;
  readonly notificationBatches: Counter<'status'>;
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
  const sseEventsPending = new PendingIncrements<SseLabels>();
  return {
    sseEventsPending,
    buildInfo: gauge(register, 'aviso_build_info', 'Constant 1, labelled with the server version.', ['version']),
    httpRequests: counter(
      register,
      'aviso_http_requests_total',
      'Completed requests on the public server, counted when the response head is produced.',
      ['route', 'method', 'status_code'],
    ),
    httpDuration: histogram(
      register,
      'aviso_http_request_duration_seconds',
      'Time from request arrival until the response head is ready (stream set-up time for watch and replay).',
      ['route', 'method'],
      DURATION_BUCKETS,
    ),
    httpInFlight: gauge(
      register,
      'aviso_http_requests_in_flight',
      'Requests that arrived and have not yet produced a response head or been aborted.',
      ['method'],
    ),
    backendOperations: counter(register, 'aviso_backend_operations_total', 'Backend calls made by the server.', [
      'backend',
      'operation',
      'outcome',
    ]),
    backendDuration: histogram(
      register,
      'aviso_backend_operation_duration_seconds',
      'Caller-observed latency of backend calls.',
      ['backend', 'operation', 'outcome'],
      DURATION_BUCKETS,
    ),
    notifications: counter(register, 'aviso_notifications_total', 'Notify requests by result.', ['event_type', 'status']),
    notificationBatches: counter(
      register,
      'aviso_notification_batches_total',
      'Batch notify requests by result; their notifications are counted one by one in aviso_notifications_total.',
      ['status'],
    ),
    sseActive: gauge(register, 'aviso_sse_connections_active', 'Open SSE streams.', ['route', 'event_type']),
    sseTotal: counter(register, 'aviso_sse_connections_total', 'SSE streams opened.', ['route', 'event_type']),
    sseUniqueUsers: gauge(
      register,
      'aviso_sse_unique_users_active',
      'Distinct authenticated usernames with at least one open stream on the route.',
      ['route'],
    ),
    sseEventsSent: counter(
      register,
      'aviso_sse_events_sent_total',
      'Notification frames delivered on SSE streams, live and replayed.',
      ['route', 'event_type'],
      (sent) => sseEventsPending.drainInto(sent),
    ),
    sseStreamErrors: counter(register, 'aviso_sse_stream_errors_total', 'Error events sent on SSE streams after the 200.', [
      'route',
      'event_type',
    ]),
    sseDuration: histogram(
      register,
      'aviso_sse_connection_duration_seconds',
      'SSE stream lifetime, observed when the stream closes.',
      ['route'],
      SSE_DURATION_BUCKETS,
    ),
    authRequests: counter(register, 'aviso_auth_requests_total', 'Authentication middleware results.', ['mode', 'outcome']),
    configReloads: counter(
      register,
      'aviso_config_reloads_total',
      'Configuration reloads (SIGHUP or POST /api/v1/admin/reload) by result.',
      ['result'],
    ),
  };
}

/** The ECPDS families, registered whatever the configuration, as the reference's build feature registers them. */
export function defineEcpdsMetrics(register: Registry): EcpdsMetrics {
  return {
    cacheHits: counter(register, 'aviso_ecpds_cache_hits_total', 'ECPDS checks served from the destination cache.'),
    cacheMisses: counter(
      register,
      'aviso_ecpds_cache_misses_total',
      'ECPDS checks not served from the destination cache (fetched or coalesced).',
    ),
    cacheSize: gauge(register, 'aviso_ecpds_cache_size', 'Usernames currently in the ECPDS destination cache.'),
    decisions: counter(register, 'aviso_ecpds_access_decisions_total', 'ECPDS access decisions by outcome.', ['outcome']),
    fetches: counter(register, 'aviso_ecpds_fetch_total', 'Real upstream ECPDS fetches by merged outcome.', ['outcome']),
  };
}

/** The series that `rate()` alerts need before the first event happens, created at zero. */
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
  for (const status of BATCH_STATUSES) core.notificationBatches.inc({ status }, 0);
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
