import type {
  Batch,
  BackendStats,
  DeleteOutcome,
  FetchRequest,
  LiveSink,
  LiveSubscription,
  NotificationBackend,
  NotificationToStore,
  ReplayCursor,
  ReplayRequest,
  StoredNotification,
  WipeOutcome,
  SchemaStorage,
} from '../backend.js';
import { pagingCursor } from '../backend.js';
import { LiveDispatch } from '../live-dispatch.js';
import type { Clock } from '../../clock.js';
import { streamNameOf, streamNameOfTopic } from '../../topic/stream-name.js';
import type { TopicPattern } from '../../topic/topic-pattern.js';
import { SequenceLog } from './sequence-log.js';

export interface MemoryBackendOptions {
  readonly maxHistoryPerTopic: number;
  readonly maxTopics: number;
  readonly clock: Clock;
  /** Called when a whole topic is evicted to make room (backends.md §6.3 step 2). */
  readonly onTopicEvicted?: (topic: string, droppedMessages: number) => void;
}

/**
 * One stream base, numbered on its own, densely from 1, as JetStream numbers a stream (D28). It
 * exists from its first publish on and is never forgotten: wipes empty it but keep its numbering.
 */
interface BaseStream {
  /** The last sequence assigned, which is H for this base. */
  lastSequence: number;
  /** This base's stored notifications in sequence order. */
  readonly log: SequenceLog;
}

interface TopicHistory {
  readonly stream: BaseStream;
  /** Oldest first. */
  readonly messages: StoredNotification[];
  received: number;
}

/** What a base that never stored anything reads as. */
const EMPTY_LOG = new SequenceLog();

/**
 * Node-local backend (backends.md §6). Every mutation, and every subscription together with its H,
 * happens inside one synchronous block, which is what makes the replay/live boundary exact.
 * `max_topics` bounds the topics of all bases together; eviction removes a topic from its own
 * base's history and never touches any base's numbering.
 */
export class MemoryBackend implements NotificationBackend {
  readonly kind = 'in_memory' as const;

  private lastTimestampMs = 0;
  /** By stream name (`streamNameOf`), so bases differing in case share one, as on JetStream. */
  private readonly streams = new Map<string, BaseStream>();
  /** Map order is publish recency: the first key is the topic whose newest message is oldest. */
  private readonly topics = new Map<string, TopicHistory>();
  /** Live watchers of every base, indexed by pattern. */
  private readonly live = new LiveDispatch();
  private shutDown = false;

  constructor(private readonly options: MemoryBackendOptions) {}

  async publish(notification: NotificationToStore): Promise<{ sequence: number }> {
    const stored = this.store(notification);
    this.live.dispatch(stored);
    return { sequence: stored.sequence };
  }

  private store(notification: NotificationToStore): StoredNotification {
    const streamName = streamNameOfTopic(notification.topic);
    let stream = this.streams.get(streamName);
    if (!stream) {
      stream = { lastSequence: 0, log: new SequenceLog() };
      this.streams.set(streamName, stream);
    }
    const sequence = ++stream.lastSequence;
    // Date cursors binary-search the log, so storage times must never go backwards.
    this.lastTimestampMs = Math.max(this.lastTimestampMs, this.options.clock.now());
    const stored: StoredNotification = {
      sequence,
      topic: notification.topic,
      payload: notification.payload,
      timestampNs: BigInt(this.lastTimestampMs) * 1_000_000n,
      ...(notification.metadata && Object.keys(notification.metadata).length > 0
        ? { metadata: { ...notification.metadata } }
        : {}),
    };
    let history = this.topics.get(stored.topic);
    if (history) {
      this.topics.delete(stored.topic);
    } else {
      if (this.topics.size >= this.options.maxTopics) this.evictStalestTopic();
      history = { stream, messages: [], received: 0 };
    }
    this.topics.set(stored.topic, history);
    if (history.messages.length >= this.options.maxHistoryPerTopic) {
      const dropped = history.messages.splice(0, history.messages.length - this.options.maxHistoryPerTopic + 1);
      for (const message of dropped) stream.log.remove(message.sequence);
    }
    history.messages.push(stored);
    history.received++;
    stream.log.append(stored);
    return stored;
  }

