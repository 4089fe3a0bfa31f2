import type { NotificationPredicate, WatchSelection } from '../filter/watch-filter.js';
import type { StreamEndpoint } from '../schema/watch-identifier.js';
import type { Frame, GapScope } from './frames.js';
import type { ReplayEndRequest, StartCursorRequest } from './stream-range.js';

// What opening a stream asks for, and the settings and telemetry it runs with (stream-session.ts).

/** Why a stream was closed as a slow consumer: the bound its buffer passed, or a stalled socket. */
export type SlowConsumerTrigger = 'buffered_events' | 'buffered_bytes' | 'process_buffered_bytes' | 'stalled';

/** The `watch_endpoint` settings a stream uses. */
export interface StreamSettings {
  readonly heartbeatIntervalSec: number;
  readonly connectionMaxDurationSec: number;
  readonly replayBatchSize: number;
  readonly replayBatchDelayMs: number;
  readonly maxBufferedEvents: number;
  /** `max_buffered_bytes`: bytes one stream may hold for its client. */
  readonly maxBufferedBytes: number;
}

/** What a stream reports for metrics (the `aviso_sse_*` families), bound to its route and event type. */
export interface StreamTelemetry {
  frameSent(kind: Frame['kind']): void;
  /** The stream was closed as a slow consumer; `trigger` names the bound it passed, or `stalled`. */
  slowConsumerClosed(trigger: SlowConsumerTrigger): void;
  /** Its client did not read the end of the stream within the stall bound: the connection was reset. */
  streamReset(): void;
  /** The credentials it was opened with expired: closed with cause `token_expired`. */
  tokenExpiryClosed(): void;
  /** A history gap was said: `request` when the lost notifications were of its topics, `stream` when not known. */
  historyGap(scope: GapScope): void;
  /** Its start was beyond the stream's last sequence + 1: the numbering was reset. */
  sequenceReset(): void;
  /** Called once, when the stream is over. */
  released(): void;
}

export interface StreamRequest {
  readonly endpoint: StreamEndpoint;
  readonly requestId: string;
  readonly selection: WatchSelection;
  readonly predicate: NotificationPredicate;
  readonly cursor: StartCursorRequest;
  /** Where a replay ends (`to_id`, `to_date`); always `latest` on a watch, which refuses an end point. */
  readonly end: ReplayEndRequest;
  /** Q, the most notifications one replay delivers: the schema's `max_historical_notifications`, else the global one. */
  readonly quota: number;
  readonly telemetry: StreamTelemetry;
  /** The version of the schema configuration that validated the request, said by the opening frame. */
  readonly schemaVersion: string;
  /**
   * When the credentials the stream was opened with are refused (epoch ms, `AuthUser.expiresAt`):
   * the stream ends then, whichever route opened it. Absent for a stream opened without a JWT.
   */
  readonly credentialsExpireAt?: number;
  /**
   * Set on a GET stream (a browser's `EventSource`): notification frames carry `id:` lines, the stream starts
   * with `retry:`, and `id:`-only blocks mark positions covered without a notification.
   * `eventType` is the request's, the one its CloudEvent ids name.
   */
  readonly browser?: { readonly eventType: string };
}
