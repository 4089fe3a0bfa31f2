import type {
  BatchPublishOutcome,
  Batch,
  BackendStats,
  DeleteOutcome,
  FetchRequest,
  LiveSink,
  LiveSubscription,
  NotificationBackend,
  NotificationToStore,
  PublishResult,
  ReplayCursor,
  ReplayRequest,
  StoredNotification,
  WipeOutcome,
  SchemaStorage,
} from '../backend.js';
import { NotificationTooLargeError } from '../backend.js';
import { LiveDispatch } from '../live-dispatch.js';
import type { Clock } from '../../time/clock.js';
import { streamNameOf, streamNameOfTopic } from '../../topic/stream-name.js';
import type { TopicPattern } from '../../topic/topic-pattern.js';
import { DEFAULT_IDEMPOTENCY, PENDING_STALE_AFTER_MS, type IdempotencySettings } from '../idempotency-records.js';
import { IdempotencyTable } from './idempotency-table.js';
import { SequenceLog } from './sequence-log.js';
import { historyCursor, scanHistory } from './history-scan.js';
import type { SequenceJournal } from './sequence-journal.js';
import { VisibilityBatch } from './visibility-batch.js';
import { ownMetadata, ownText, storedBytes } from '../../notification/stored-bytes.js';
import { TopicHistories, type HistoryLimits } from './topic-histories.js';

export interface MemoryBackendOptions extends HistoryLimits {
  readonly clock: Clock;
  /** The `Idempotency-Key` table; the configuration defaults when absent. */
  readonly idempotency?: IdempotencySettings & {
    /** `idempotency.in_memory_max_keys`. */
    readonly maxKeys: number;
    /** A key was evicted to make room (`aviso_idempotency_evictions_total`). */
    readonly onEvicted?: () => void;
  };
  /**
   * Where each base's last issued sequence is written through, so the next process continues the
   * numbering (D40); absent: every base starts from 1.
   */
  readonly journal?: SequenceJournal;
}

/**
 * One stream base, numbered on its own, densely from 1, as JetStream numbers a stream (D28), and
 * across restarts where a sequence journal keeps the numbering (D40). It exists from its first
 * publish on and is never forgotten: wipes empty it but keep its numbering.
 */
interface BaseStream {
  /** The last sequence assigned. */
  lastSequence: number;
  /**
   * The last sequence anyone may hear of, which is H for this base: the last one made visible at
   * the end of its turn, after the journal (visibility-batch.ts).
   */
  visibleSequence: number;
  /** This base's stored notifications in sequence order. */
  readonly log: SequenceLog;
}

/** `idempotency.in_memory_max_keys`'s default. */
const DEFAULT_IN_MEMORY_MAX_KEYS = 100_000;

/** What a base that never stored anything reads as. */
const EMPTY_LOG = new SequenceLog();

/**
 * Node-local backend (docs/design/rules/backends.md §6). Every mutation, and every subscription together with its H,
 * happens inside one synchronous block, which is what makes the replay/live boundary exact.
 * `max_topics` and `max_total_size` bound all bases together (`TopicHistories`); eviction removes
 * notifications from their own base's history and never touches any base's numbering.
 */
export class MemoryBackend implements NotificationBackend {
  readonly kind = 'in_memory' as const;

  private lastTimestampMs = 0;
  /** By stream name (`streamNameOf`), so bases differing in case share one, as on JetStream. */
  private readonly streams = new Map<string, BaseStream>();
  private readonly histories: TopicHistories;
  /** Live watchers of every base, indexed by pattern. */
  private readonly live = new LiveDispatch();
  private shutDown = false;
  readonly idempotency: IdempotencyTable;
  /** What this turn stored, made visible at its end, after the journal (visibility-batch.ts). */
  private readonly visibility: VisibilityBatch;

  constructor(private readonly options: MemoryBackendOptions) {
    this.histories = new TopicHistories(options);
    const idempotency = options.idempotency ?? { ...DEFAULT_IDEMPOTENCY, maxKeys: DEFAULT_IN_MEMORY_MAX_KEYS };
    this.idempotency = new IdempotencyTable({
      clock: options.clock,
      windowMs: idempotency.windowSec * 1000,
      maxKeys: idempotency.maxKeys,
      staleAfterMs: PENDING_STALE_AFTER_MS,
      ...(idempotency.onEvicted ? { onEvicted: idempotency.onEvicted } : {}),
    });
    // A previous process's history is gone with it; its numbering goes on, and a replay reaching
    // into it is told that those sequences were lost (D42).
    const restartedAtNs = BigInt(options.clock.now()) * 1_000_000n;
    for (const [streamName, lastSequence] of options.journal?.restored ?? []) {
      const log = new SequenceLog();
      log.forgetThrough(lastSequence, restartedAtNs);
      this.streams.set(streamName, { lastSequence, visibleSequence: lastSequence, log });
    }
    this.visibility = new VisibilityBatch(
      options.journal,
      (streamName, stored) => this.reveal(streamName, stored),
      (_streamName, stored) => this.histories.remove(stored),
    );
  }

  /** The deduplication id is not needed here (see `PublishOptions`). */
  async publish(notification: NotificationToStore): Promise<PublishResult> {
    const { streamName, stored } = this.store(notification);
    await this.visibility.add(streamName, stored);
    return { sequence: stored.sequence };
  }

