import type { StoragePolicyConfig } from '../config/model.js';
import type { NotificationToStore, StoredNotification } from '../notification/stored-notification.js';
import type { TopicPattern } from '../topic/topic-pattern.js';
import type { IdempotencyRecords } from './idempotency-records.js';

/**
 * The storage contract the HTTP and streaming layers depend on (docs/design/rules/backends.md §3).
 * It speaks in the domain, never in NATS terms; `memory/` and `jetstream/` implement it
 * and one contract suite runs against both.
 */

// The stored notification model is the contract's own vocabulary: importers of the contract keep one import.
export { METADATA_KEYS, type Metadata, type NotificationToStore, type StoredNotification } from '../notification/stored-notification.js';

export type BackendKind = 'in_memory' | 'jetstream';

export interface PublishOptions {
  /**
   * Stores the notification at most once under this id within `idempotency.window` (JetStream:
   * the `Nats-Msg-Id`, D35). Absent: a fresh id per call, which only guards the backend's own
   * retries (D22). The in-memory backend keeps no ids: its record table, in the same process,
   * already lets only one request with a key publish.
   */
  readonly deduplicationId?: string;
}

export interface PublishResult {
  readonly sequence: number;
  /**
   * Set when the backend dropped this publish as a copy of one already stored under the same
   * `deduplicationId`: that stored notification, or null when it can no longer be read (removed
   * by retention, superseded on its topic, deleted).
   */
  readonly duplicateOf?: StoredNotification | null;
}

/**
 * One notification of a `publishMany`: stored with its sequence, or not stored and why. `sent`
 * false: the batch stopped at an earlier failure before this one was sent (docs/api.md#batch-notify-decision-d48).
 */
export type BatchPublishOutcome =
  ({ readonly stored: true } & PublishResult) | { readonly stored: false; readonly error: unknown; readonly sent: boolean };

export interface BatchPublishOptions {
  /** Each notification's `PublishOptions.deduplicationId`, by position; absent ones get a fresh id. */
  readonly deduplicationIds?: readonly (string | undefined)[];
}

export type StartCursor =
  /** Inclusive; 0 means from the first stored notification. */
  | { readonly kind: 'sequence'; readonly sequence: number }
  /** Inclusive lower bound on the storage timestamp. */
  | { readonly kind: 'date'; readonly atNs: bigint };

export interface FetchRequest {
  readonly pattern: TopicPattern;
  /** A date cursor is used for the first call only; callers continue with `nextSequence`. */
  readonly start: StartCursor;
  readonly limit: number;
  /** H of the pattern's base, captured when the stream was set up: nothing above it is returned. */
  readonly upperBound: number;
}

/** One replay request's fixed range: everything from `start` up to H, fixed at setup; what is stored later is not part of it. */
export interface ReplayRequest {
  readonly pattern: TopicPattern;
  readonly start: StartCursor;
  readonly upperBound: number;
}

/**
 * Reads one replay's history batch by batch. A backend may keep server-side state between
 * batches (JetStream keeps one consumer per replay); `close` releases it and is idempotent.
 */
export interface ReplayCursor {
  /** The next batch, with the same guarantees as `fetchBatch`. */
  next(limit: number): Promise<Batch>;
  close(): void;
  /**
   * True when every notification it returns is a new object read for this cursor alone (JetStream
   * pulls), so no other stream will see it and caching its rendering would only feed the GC.
   */
  readonly unshared?: boolean;
}

export interface Batch {
  /** Ascending sequence, all ≤ upperBound, all matching the pattern exactly. */
  readonly messages: readonly StoredNotification[];
  /** Strictly greater than every sequence examined. */
  readonly nextSequence: number;
  /** True when nothing in [nextSequence, upperBound] can be returned. */
  readonly exhausted: boolean;
  /**
   * History of the pattern's topics that the store held once in the range this batch examined and
   * holds no longer; absent or empty when nothing was lost there. Each loss is reported once per
   * cursor; a stream says it before the first notification it delivers above the loss's `last`.
   */
  readonly losses?: readonly HistoryLoss[];
}

/**
 * Sequences of a replay's range that once held notifications of the request's topics which the
 * store no longer holds (removed by a history limit, retention, an admin delete or wipe, or lost
 * with a restart), so that a stream can say so rather than skip them in silence (D42).
 */
export interface HistoryLoss {
  /** The lowest sequence the loss may cover (never below the replay's start). */
  readonly first: number;
  /** The highest sequence the loss may cover; a lost sequence itself when `count` is known. */
  readonly last: number;
  /**
   * How many notifications of the request's topics were lost in `first..last`, when the store
   * knows; absent when it knows only that the range lost something of those topics, or (with
   * `topicsUnknown`) that it lost notifications whose topics it no longer knows.
   */
  readonly count?: number;
  /** The store lost these sequences without knowing their topics (a restart, a forgotten record, stream retention). */
  readonly topicsUnknown?: true;
}

