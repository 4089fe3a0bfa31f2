import { canonicalJson } from '../json/canonical-json.js';
import { formatUtcSeconds } from '../time/time-format.js';

/**
 * The typed frames of a stream and their one renderer, which writes every frame's JSON with
 * sorted keys as the reference does. Nothing else writes SSE text.
 */

/**
 * The only close reasons on the wire: the aviso client treats any other as a fatal protocol error
 * (D32). Why a stream ended beyond these goes in `cause`.
 */
export type CloseReason = 'end_of_stream' | 'max_duration_reached' | 'server_shutdown';

/**
 * Why an `end_of_stream` was not a completion: `slow_consumer`, the client did not keep up (D9,
 * revised by D32); `token_expired`, the JWT the stream was opened with expired;
 * `operator_closed`, an admin closed it (D49).
 * The client resumes from its cursor on `end_of_stream` whatever the cause.
 */
export type CloseCause = 'slow_consumer' | 'token_expired' | 'operator_closed';

/** How a stream ends: a reason, and a cause only with `end_of_stream`. */
export type StreamEnding =
  { readonly reason: CloseReason; readonly cause?: undefined } | { readonly reason: 'end_of_stream'; readonly cause: CloseCause };

const CLOSE_MESSAGES: Readonly<Record<CloseReason, string>> = {
  end_of_stream: 'Stream completed',
  max_duration_reached: 'Connection reached maximum duration',
  server_shutdown: 'Server is shutting down gracefully',
};

const CAUSE_MESSAGES: Readonly<Record<CloseCause, string>> = {
  slow_consumer: 'Client did not keep up with the stream',
  token_expired: 'Credentials expired',
  operator_closed: 'An operator closed this stream',
};

export type Frame =
  | { readonly kind: 'control'; readonly event: 'live-notification' | 'replay-control'; readonly data: object }
  /** The whole frame, encoded once per notification and event name and shared by every stream. */
  | { readonly kind: 'notification'; readonly event: 'live-notification' | 'replay'; readonly bytes: Buffer }
  | { readonly kind: 'heartbeat'; readonly event: 'heartbeat'; readonly data: object }
  | { readonly kind: 'error'; readonly event: 'error'; readonly data: object }
  | { readonly kind: 'close'; readonly event: 'connection-closing'; readonly reason: CloseReason; readonly data: object };

export function renderFrame(frame: Frame): string | Buffer {
  if (frame.kind === 'notification') return frame.bytes;
  return frameText(frame.event, canonicalJson(frame.data));
}

export function frameText(event: string, json: string): string {
  return `event: ${event}\ndata: ${json}\n\n`;
}

/**
 * The reconnection delay a GET stream announces first: `EventSource` waits this
 * long (plus its own jitter) before reconnecting with `Last-Event-ID`. POST streams send none.
 */
export const BROWSER_RETRY_MS = 2000;

/** The `retry:` block a GET stream starts with; it dispatches no event. */
export function retryBlock(): string {
  return `retry: ${BROWSER_RETRY_MS}\n\n`;
}

/**
 * The SSE `id:` line of a GET stream's notification frame: its CloudEvent id. An id with a line
 * break or NUL (only possible for a schema-less event type named so) cannot be carried and gets
 * no line.
 */
export function sseIdLine(id: string): string {
  return /[\r\n\0]/.test(id) ? '' : `id: ${id}\n`;
}

/**
 * An `id:`-only block (no `data:`, so `EventSource` dispatches no event, yet takes it as its last
 * event id): the position a GET stream has covered without a notification saying so, so that a
 * reconnect neither repeats nor skips (streaming.md, "Browsers").
 */
export function positionBlock(eventType: string, sequence: bigint | number): string {
  const line = sseIdLine(`${eventType}@${sequence}`);
  return line === '' ? '' : `${line}\n`;
}

/** What every control frame of one stream shares. */
export interface StreamIdentity {
  /** Display topic of the request, e.g. `polygon.*.1200`. */
  readonly topic: string;
  readonly requestId: string;
}

/**
 * The first frame of a live-only watch. `schemaVersion` (D43) tells the client which schema
 * configuration validated its request; the aviso client ignores fields it does not read.
 */
export function connectionEstablished(stream: StreamIdentity, nowMs: number, closeInSeconds: number, schemaVersion?: string): Frame {
  return {
    kind: 'control',
    event: 'live-notification',
    data: {
      connection_will_close_in_seconds: closeInSeconds,
      request_id: stream.requestId,
      ...(schemaVersion === undefined ? {} : { schema_version: schemaVersion }),
      timestamp: formatUtcSeconds(nowMs),
      topic: stream.topic,
      type: 'connection_established',
    },
  };
}

export function replayStarted(
  stream: StreamIdentity,
  nowMs: number,
  start: {
    readonly batchSize: number;
    readonly fromSequence: bigint | null;
    readonly fromDate: string | null;
    /** The resolved end of a request with `to_id`/`to_date`, `null` without one (D25). */
    readonly endSequence: number | null;
    /** The requested `to_date`, echoed like `from_date`. */
    readonly toDate: string | null;
    /** The schema configuration's version (D43). */
    readonly schemaVersion?: string;
  },
): Frame {
  return {
    kind: 'control',
    event: 'replay-control',
    data: {
      batch_size: start.batchSize,
      end_sequence: start.endSequence,
      from_date: start.fromDate,
      from_sequence: start.fromSequence,
      request_id: stream.requestId,
      ...(start.schemaVersion === undefined ? {} : { schema_version: start.schemaVersion }),
      timestamp: formatUtcSeconds(nowMs),
      to_date: start.toDate,
      topic: stream.topic,
      type: 'replay_started',
    },
  };
}