  /**
   * Every notification stored in this one synchronous step, so they take consecutive sequences of
   * their bases and become visible in the same turn, together (visibility-batch.ts, D48). A journal
   * that cannot be written takes the whole turn back: then none is stored.
   */
  async publishMany(notifications: readonly NotificationToStore[]): Promise<readonly BatchPublishOutcome[]> {
    // The deduplication ids are not needed here either (see `PublishOptions`).
    const publishes = notifications.map((notification) => this.publish(notification));
    const settled = await Promise.allSettled(publishes);
    return settled.map((result) =>
      result.status === 'fulfilled'
        ? { stored: true, sequence: result.value.sequence }
        : { stored: false, error: result.reason as unknown, sent: true },
    );
  }

  /** The notification becomes its base's history bound and reaches the live watchers, in one step (D10). */
  private reveal(streamName: string, stored: StoredNotification): void {
    const stream = this.streams.get(streamName);
    if (stream) stream.visibleSequence = stored.sequence;
    this.live.dispatch(stored);
  }

  private store(notification: NotificationToStore): { streamName: string; stored: StoredNotification } {
    const metadata = notification.metadata && Object.keys(notification.metadata).length > 0 ? notification.metadata : undefined;
    const bytes = storedBytes({ topic: notification.topic, payload: notification.payload, ...(metadata ? { metadata } : {}) });
    // Before a sequence is assigned or anything evicted. The floor startup puts under the budget
    // keeps every notify that passed the body limit from getting here.
    const limit = this.histories.maxTotalBytes;
    if (bytes > limit) {
      throw new NotificationTooLargeError(
        bytes,
        limit,
        `Notification too large: it would count ${bytes} bytes in memory, the in-memory history holds at most ${limit} (max_total_size)`,
      );
    }
    const streamName = streamNameOfTopic(notification.topic);
    let stream = this.streams.get(streamName);
    if (!stream) {
      stream = { lastSequence: 0, visibleSequence: 0, log: new SequenceLog() };
      this.streams.set(streamName, stream);
    }
    const sequence = ++stream.lastSequence;
    // Date cursors binary-search the log, so storage times must never go backwards.
    this.lastTimestampMs = Math.max(this.lastTimestampMs, this.options.clock.now());
    const stored: StoredNotification = {
      sequence,
      topic: ownText(notification.topic),
      payload: ownText(notification.payload),
      timestampNs: BigInt(this.lastTimestampMs) * 1_000_000n,
      ...(metadata ? { metadata: ownMetadata(metadata) } : {}),
    };
    this.histories.add(stored, bytes, stream.log);
    return { streamName, stored };
  }

  async subscribe(pattern: TopicPattern, sink: LiveSink): Promise<LiveSubscription> {
    if (this.shutDown) throw new Error('the in-memory backend is shut down');
    const historyBound = this.historyBoundOf(pattern);
    const remove = this.live.register(pattern, sink);
    return {
      historyBound,
      close: () => {
        remove();
      },
    };
  }

  async captureHistoryBound(pattern: TopicPattern): Promise<number> {
    return this.historyBoundOf(pattern);
  }

  private historyBoundOf(pattern: TopicPattern): number {
    return this.streamOf(pattern.base)?.visibleSequence ?? 0;
  }

  /** The stream of a base or stream key, matched case-insensitively as JetStream names streams. */
  private streamOf(base: string): BaseStream | undefined {
    return this.streams.get(streamNameOf(base));
  }

  async fetchBatch(request: FetchRequest): Promise<Batch> {
    return scanHistory(this.logOf(request.pattern.base), request, true);
  }

  async openReplay(request: ReplayRequest): Promise<ReplayCursor> {
    return historyCursor(() => this.logOf(request.pattern.base), request);
  }

  private logOf(base: string): SequenceLog {
    return this.streamOf(base)?.log ?? EMPTY_LOG;
  }

  async deleteMessage(streamKey: string, sequence: number): Promise<DeleteOutcome> {
    const stream = this.streamOf(streamKey);
    const message = stream?.log.get(sequence);
    if (!stream || !message) return 'not_found';
    return this.histories.remove(message) ? 'deleted' : 'not_found';
  }

  /**
   * Case-insensitive, like a JetStream stream name (docs/design/rules/backends.md §6.7). Unlike the reference, the
   * bare-base topic of an empty `key_order` belongs to its stream too (D19), so a wipe cannot
   * leave it behind.
   */
  async wipeStream(streamName: string): Promise<WipeOutcome> {
    const stream = this.streamOf(streamName);
    if (!stream) return 'not_found';
    this.histories.removeBase(stream.log);
    return 'wiped';
  }

  /** Nothing to prepare: memory keeps no per-base settings, and a base's numbering survives a reload. */
  async applySchemas(_schemas: readonly SchemaStorage[]): Promise<void> {}

  async wipeAll(): Promise<void> {
    this.histories.removeAll();
  }

  async stats(): Promise<BackendStats> {
    const held = this.histories.stats();
    return {
      total_topics: held.topics,
      total_messages: held.messages,
      total_messages_received: held.received,
      max_history_per_topic: this.options.maxHistoryPerTopic,
      max_topics: this.options.maxTopics,
      held_bytes: held.heldBytes,
      max_total_bytes: this.histories.maxTotalBytes,
      live_subscriptions: this.live.size,
    };
  }

  /** Nothing to connect to: always ready (D26). */
  isConnected(): boolean {
    return true;
  }

  async shutdown(): Promise<void> {
    this.shutDown = true;
    for (const sink of this.live.removeAll()) sink.end();
    this.options.journal?.close();
  }
}