/**
 * Where a live subscription pushes messages. `deliver` is called in ascending sequence order with
 * messages above the history bound that match the pattern; it must not block (a stream that cannot
 * keep up closes itself, D9). `end` is called once when the subscription cannot continue.
 */
export interface LiveSink {
  deliver(notification: StoredNotification): void;
  end(error?: Error): void;
}

export interface LiveSubscription {
  /** H, captured in the same step that registered the sink (D10). */
  readonly historyBound: number;
  /** Idempotent; stops delivery and releases what the subscription holds. */
  close(): void;
}

export interface BackendStats {
  readonly [counter: string]: number;
}

export type DeleteOutcome = 'deleted' | 'not_found';

/** `not_found`: no stream of that name exists (D30); the route decides what that means. */
export type WipeOutcome = 'wiped' | 'not_found';

/**
 * A notification the backend cannot hold: over NATS's `max_payload` with its headers (D33), or
 * alone over the in-memory backend's `max_total_size`. Refused before anything is stored or
 * evicted, answered 413 by notify.
 */
export class NotificationTooLargeError extends Error {
  constructor(
    readonly bytes: number,
    readonly limitBytes: number,
    message = `Notification too large: it would be ${bytes} bytes with its headers, the broker accepts at most ${limitBytes}`,
  ) {
    super(message);
    this.name = 'NotificationTooLargeError';
  }
}

/** How one configured event type is stored: what a backend needs from the schemas. */
export interface SchemaStorage {
  readonly eventType: string;
  /** Decoded `topic.base`. */
  readonly base: string;
  /** An empty `key_order` publishes bare-base topics, which `<b>.>` does not capture (D19). */
  readonly bareTopics: boolean;
  readonly storagePolicy: StoragePolicyConfig | undefined;
}

export interface NotificationBackend {
  readonly kind: BackendKind;
  /**
   * The schemas of a configuration reload: the backend stores new and changed ones
   * as it would have at startup (JetStream: creates or reconciles their streams now) and no longer
   * counts removed ones as configured. Stored notifications are never touched.
   */
  applySchemas(schemas: readonly SchemaStorage[]): Promise<void>;
  /**
   * Resolves once the notification is durably stored; rejects on any failure
   * (`NotificationTooLargeError` when the broker could not carry it).
   */
  publish(notification: NotificationToStore, options?: PublishOptions): Promise<PublishResult>;
  /**
   * Stores the notifications in order as that many `publish` calls would, one outcome each, in
   * order (D48). A notification too large for the backend fails alone; after any other failure the
   * notifications not yet sent are not sent. JetStream sends notifications of distinct topics
   * together and awaits their acks in order; one whose topic is already in flight waits for it.
   */
  publishMany(notifications: readonly NotificationToStore[], options?: BatchPublishOptions): Promise<readonly BatchPublishOutcome[]>;
  /** The records of notify's `Idempotency-Key`s (docs/api.md "Idempotent notify"). */
  readonly idempotency: IdempotencyRecords;
  /** Registers a live sink for the pattern and captures H (of the pattern's base) atomically with it. */
  subscribe(pattern: TopicPattern, sink: LiveSink): Promise<LiveSubscription>;
  /** H of the pattern's base for a replay-only request (no live subscription). */
  captureHistoryBound(pattern: TopicPattern): Promise<number>;
  fetchBatch(request: FetchRequest): Promise<Batch>;
  /** A cursor over one replay's range; equivalent to paging with `fetchBatch`, but cheaper. */
  openReplay(request: ReplayRequest): Promise<ReplayCursor>;
  /**
   * `streamKey` is already alias-resolved; compared case-insensitively with the topic base. The
   * sequence is one of that base's own (D28).
   */
  deleteMessage(streamKey: string, sequence: number): Promise<DeleteOutcome>;
  /**
   * Empties one base's stream, matched case-insensitively; numbering continues afterwards. A base
   * that never stored anything (no JetStream stream) is `not_found`.
   */
  wipeStream(streamName: string): Promise<WipeOutcome>;
  wipeAll(): Promise<void>;
  stats(): Promise<BackendStats>;
  /**
   * Whether the backend can serve requests right now, read synchronously from state it already
   * keeps (no round trip): `GET /ready` answers from it on every probe (D26). JetStream: false while
   * the NATS connection is down or reconnecting, and for good once the client gave up.
   */
  isConnected(): boolean;
  /** Ends every live subscription and releases connections; called after HTTP has stopped. */
  shutdown(): Promise<void>;
}

/** A cursor that pages with `fetchBatch`, for backends with nothing to keep between batches. */
export function pagingCursor(fetch: (request: FetchRequest) => Promise<Batch>, request: ReplayRequest): ReplayCursor {
  let start = request.start;
  return {
    async next(limit) {
      const batch = await fetch({ pattern: request.pattern, start, limit, upperBound: request.upperBound });
      start = { kind: 'sequence', sequence: batch.nextSequence };
      return batch;
    },
    close: () => undefined,
  };
}
