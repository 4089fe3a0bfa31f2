/** Public option and result types of the library (docs/design/rules/client.md §2). */
import type { AuthProvider } from './auth/provider.js';
import type { Clock } from './clock.js';
import type { StateStore } from './state/store.js';

export interface AvisoClientOptions {
  /** `http://` or `https://`; a path prefix is kept (`https://gw/aviso/` + `api/v1/...`). */
  readonly baseUrl: string;
  readonly auth?: AuthProvider;
  /** Deadline for one request/response exchange (notify, schema, admin). Default 30 000 ms. */
  readonly timeoutMs?: number;
  readonly userAgent?: string;
  /** Time source and timers; tests inject a manual clock. */
  readonly clock?: Clock;
  /**
   * Replaces the fetch implementation (tests, custom agents). Default in Node: undici over shared
   * connections (HTTP/2 to https servers, at most 64 watches per connection); in browsers the
   * platform fetch.
   */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * Extra trusted CA certificates (PEM, one string or several) for https in Node, e.g. a private
   * gateway's; added to Node's default roots, not used instead of them.
   */
  readonly ca?: string | readonly string[];
  /** Accept any server certificate in Node. Insecure: for development against a self-signed server only. */
  readonly dangerAcceptInvalidCerts?: boolean;
  /**
   * Commit the last handed notification of a watch with a state store when the watch is closed
   * (the aviso client's `flush_cursor_on_exit`). Off by default, as there: a consumer that stops
   * halfway through a notification then gets it again on restart instead of losing it.
   */
  readonly flushCursorOnExit?: boolean;
}

/** An identifier value as sent: strings by default, typed JSON when the caller chose it. */
export type IdentifierValue = string | number | boolean | null | readonly unknown[] | { readonly [key: string]: unknown };
export type Identifier = Readonly<Record<string, IdentifierValue>>;

export interface NotifyRequest {
  readonly eventType: string;
  readonly identifier: Identifier;
  readonly payload?: unknown;
  readonly signal?: AbortSignal;
  /** The `Idempotency-Key` to send (1 to 255 visible ASCII characters); a fresh UUID when absent. */
  readonly idempotencyKey?: string;
  /**
   * Retry a cut or timed-out request, a 5xx or a 409 with the same key even before this client has
   * seen the server answer `Idempotent-Replayed` (which proves it deduplicates by key).
   */
  readonly retry?: boolean;
}

export interface NotifyResult {
  readonly status: string;
  readonly requestId: string;
  readonly processedAt: string;
  /** The key the notify was sent with. */
  readonly idempotencyKey: string;
  /** `Idempotent-Replayed` of the answer: true when an earlier attempt had stored it; undefined when the server does not say. */
  readonly replayed: boolean | undefined;
}

/** One notification of `notifyMany`: what `notify` publishes, without the per-request options. */
export type NotifyItem = Pick<NotifyRequest, 'eventType' | 'identifier' | 'payload'>;

export interface NotifyManyOptions {
  /** Most notifications in one batch request. Default 1000, the server's default `notification_endpoint.max_batch_items`. */
  readonly maxBatchItems?: number;
  /** Most bytes of one batch's JSON body. Default 16 MiB less 64 KiB, a little under the server's default limit. */
  readonly maxBatchBytes?: number;
  readonly signal?: AbortSignal;
  /** As `NotifyRequest.retry`, for every batch: retry it with its key before the server has shown it deduplicates. */
  readonly retry?: boolean;
}

/** A notification of `notifyMany` that the server stored; the fields of `notify`'s result are those of its batch. */
export interface NotifyStored extends NotifyResult {
  /** Its position in the list given to `notifyMany`. */
  readonly index: number;
  readonly stored: true;
}

/**
 * A notification of `notifyMany` that was not stored, or not known to be:
 * - `refused`: the server refused this notification for what it holds or who sent it (`code`,
 *   `message`: its error body, as `notify` would have got it); not stored, and sent again as it
 *   is it would be refused again;
 * - `failed`: not stored for a reason not its own, once the retries were spent: the server
 *   refused its whole batch (a 5xx, a 401 after the refresh, another status), or its result in
 *   the batch is a store failure (`NOTIFICATION_STORAGE_FAILED`) or a key still in flight
 *   (`IDEMPOTENCY_KEY_IN_PROGRESS`);
 * - `unanswered`: its batch was sent but no usable answer came (cut, timed out, unreadable,
 *   aborted) once the retries were spent: the server may have stored it;
 * - `not_sent`: never sent, because an earlier batch failed (or the signal was aborted).
 */
export interface NotifyFailed {
  readonly index: number;
  readonly stored: false;
  readonly reason: 'refused' | 'failed' | 'unanswered' | 'not_sent';
  /** The error body's `code`, when the server gave one. */
  readonly code: string | undefined;
  readonly message: string;
  readonly requestId: string | undefined;
  /** What failed or stopped the batch (`HttpError`, `TransportError`, `DecodeError`, `AuthError`, the abort reason), when it was an error. */
  readonly error?: unknown;
}

export type NotifyOutcome = NotifyStored | NotifyFailed;

