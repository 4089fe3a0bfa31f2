import type { StoredNotification } from '../backend.js';
import { HistoryBudget, type HeldNotification } from './history-budget.js';
import { noopMemoryHistoryTelemetry, type MemoryHistoryTelemetry } from './history-telemetry.js';
import type { SequenceLog } from './sequence-log.js';

/** The three bounds of the in-memory history (docs/design/rules/backends.md §6.1, docs/backends.md "Memory budget"). */
export interface HistoryLimits {
  readonly maxHistoryPerTopic: number;
  readonly maxTopics: number;
  /** `max_total_size` in bytes, counted as `stored-bytes.ts` counts; absent: no byte bound. */
  readonly maxTotalBytes?: number;
  /** Called when a whole topic is evicted to make room (docs/design/rules/backends.md §6.3 step 2). */
  readonly onTopicEvicted?: (topic: string, droppedMessages: number) => void;
  /** Called once, the first time `maxTotalBytes` makes the backend evict. */
  readonly onTotalBytesReached?: (maxTotalBytes: number) => void;
  readonly telemetry?: MemoryHistoryTelemetry;
}

/**
 * Removals recorded one by one (with their topics) over every base, at most: one per 1,536 bytes
 * of `max_total_size` (a recorded removal costs about 96 bytes, so the record takes at most a
 * sixteenth of the history's own budget), within these bounds. Past it the oldest are forgotten
 * in quarters, base by base: a replay over them is told that the range lost notifications
 * without knowing whose (docs/streaming.md "History gaps").
 */
const REMOVAL_RECORD_BYTES = 1536;
const MIN_RECORDED_REMOVALS = 10_000;
const MAX_RECORDED_REMOVALS = 10_000_000;
/** Without a byte bound. */
const UNBOUNDED_RECORDED_REMOVALS = 1_000_000;

function recordedRemovalLimit(maxTotalBytes: number | undefined): number {
  if (maxTotalBytes === undefined || !Number.isFinite(maxTotalBytes)) return UNBOUNDED_RECORDED_REMOVALS;
  return Math.min(MAX_RECORDED_REMOVALS, Math.max(MIN_RECORDED_REMOVALS, Math.floor(maxTotalBytes / REMOVAL_RECORD_BYTES)));
}

interface TopicHistory {
  /** The topic, one string for every removal recorded under it. */
  readonly topic: string;
  /** The sequence log of the topic's base, kept in step with `messages`. */
  readonly log: SequenceLog;
  /** Oldest first. */
  readonly messages: HeldNotification[];
  received: number;
}

/**
 * Every stored notification by exact topic, within the bounds: `max_history_per_topic` drops a
 * topic's oldest, `max_topics` evicts the topic whose newest notification is oldest, and
 * `max_total_size` evicts the notifications stored first over every topic and base. A topic that
 * byte eviction empties is forgotten, as if `max_topics` had evicted it. Each removal reaches the
 * base's sequence log and the budget, so a notification gone from here is referenced nowhere.
 */
export class TopicHistories {
  /** Map order is publish recency: the first key is the topic whose newest message is oldest. */
  private readonly topics = new Map<string, TopicHistory>();
  private readonly budget: HistoryBudget;
  private readonly telemetry: MemoryHistoryTelemetry;
  private totalBytesReached = false;
  /** Every base log a topic of which was ever held, for the bound on recorded removals. */
  private readonly logs = new Set<SequenceLog>();
  private recordedRemovals = 0;
  private readonly removalLimit: number;

  constructor(private readonly limits: HistoryLimits) {
    this.budget = new HistoryBudget(limits.maxTotalBytes ?? Number.POSITIVE_INFINITY);
    this.telemetry = limits.telemetry ?? noopMemoryHistoryTelemetry;
    this.removalLimit = recordedRemovalLimit(limits.maxTotalBytes);
  }

  /** `Infinity` without a byte bound. */
  get maxTotalBytes(): number {
    return this.budget.limitBytes;
  }

  /** Stores `stored`, counted as `bytes` (at most `maxTotalBytes`), in its topic and in `log`. */
  add(stored: StoredNotification, bytes: number, log: SequenceLog): void {
    let history = this.topics.get(stored.topic);
    if (history) {
      this.topics.delete(stored.topic);
    } else {
      if (this.topics.size >= this.limits.maxTopics) this.evictStalestTopic();
      history = { topic: stored.topic, log, messages: [], received: 0 };
      this.logs.add(log);
    }
    this.topics.set(stored.topic, history);
    if (history.messages.length >= this.limits.maxHistoryPerTopic) {
      const dropped = history.messages.splice(0, history.messages.length - this.limits.maxHistoryPerTopic + 1);
      for (const held of dropped) this.release(history, held);
      this.telemetry.evicted('per_topic', dropped.length);
    }
    // After the count bounds, which may already have made the room.
    this.evictOldestUntilFits(bytes, history);
    history.messages.push(this.budget.hold(stored, bytes));
    history.received++;
    log.append(stored);
    this.telemetry.heldBytes(this.budget.heldBytes);
    this.boundRecordedRemovals();
  }

