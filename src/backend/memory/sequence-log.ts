import type { StoredNotification } from '../backend.js';

/**
 * The place of a notification the base no longer holds: its sequence, storage time and topic, so
 * that a replay crossing it can say which of its topics lost what (D42). The topic is the one
 * string its topic's history keeps for all of its notifications, so a removal holds no text of
 * its own.
 */
export class RemovedEntry {
  constructor(
    readonly sequence: number,
    readonly topic: string,
  ) {}
}

export type LogEntry = StoredNotification | RemovedEntry;

/**
 * Every notification a base stored, in ascending sequence order, so a replay batch is a binary
 * search plus a forward scan instead of a sort over all topics. A removed notification leaves a
 * `RemovedEntry` in its place; the oldest of those are forgotten (`forgetRemovedThrough`) when
 * the backend's record of removals is full, and a forgotten removal is known only as a sequence
 * at or below `forgottenThrough`.
 */
export class SequenceLog {
  private sequences: number[] = [];
  private timestamps: bigint[] = [];
  private entries: LogEntry[] = [];
  private removedEntries = 0;
  /** Removals at or below this sequence are no longer recorded one by one. */
  private forgottenUpTo = 0;
  /** The latest storage time among the forgotten removals (nanoseconds). */
  private forgottenUpToNs = 0n;

  append(notification: StoredNotification): void {
    this.sequences.push(notification.sequence);
    this.timestamps.push(notification.timestampNs);
    this.entries.push(notification);
  }

  get(sequence: number): StoredNotification | undefined {
    const entry = this.entryAt(sequence);
    return entry instanceof RemovedEntry ? undefined : entry;
  }

  /**
   * Marks a held notification removed, recorded under `topic` (the topic's shared string); false
   * when the base does not hold it.
   */
  remove(sequence: number, topic: string): boolean {
    const index = this.indexOfSequence(sequence);
    const entry = this.entries[index];
    if (this.sequences[index] !== sequence || entry === undefined || entry instanceof RemovedEntry) return false;
    this.entries[index] = new RemovedEntry(sequence, topic);
    this.removedEntries++;
    return true;
  }

  /** Removals still recorded one by one. */
  get removedCount(): number {
    return this.removedEntries;
  }

  /** Sequences at or below this one may have lost notifications whose topics are not recorded. */
  get forgottenThrough(): number {
    return this.forgottenUpTo;
  }

  /** The latest storage time of a notification forgotten so (0 when none). */
  get forgottenThroughNs(): bigint {
    return this.forgottenUpToNs;
  }

  /**
   * Everything up to `sequence` is known lost without its topics: a previous process's history
   * (restored numbering), stored at or before `atNs`.
   */
  forgetThrough(sequence: number, atNs: bigint): void {
    if (sequence > this.forgottenUpTo) this.forgottenUpTo = sequence;
    if (atNs > this.forgottenUpToNs) this.forgottenUpToNs = atNs;
  }

  /**
   * Forgets the oldest `count` recorded removals (at least one when any is recorded), folding
   * them into `forgottenThrough`; returns how many were forgotten.
   */
  forgetOldestRemovals(count: number): number {
    if (this.removedEntries === 0 || count <= 0) return 0;
    let remaining = Math.max(1, Math.min(count, this.removedEntries));
    const forgotten = remaining;
    const kept: LogEntry[] = [];
    const keptSequences: number[] = [];
    const keptTimestamps: bigint[] = [];
    for (let i = 0; i < this.entries.length; i++) {
      const entry = this.entries[i] as LogEntry;
      if (remaining > 0 && entry instanceof RemovedEntry) {
        remaining--;
        this.forgetThrough(entry.sequence, this.timestamps[i] as bigint);
        continue;
      }
      kept.push(entry);
      keptSequences.push(this.sequences[i] as number);
      keptTimestamps.push(this.timestamps[i] as bigint);
    }
    this.entries = kept;
    this.sequences = keptSequences;
    this.timestamps = keptTimestamps;
    this.removedEntries -= forgotten;
    return forgotten;
  }

  /** Every held notification, oldest first (a wipe removes them all). */
  *held(): Generator<StoredNotification> {
    for (const entry of this.entries) if (!(entry instanceof RemovedEntry)) yield entry;
  }

  /** Index of the first entry whose sequence is ≥ `sequence`. */
  indexOfSequence(sequence: number): number {
    return lowerBound(this.sequences, (value) => value >= sequence);
  }

  /** Index of the first entry stored at or after `atNs` (storage times never decrease). */
  indexOfTimestamp(atNs: bigint): number {
    return lowerBound(this.timestamps, (value) => value >= atNs);
  }

  /** Held and removed entries from `index` on, in sequence order. */
  *from(index: number): Generator<LogEntry> {
    for (let i = index; i < this.entries.length; i++) yield this.entries[i] as LogEntry;
  }

  private entryAt(sequence: number): LogEntry | undefined {
    const index = this.indexOfSequence(sequence);
    return this.sequences[index] === sequence ? this.entries[index] : undefined;
  }
}

/** First index whose value satisfies a monotone predicate (`values.length` when none does). */
function lowerBound<T>(values: readonly T[], isAtOrAfter: (value: T) => boolean): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (isAtOrAfter(values[mid] as T)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