  private evictStalestTopic(): void {
    const stalest = this.topics.keys().next();
    if (stalest.done) return;
    const history = this.topics.get(stalest.value) as TopicHistory;
    this.removeTopic(stalest.value, history);
    this.options.onTopicEvicted?.(stalest.value, history.messages.length);
  }

  private removeTopic(topic: string, history: TopicHistory): void {
    for (const message of history.messages) history.stream.log.remove(message.sequence);
    this.topics.delete(topic);
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
    return this.streamOf(pattern.base)?.lastSequence ?? 0;
  }

  /** The stream of a base or stream key, matched case-insensitively as JetStream names streams. */
  private streamOf(base: string): BaseStream | undefined {
    return this.streams.get(streamNameOf(base));
  }

  async fetchBatch(request: FetchRequest): Promise<Batch> {
    const { pattern, start, limit, upperBound } = request;
    const log = this.streamOf(pattern.base)?.log ?? EMPTY_LOG;
    const from =
      start.kind === 'sequence' ? log.indexOfSequence(Math.max(start.sequence, 1)) : log.indexOfTimestamp(start.atNs);
    const messages: StoredNotification[] = [];
    let exhausted = true;
    let lastExamined = start.kind === 'sequence' ? Math.max(start.sequence, 1) - 1 : 0;
    for (const message of log.from(from)) {
      if (message.sequence > upperBound) break;
      if (messages.length === limit) {
        exhausted = false;
        break;
      }
      lastExamined = message.sequence;
      if (pattern.matches(message.topic)) messages.push(message);
    }
    const last = messages.at(-1);
    const nextSequence = exhausted ? Math.max(lastExamined, upperBound) + 1 : (last as StoredNotification).sequence + 1;
    return { messages, nextSequence, exhausted };
  }

  async openReplay(request: ReplayRequest): Promise<ReplayCursor> {
    return pagingCursor((fetch) => this.fetchBatch(fetch), request);
  }

  async deleteMessage(streamKey: string, sequence: number): Promise<DeleteOutcome> {
    const stream = this.streamOf(streamKey);
    const message = stream?.log.get(sequence);
    if (!stream || !message) return 'not_found';
    const history = this.topics.get(message.topic);
    if (!history) return 'not_found';
    const index = history.messages.findIndex((m) => m.sequence === sequence);
    if (index < 0) return 'not_found';
    history.messages.splice(index, 1);
    stream.log.remove(sequence);
    if (history.messages.length === 0) {
      // An empty topic counts as "now" for eviction (backends.md §6.3).
      this.topics.delete(message.topic);
      this.topics.set(message.topic, history);
    }
    return 'deleted';
  }

  /**
   * Case-insensitive, like a JetStream stream name (backends.md §6.7). Unlike the reference, the
   * bare-base topic of an empty `key_order` belongs to its stream too (D19), so a wipe cannot
   * leave it behind.
   */
  async wipeStream(streamName: string): Promise<WipeOutcome> {
    const stream = this.streamOf(streamName);
    if (!stream) return 'not_found';
    for (const [topic, history] of [...this.topics]) {
      if (history.stream === stream) this.removeTopic(topic, history);
    }
    return 'wiped';
  }

  /** Nothing to prepare: memory keeps no per-base settings, and a base's numbering survives a reload. */
  async applySchemas(_schemas: readonly SchemaStorage[]): Promise<void> {}

  async wipeAll(): Promise<void> {
    this.topics.clear();
    for (const stream of this.streams.values()) stream.log.clear();
  }

  async stats(): Promise<BackendStats> {
    let totalMessages = 0;
    let totalReceived = 0;
    for (const history of this.topics.values()) {
      totalMessages += history.messages.length;
      totalReceived += history.received;
    }
    return {
      total_topics: this.topics.size,
      total_messages: totalMessages,
      total_messages_received: totalReceived,
      max_history_per_topic: this.options.maxHistoryPerTopic,
      max_topics: this.options.maxTopics,
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
  }
}