export function replayCompleted(stream: StreamIdentity, nowMs: number): Frame {
  return {
    kind: 'control',
    event: 'replay-control',
    data: { timestamp: formatUtcSeconds(nowMs), topic: stream.topic, type: 'replay_completed' },
  };
}

export function replayLimitReached(stream: StreamIdentity, nowMs: number, maxAllowed: number): Frame {
  return {
    kind: 'control',
    event: 'replay-control',
    data: {
      max_allowed: maxAllowed,
      message: `Historical replay limited to ${maxAllowed} messages. Additional historical messages may be available but were not retrieved.`,
      timestamp: formatUtcSeconds(nowMs),
      topic: stream.topic,
      type: 'notification_replay_limit_reached',
    },
  };
}

/**
 * What a history gap says (D42): `request` when the lost notifications were of the request's
 * topics, `stream` when the store lost those sequences without knowing whose they were.
 */
export type GapScope = 'request' | 'stream';

export interface GapFrameRange {
  readonly first: number;
  readonly last: number;
  /** Notifications of the request's topics lost there, when the store knows. */
  readonly count?: number;
  readonly scope: GapScope;
}

/**
 * History the stream's range no longer holds, said before the first notification after it (D42).
 * The aviso client ignores a `replay-control` type it does not know once the stream is open.
 */
export function historyGap(stream: StreamIdentity, nowMs: number, gap: GapFrameRange): Frame {
  return {
    kind: 'control',
    event: 'replay-control',
    data: {
      first_sequence: gap.first,
      last_sequence: gap.last,
      lost: gap.count ?? null,
      message: gapMessage(gap),
      request_id: stream.requestId,
      scope: gap.scope,
      timestamp: formatUtcSeconds(nowMs),
      topic: stream.topic,
      type: 'history_gap',
    },
  };
}

function gapMessage({ first, last, count, scope }: GapFrameRange): string {
  const range = first === last ? `sequence ${first}` : `sequences ${first} to ${last}`;
  if (scope === 'stream') return `History in ${range} is no longer stored; some of it may have matched this request`;
  if (count === undefined) return `Notifications of this request in ${range} are no longer stored`;
  return `${count} ${count === 1 ? 'notification' : 'notifications'} of this request in ${range} ${count === 1 ? 'is' : 'are'} no longer stored`;
}

/**
 * The request's start is beyond the stream's last sequence + 1: the stream's numbering was reset
 * under the client (an in-memory restart without its sequence journal, a JetStream stream created
 * anew), so the stream starts again from its first sequence (D41).
 */
export function sequenceReset(
  stream: StreamIdentity,
  nowMs: number,
  reset: { readonly requested: bigint; readonly lastSequence: number },
): Frame {
  return {
    kind: 'control',
    event: 'replay-control',
    data: {
      last_sequence: reset.lastSequence,
      message: `Sequence ${reset.requested} is beyond this stream's last sequence ${reset.lastSequence}: its numbering was reset, so the stream starts again from its first sequence`,
      request_id: stream.requestId,
      requested_sequence: reset.requested,
      timestamp: formatUtcSeconds(nowMs),
      topic: stream.topic,
      type: 'sequence_reset',
    },
  };
}

export function heartbeat(stream: StreamIdentity, nowMs: number): Frame {
  return { kind: 'heartbeat', event: 'heartbeat', data: { timestamp: formatUtcSeconds(nowMs), topic: stream.topic } };
}

/** A backend failure that ends the stream: `stream_processing_failed`, then the close. */
export function streamProcessingFailed(stream: StreamIdentity, message: string): Frame {
  return {
    kind: 'error',
    event: 'error',
    data: { error: 'stream_processing_failed', message, request_id: stream.requestId, topic: stream.topic },
  };
}

/** One notification that could not be rendered: `CloudEvent creation failed` with its sequence; the stream goes on. */
export function cloudEventCreationFailed(
  stream: StreamIdentity,
  failure: { readonly sequence: number; readonly notificationTopic: string; readonly message: string },
): Frame {
  return {
    kind: 'error',
    event: 'error',
    data: {
      error: 'CloudEvent creation failed',
      message: failure.message,
      request_id: stream.requestId,
      sequence: failure.sequence,
      topic: failure.notificationTopic,
    },
  };
}

export function connectionClosing(stream: StreamIdentity, nowMs: number, ending: StreamEnding): Frame {
  const { reason, cause } = ending;
  return {
    kind: 'close',
    event: 'connection-closing',
    reason,
    data: {
      ...(cause === undefined ? {} : { cause }),
      message: cause === undefined ? CLOSE_MESSAGES[reason] : CAUSE_MESSAGES[cause],
      reason,
      request_id: stream.requestId,
      timestamp: formatUtcSeconds(nowMs),
      topic: stream.topic,
    },
  };
}
