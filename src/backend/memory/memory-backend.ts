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
} from '../backend.js';
import { pagingCursor } from '../backend.js';
import type { Clock } from '../../clock.js';
import { decodeTopic, encodeToken } from '../../topic/percent-codec.js';
import type { TopicPattern } from '../../topic/topic-pattern.js';
import { SequenceLog } from './sequence-log.js';

export interface MemoryBackendOptions {
  readonly maxHistoryPerTopic: number;
  readonly maxTopics: number;
  readonly clock: Clock;
  /** Called when a whole topic is evicted to make room (backends.md §6.3 step 2). */
  readonly onTopicEvicted?: (topic: string, droppedMessages: number) => void;
}

interface TopicHistory {
  /** Oldest first. */
  readonly messages: StoredNotification[];
  received: number;
}

interface Registration {
  readonly pattern: TopicPattern;
  readonly sink: LiveSink;
}

/**
 * Node-local backend (backends.md §6). Every mutation, and every subscription together with its H,
 * happens inside one synchronous block, which is what makes the replay/live boundary exact.
 */
export class MemoryBackend implements NotificationBackend {
  readonly kind = 'in_memory' as const;

  private nextSequence = 1;
  private lastTimestampMs = 0;
  /** Map order is publish recency: the first key is the topic whose newest message is oldest. */
  private readonly topics = new Map<string, TopicHistory>();
  private readonly log = new SequenceLog();
  private readonly registrations = new Set<Registration>();
  private shutDown = false;

  constructor(private readonly options: MemoryBackendOptions) {}

  async publish(notification: NotificationToStore): Promise<{ sequence: number }> {
    const stored = this.store(notification);
    this.fanOut(stored);
    return { sequence: stored.sequence };
  }

  private store(notification: NotificationToStore): StoredNotification {
    const sequence = this.nextSequence++;
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
      history = { messages: [], received: 0 };
    }
    this.topics.set(stored.topic, history);
    if (history.messages.length >= this.options.maxHistoryPerTopic) {
      const dropped = history.messages.splice(0, history.messages.length - this.options.maxHistoryPerTopic + 1);
      for (const message of dropped) this.log.remove(message.sequence);
    }
    history.messages.push(stored);
    history.received++;
    this.log.append(stored);
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
    for (const message of history.messages) this.log.remove(message.sequence);
    this.topics.delete(topic);
  }

  private fanOut(stored: StoredNotification): void {
    if (this.registrations.size === 0) return;
    let tokens: string[];
    try {
      tokens = decodeTopic(stored.topic);
    } catch {
      return; // an undecodable topic never matches a watch (§7.3)
    }
    for (const { pattern, sink } of this.registrations) {
      if (pattern.matchesTokens(tokens)) sink.deliver(stored);
    }
  }

  async subscribe(pattern: TopicPattern, sink: LiveSink): Promise<LiveSubscription> {
    if (this.shutDown) throw new Error('the in-memory backend is shut down');
    const registration: Registration = { pattern, sink };
    const historyBound = this.nextSequence - 1;
    this.registrations.add(registration);
    return {
      historyBound,
      close: () => {
        this.registrations.delete(registration);
      },
    };
  }

  async captureHistoryBound(_pattern: TopicPattern): Promise<number> {
    return this.nextSequence - 1;
  }

  async fetchBatch(request: FetchRequest): Promise<Batch> {
    const { pattern, start, limit, upperBound } = request;
    const from =
      start.kind === 'sequence'
        ? this.log.indexOfSequence(Math.max(start.sequence, 1))
        : this.log.indexOfTimestamp(start.atNs);
    const messages: StoredNotification[] = [];
    let exhausted = true;
    let lastExamined = start.kind === 'sequence' ? Math.max(start.sequence, 1) - 1 : 0;
    for (const message of this.log.from(from)) {
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
    const message = this.log.get(sequence);
    if (!message || !belongsToStream(message.topic, streamKey)) return 'not_found';
    const history = this.topics.get(message.topic);
    if (!history) return 'not_found';
    const index = history.messages.findIndex((m) => m.sequence === sequence);
    if (index < 0) return 'not_found';
    history.messages.splice(index, 1);
    this.log.remove(sequence);
    if (history.messages.length === 0) {
      // An empty topic counts as "now" for eviction (backends.md §6.3).
      this.topics.delete(message.topic);
      this.topics.set(message.topic, history);
    }
    return 'deleted';
  }

  async wipeStream(streamName: string): Promise<void> {
    for (const [topic, history] of [...this.topics]) {
      if (belongsToStream(topic, streamName)) this.removeTopic(topic, history);
    }
  }

  async wipeAll(): Promise<void> {
    this.topics.clear();
    this.log.clear();
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
      live_subscriptions: this.registrations.size,
    };
  }

  /** Nothing to connect to: always ready (D26). */
  isConnected(): boolean {
    return true;
  }

  async shutdown(): Promise<void> {
    this.shutDown = true;
    const registrations = [...this.registrations];
    this.registrations.clear();
    for (const { sink } of registrations) sink.end();
  }
}

/**
 * Case-insensitive stream membership (backends.md §6.7). Unlike the reference, the bare-base topic
 * of an empty `key_order` belongs to its stream too (D19), so a wipe cannot leave it behind.
 */
function belongsToStream(topic: string, streamKey: string): boolean {
  const key = encodeToken(streamKey).toLowerCase();
  const lower = topic.toLowerCase();
  return lower === key || lower.startsWith(`${key}.`);
}