export interface AdminResult {
  readonly success: boolean;
  readonly message: string;
  readonly requestId: string;
  readonly notificationId?: string;
}

/** Where a watch starts. `fromId` is the wire `from_id`: the first sequence wanted (inclusive). */
export type WatchStart = { readonly fromId: number } | { readonly fromDate: string };

export interface WatchRequest {
  readonly eventType: string;
  /** Filter; `{}` (the default) is an unfiltered watch, where a sequence jump is a history gap. */
  readonly identifier?: Identifier;
  /** An explicit start cursor. Without it, the state store's cursor (if any) is used, else live only. */
  readonly from?: WatchStart;
  /** Use `/replay`: history only, the stream ends when the replay ends. */
  readonly replayOnly?: boolean;
  /** Inclusive end of a replay range (implies `replayOnly`); `toId` is a sequence, `toDate` a date. */
  readonly to?: { readonly toId: number } | { readonly toDate: string };
  /** Cursor persistence; with a store the queue holds one notification and commits on next send. */
  readonly stateStore?: StateStore;
  readonly signal?: AbortSignal;
  /** Fail if no opening is confirmed within this budget across retries. Default: retry forever. */
  readonly startupTimeoutMs?: number;
  /** The server's heartbeat interval, for the silence watchdog. Default 30 000 ms. */
  readonly heartbeatIntervalMs?: number;
  /** Queue between the supervisor and the consumer. Default 128, or 1 with a state store. */
  readonly queueSize?: number;
  /** Observe the supervisor (logging, the CLI's "Listening for" line). */
  readonly onStatus?: (status: WatchStatus) => void;
}

/** A notification as handed to the consumer. */
export interface Notification {
  readonly eventType: string;
  readonly sequence: number;
  /** `data.identifier` of the CloudEvent. */
  readonly identifier: Readonly<Record<string, unknown>>;
  /** `data.payload` of the CloudEvent (`null` when the producer sent none). */
  readonly payload: unknown;
  /** CloudEvent `time` (RFC 3339). */
  readonly time: string;
  /** The CloudEvent exactly as received, parsed. */
  readonly cloudEvent: Readonly<Record<string, unknown>>;
  /**
   * What the server said on this stream since the previous notification was handed, in order:
   * history it no longer stores (`history_gap`) and a numbering that started again
   * (`sequence_reset`). Absent when it said nothing. Each notice is also reported as a status.
   */
  readonly notices?: readonly StreamNotice[];
}

/**
 * A `history_gap` frame (docs/streaming.md "History gaps"): sequences `firstSequence` to
 * `lastSequence` lost history the request asked for, or may have; the stream goes on with the
 * notifications after them.
 */
export interface HistoryGapNotice {
  readonly type: 'history_gap';
  readonly firstSequence: number;
  readonly lastSequence: number;
  /** Notifications of the request's topics lost in the range, or `null` when the server does not know how many. */
  readonly lost: number | null;
  /** `request`: they were of the request's topics; `stream`: the server lost the range without knowing whose it was. */
  readonly scope: 'request' | 'stream';
  /** The server's words for the same. */
  readonly message: string;
  /** The control frame as received. */
  readonly frame: Readonly<Record<string, unknown>>;
}

/**
 * A `sequence_reset` frame (docs/streaming.md "A start beyond the stream"): the stream's
 * numbering started again under the client, so the stream replays from its first sequence. The
 * watch's position (and a state store's cursor) moved to the new numbering.
 */
export interface SequenceResetNotice {
  readonly type: 'sequence_reset';
  /** The start the client asked for, in the old numbering. */
  readonly requestedSequence: number;
  /** The stream's last sequence in the new numbering when it said so. */
  readonly lastSequence: number;
  readonly message: string;
  readonly frame: Readonly<Record<string, unknown>>;
}

export type StreamNotice = HistoryGapNotice | SequenceResetNotice;

/** The confirmed opening of one connection. */
export interface StreamOpening {
  readonly kind: 'connection_established' | 'replay_started';
  readonly requestId: string | undefined;
  readonly topic: string | undefined;
  /** The control frame as received. */
  readonly frame: Readonly<Record<string, unknown>>;
}

export type WatchStatus =
  | { readonly type: 'opened'; readonly opening: StreamOpening; readonly attempt: number }
  | { readonly type: 'control'; readonly frame: Readonly<Record<string, unknown>> }
  /** A `history_gap`, reported when the iteration reaches it (just before the notification it is attached to). */
  | { readonly type: 'historyGap'; readonly gap: HistoryGapNotice }
  /** A `sequence_reset`, reported when the iteration reaches it, once the position moved to the new numbering. */
  | { readonly type: 'sequenceReset'; readonly reset: SequenceResetNotice }
  | { readonly type: 'reconnecting'; readonly delayMs: number; readonly attempt: number; readonly reason: string }
  | { readonly type: 'ended'; readonly reason: string }
  /** The commit of `flushCursorOnExit` failed: the next run may deliver that notification again. */
  | { readonly type: 'flushFailed'; readonly error: unknown };

export interface SchemaList {
  readonly [eventType: string]: unknown;
}
