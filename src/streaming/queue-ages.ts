/**
 * When the frames of a stream's queue were queued, so the admin streams list can say how long the
 * oldest one has waited (`lag_ms`, D49). Frames queued together share one mark (time, count): the
 * queue's order is kept, and a stream that keeps up holds one mark at most, whatever its rate.
 *
 * Every delivery goes through here, and every open stream holds one: the oldest mark lives in two
 * fields, and only a reader that fell behind (several marks waiting) gets an array for the later
 * ones, kept while it is behind and reused from its start whenever it drains.
 */
export class QueueAges {
  /** The oldest mark: when its frames were queued and how many are left; `oldestCount` 0 when none waits. */
  private oldestAt = 0;
  private oldestCount = 0;
  /** The marks after the oldest, as pairs (time, count) from `head` to `end`. */
  private later: number[] | undefined;
  private head = 0;
  private end = 0;

  /** `frames` more frames were queued at `at`; frames of the same millisecond join the last mark. */
  add(at: number, frames: number): void {
    if (this.oldestCount === 0) {
      this.oldestAt = at;
      this.oldestCount = frames;
      return;
    }
    const lastAt = this.end > this.head ? (this.later as number[])[this.end - 2] : this.oldestAt;
    if (lastAt === at) {
      this.join(frames);
      return;
    }
    const later = (this.later ??= []);
    later[this.end] = at;
    later[this.end + 1] = frames;
    this.end += 2;
  }

  /** `frames` more frames were queued with the last mark's frames (the same turn): no clock read. */
  join(frames: number): void {
    if (this.oldestCount === 0) throw new Error('QueueAges.join without a mark');
    if (this.end > this.head) {
      const later = this.later as number[];
      later[this.end - 1] = (later[this.end - 1] as number) + frames;
    } else {
      this.oldestCount += frames;
    }
  }

  /** The oldest `frames` frames left the queue. */
  take(frames: number): void {
    let left = frames;
    while (left > 0 && this.oldestCount > 0) {
      if (this.oldestCount > left) {
        this.oldestCount -= left;
        return;
      }
      left -= this.oldestCount;
      this.promoteNext();
    }
  }

  clear(): void {
    this.oldestCount = 0;
    this.head = 0;
    this.end = 0;
    // A reader that was far behind gives the room of its marks back once it is cleared.
    if (this.later !== undefined && this.later.length > 64) this.later = undefined;
  }

  /** Milliseconds the oldest queued frame has waited at `now`; 0 when none waits. */
  oldestAge(now: number): number {
    if (this.oldestCount === 0) return 0;
    return Math.max(0, now - this.oldestAt);
  }

  /** The oldest mark is used up: the next one takes its place, or none waits. */
  private promoteNext(): void {
    if (this.end === this.head) {
      this.oldestCount = 0;
      return;
    }
    const later = this.later as number[];
    this.oldestAt = later[this.head] as number;
    this.oldestCount = later[this.head + 1] as number;
    this.head += 2;
    if (this.head === this.end) {
      this.head = 0;
      this.end = 0;
    } else if (this.head >= 64) {
      later.copyWithin(0, this.head, this.end);
      this.end -= this.head;
      this.head = 0;
    }
  }
}
