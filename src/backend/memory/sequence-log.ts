import type { StoredNotification } from '../backend.js';

/**
 * Every stored notification in ascending sequence order, so a replay batch is a binary search
 * plus a forward scan instead of a sort over all topics. A removed notification leaves a
 * tombstone: its sequence and time stay in the index arrays, so lookups never scan over holes;
 * tombstones are compacted away once they outnumber the live entries.
 */
export class SequenceLog {
  private sequences: number[] = [];
  private timestamps: bigint[] = [];
  private entries: (StoredNotification | undefined)[] = [];
  private tombstones = 0;

  append(notification: StoredNotification): void {
    this.sequences.push(notification.sequence);
    this.timestamps.push(notification.timestampNs);
    this.entries.push(notification);
  }

  get(sequence: number): StoredNotification | undefined {
    const index = this.indexOfSequence(sequence);
    return this.sequences[index] === sequence ? this.entries[index] : undefined;
  }

  remove(sequence: number): void {
    const index = this.indexOfSequence(sequence);
    if (this.sequences[index] !== sequence || this.entries[index] === undefined) return;
    this.entries[index] = undefined;
    this.tombstones++;
    if (this.tombstones > 1024 && this.tombstones * 2 > this.entries.length) this.compact();
  }

  clear(): void {
    this.sequences = [];
    this.timestamps = [];
    this.entries = [];
    this.tombstones = 0;
  }

  /** Index of the first entry whose sequence is ≥ `sequence`. */
  indexOfSequence(sequence: number): number {
    return lowerBound(this.sequences, (value) => value >= sequence);
  }

  /** Index of the first entry stored at or after `atNs` (storage times never decrease). */
  indexOfTimestamp(atNs: bigint): number {
    return lowerBound(this.timestamps, (value) => value >= atNs);
  }

  *from(index: number): Generator<StoredNotification> {
    for (let i = index; i < this.entries.length; i++) {
      const entry = this.entries[i];
      if (entry) yield entry;
    }
  }

  private compact(): void {
    const live = this.entries.filter((entry): entry is StoredNotification => entry !== undefined);
    this.entries = live;
    this.sequences = live.map((entry) => entry.sequence);
    this.timestamps = live.map((entry) => entry.timestampNs);
    this.tombstones = 0;
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