  /** Removes one stored notification (admin delete); false when it is not held. */
  remove(message: StoredNotification): boolean {
    const history = this.topics.get(message.topic);
    const index = history?.messages.findIndex((held) => held.notification === message) ?? -1;
    if (!history || index < 0) return false;
    const [held] = history.messages.splice(index, 1);
    this.release(history, held as HeldNotification);
    this.telemetry.heldBytes(this.budget.heldBytes);
    if (history.messages.length === 0) {
      // An empty topic counts as "now" for eviction (docs/design/rules/backends.md §6.3).
      this.topics.delete(message.topic);
      this.topics.set(message.topic, history);
    }
    this.boundRecordedRemovals();
    return true;
  }

  /** Removes every topic whose notifications go to `log` (one base). */
  removeBase(log: SequenceLog): void {
    for (const [topic, history] of [...this.topics]) {
      if (history.log === log) this.removeTopic(topic, history);
    }
    this.telemetry.heldBytes(this.budget.heldBytes);
    this.boundRecordedRemovals();
  }

  /** Removes every topic of every base (wipe-all); each removal is recorded as any other. */
  removeAll(): void {
    for (const [topic, history] of [...this.topics]) this.removeTopic(topic, history);
    this.budget.releaseAll();
    this.telemetry.heldBytes(0);
    this.boundRecordedRemovals();
  }

  stats(): { topics: number; messages: number; received: number; heldBytes: number } {
    let messages = 0;
    let received = 0;
    for (const history of this.topics.values()) {
      messages += history.messages.length;
      received += history.received;
    }
    return { topics: this.topics.size, messages, received, heldBytes: this.budget.heldBytes };
  }

  private evictStalestTopic(): void {
    const stalest = this.topics.keys().next();
    if (stalest.done) return;
    const history = this.topics.get(stalest.value) as TopicHistory;
    const dropped = history.messages.length;
    this.removeTopic(stalest.value, history);
    this.telemetry.evicted('topics', dropped);
    this.limits.onTopicEvicted?.(stalest.value, dropped);
  }

  /**
   * Evicts the notifications stored first, whatever their topic or base, until `bytes` more fit.
   * The oldest one held is also the oldest of its topic. `publishing` is the topic about to get
   * the new notification: emptied, it stays, since it is not empty for long.
   */
  private evictOldestUntilFits(bytes: number, publishing: TopicHistory): void {
    let evicted = 0;
    for (let oldest = this.budget.oldest(); oldest && !this.budget.fits(bytes); oldest = this.budget.oldest()) {
      const topic = oldest.notification.topic;
      const history = this.topics.get(topic) as TopicHistory;
      history.messages.splice(history.messages.indexOf(oldest), 1);
      this.release(history, oldest);
      if (history.messages.length === 0 && history !== publishing) this.topics.delete(topic);
      evicted++;
    }
    if (evicted === 0) return;
    this.telemetry.evicted('bytes', evicted);
    if (!this.totalBytesReached) {
      this.totalBytesReached = true;
      this.limits.onTotalBytesReached?.(this.budget.limitBytes);
    }
  }

  /** Forgets one notification already taken out of `history.messages`, recording its removal. */
  private release(history: TopicHistory, held: HeldNotification): void {
    if (history.log.remove(held.notification.sequence, history.topic)) this.recordedRemovals++;
    this.budget.release(held);
  }

  /**
   * Keeps the recorded removals within their limit: past it, a quarter of the limit is forgotten,
   * oldest first, from the bases recording the most.
   */
  private boundRecordedRemovals(): void {
    if (this.recordedRemovals <= this.removalLimit) return;
    let excess = this.recordedRemovals - this.removalLimit + Math.floor(this.removalLimit / 4);
    const byCount = [...this.logs].sort((a, b) => b.removedCount - a.removedCount);
    for (const log of byCount) {
      if (excess <= 0) break;
      const forgotten = log.forgetOldestRemovals(Math.min(excess, log.removedCount));
      this.recordedRemovals -= forgotten;
      excess -= forgotten;
    }
  }

  private removeTopic(topic: string, history: TopicHistory): void {
    for (const held of history.messages) this.release(history, held);
    this.topics.delete(topic);
  }
}
