import type { StoredNotification } from '../backend.js';

/** A stored notification as the budget holds it: its counted size and its place in storage order. */
export interface HeldNotification {
  readonly notification: StoredNotification;
  readonly bytes: number;
  /** Index in the storage-order queue; moved when the queue is compacted. */
  position: number;
}

/**
 * The bytes held by the in-memory history and the order notifications were stored in, over every
 * topic and base, so the globally oldest one is found without scanning topics. The queue is an
 * array with a head: a notification released out of order (replaced in its topic, deleted, wiped)
 * leaves an empty slot, skipped when the head reaches it and dropped once empty slots outnumber the
 * held ones, so nothing released stays referenced and every operation is amortized O(1).
 */
export class HistoryBudget {
  private queue: (HeldNotification | undefined)[] = [];
  private head = 0;
  private emptySlots = 0;
  private held = 0;

  /** `Infinity` for no bound. */
  constructor(readonly limitBytes: number) {}

  get heldBytes(): number {
    return this.held;
  }

  /** Whether `bytes` more fit without releasing anything. */
  fits(bytes: number): boolean {
    return this.held + bytes <= this.limitBytes;
  }

  hold(notification: StoredNotification, bytes: number): HeldNotification {
    const held: HeldNotification = { notification, bytes, position: this.queue.length };
    this.queue.push(held);
    this.held += bytes;
    return held;
  }

  /** Forgets a held notification; releasing one twice is a no-op. */
  release(held: HeldNotification): void {
    if (this.queue[held.position] !== held) return;
    this.queue[held.position] = undefined;
    this.held -= held.bytes;
    this.emptySlots++;
    if (this.emptySlots > 1024 && this.emptySlots * 2 > this.queue.length) this.compact();
  }

  releaseAll(): void {
    this.queue = [];
    this.head = 0;
    this.emptySlots = 0;
    this.held = 0;
  }

  /** The notification stored first among those still held. */
  oldest(): HeldNotification | undefined {
    while (this.head < this.queue.length && this.queue[this.head] === undefined) this.head++;
    return this.queue[this.head];
  }

  private compact(): void {
    const held = this.queue.filter((entry): entry is HeldNotification => entry !== undefined);
    held.forEach((entry, index) => (entry.position = index));
    this.queue = held;
    this.head = 0;
    this.emptySlots = 0;
  }
}
