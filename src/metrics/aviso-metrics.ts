import type { NotificationBackend } from '../backend/backend.js';
import type { EcpdsTelemetry } from '../auth/ecpds/ecpds-telemetry.js';
import type { SlowConsumerTrigger } from '../streaming/stream-request.js';
import type { GapScope } from '../streaming/frames.js';
import type { MemoryHistoryTelemetry } from '../backend/memory/history-telemetry.js';
import type { IdempotencyTelemetry } from '../idempotency/idempotency-telemetry.js';

/** `route` label of SSE metrics: the endpoint's path, whichever method (POST or a browser's GET) opened the stream. */
export type SseRoute = '/api/v1/watch' | '/api/v1/replay';

/** `status` label of `aviso_notifications_total`. */
export type NotificationStatus = 'success' | 'error' | 'rejected';

/**
 * `status` label of `aviso_notification_batches_total` (D48): the answer's `status` for a batch that
 * was read, `refused` for one refused whole (not a batch, too large, too many items).
 */
export const BATCH_STATUSES = ['success', 'partial', 'error', 'refused'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** `outcome` label of `aviso_auth_requests_total`. */
export type AuthOutcome = 'success' | 'unauthorized' | 'forbidden' | 'service_unavailable';

/** `result` label of `aviso_config_reloads_total`. */
export type ConfigReloadResult = 'success' | 'failure';

export type AuthModeLabel = 'direct' | 'trusted_proxy';

/**
 * Everything the server records for Prometheus (the inventory is docs/metrics.md). Callers pass labels already
 * bounded (`labels.ts`): route patterns, bucketed methods and event types, never raw user input.
 * With metrics disabled the implementation records nothing.
 */
export interface AvisoMetrics {
  readonly enabled: boolean;

  /** A request arrived (+1 in flight); the returned function ends it once (−1), however it ends. */
  httpRequestStarted(method: string): () => void;
  /** The response head was produced. */
  httpRequestCompleted(route: string, method: string, statusCode: number, durationSeconds: number): void;

  notification(eventType: string, status: NotificationStatus): void;
  /** A batch notify ended (its items are counted one by one by `notification`). */
  notificationBatch(status: BatchStatus): void;

  /** A stream was counted: after auth and validation, before backend setup, so refused requests are not streams. */
  streamOpened(route: SseRoute, eventType: string, username: string | undefined): void;
  /** Its release: active −1, duration observed once. */
  streamClosed(route: SseRoute, eventType: string, username: string | undefined, durationSeconds: number): void;
  /** A notification frame (live or replayed) was sent. */
  notificationSent(route: SseRoute, eventType: string): void;
  /** `notificationSent` for one route and event type, its labels looked up once: a stream calls it per frame. */
  notificationCounter(route: SseRoute, eventType: string): () => void;
  /** An `error` frame was sent after the 200. */
  streamErrorSent(route: SseRoute, eventType: string): void;
  /** A stream was closed as a slow consumer; `trigger` is the bound it passed or `stalled` (D37). */
  slowConsumerClosed(route: SseRoute, trigger: SlowConsumerTrigger): void;
  /** A closed stream whose client did not read its end in time was reset (D37). */
  streamReset(route: SseRoute): void;
  /** A stream was closed because its credentials expired. */
  tokenExpiryClosed(route: SseRoute): void;
  /** A stream request was refused with `503 TOO_MANY_STREAMS`: the process held `max_streams` (D44). */
  streamRefused(route: SseRoute): void;
  /** A connection was closed unanswered: the process held `max_connections` (D44). */
  connectionRefused(): void;
  /** A stream said a history gap (D42). */
  historyGap(route: SseRoute, scope: GapScope): void;
  /** A stream's start was beyond its stream's numbering, reset under the client (D41). */
  sequenceReset(route: SseRoute): void;
  /** Reads the bytes all streams hold for their clients, at every scrape. */
  observeStreamBuffers(read: () => number): void;
  /** Records one live delivery's lag: from its acceptance (storage time, ns since the epoch) to now. */
  readonly deliveryLag: (acceptedAtNs: bigint) => void;

  authRequest(mode: AuthModeLabel, outcome: AuthOutcome): void;

  /** A configuration reload ended: swapped in, or refused and the old one kept. */
  configReload(result: ConfigReloadResult): void;

  /** Wraps a backend so its operations are counted and timed (`aviso_backend_*`). */
  instrumentBackend(backend: NotificationBackend): NotificationBackend;

  /** The ECPDS plugin's telemetry (`aviso_ecpds_*`). */
  readonly ecpds: EcpdsTelemetry;

  /** The in-memory backend's evictions and held bytes (`aviso_memory_history_*`); a no-op with JetStream. */
  readonly memoryHistory: MemoryHistoryTelemetry;

  /** Notify's `Idempotency-Key` replays, conflicts and in-memory evictions (`aviso_idempotency_*`). */
  readonly idempotency: IdempotencyTelemetry;

  /** Prometheus text exposition of every metric, process metrics included. */
  render(): Promise<{ contentType: string; body: string }>;
}
