import type { StoredNotification } from '../backend.js';

/**
 * Every stored notification in ascending sequence order, so a replay batch is a binary search
 * plus a forward scan instead of a sort over all topics. Removals leave holes that are compacted
 * once they outnumber the live entries.
 */
export class SequenceLog {
  private entries: (StoredNotification | undefined)[] = [];
  private holes = 0;

  append(notification: StoredNotification): void {
    this.entries.push(notification);
  }

  get(sequence: number): StoredNotification | undefined {
    const probe = this.nextLive(this.indexOfSequence(sequence));
    return probe?.entry.sequence === sequence ? probe.entry : undefined;
  }

  remove(sequence: number): void {
    const probe = this.nextLive(this.indexOfSequence(sequence));
    if (probe?.entry.sequence !== sequence) return;
    this.entries[probe.index] = undefined;
    this.holes++;
    if (this.holes > 1024 && this.holes * 2 > this.entries.length) this.compact();
  }

  clear(): void {
    this.entries = [];
    this.holes = 0;
  }

  /** Position before which every live entry has a smaller sequence (it may point at a hole). */
  indexOfSequence(sequence: number): number {
    return this.lowerBound((entry) => entry.sequence >= sequence);
  }

  /** Index of the first entry stored at or after `atNs` (timestamps never decrease). */
  indexOfTimestamp(atNs: bigint): number {
    return this.lowerBound((entry) => entry.timestampNs >= atNs);
  }

  *from(index: number): Generator<StoredNotification> {
    for (let i = index; i < this.entries.length; i++) {
      const entry = this.entries[i];
      if (entry) yield entry;
    }
  }

  /** Binary search over a monotone predicate; holes take the verdict of the next live entry. */
  private lowerBound(isAtOrAfter: (entry: StoredNotification) => boolean): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const probe = this.nextLive(mid);
      if (probe === undefined || isAtOrAfter(probe.entry)) {
        hi = mid;
      } else {
        lo = probe.index + 1;
      }
    }
    return lo;
  }

  private nextLive(index: number): { entry: StoredNotification; index: number } | undefined {
    for (let i = index; i < this.entries.length; i++) {
      const entry = this.entries[i];
      if (entry) return { entry, index: i };
    }
    return undefined;
  }

  private compact(): void {
    this.entries = this.entries.filter((entry) => entry !== undefined);
    this.holes = 0;
  }
}
