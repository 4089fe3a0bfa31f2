/**
 * When the frames of a stream's queue were queued, so the admin streams list can say how long the
 * oldest one has waited (`lag_ms`, D49). Frames queued together share one mark (time, count): the
 * queue's order is kept, and a stream that keeps up holds one mark at most, whatever its rate.
 * The marks live in one array kept for the stream's life and reused from its start whenever the
 * queue empties: every delivery goes through here, and it must not allocate.
 */
export class QueueAges {
  /** Pairs from `head` to `end`: the time of a mark, then how many queued frames it stands for. */
  private readonly marks: number[] = [];
  private head = 0;
  private end = 0;

  /** `frames` more frames were queued at `at`; frames of the same millisecond join the last mark. */
  add(at: number, frames: number): void {
    const { marks } = this;
    if (this.end > this.head && marks[this.end - 2] === at) {
      marks[this.end - 1] = (marks[this.end - 1] as number) + frames;
      return;
    }
    marks[this.end] = at;
    marks[this.end + 1] = frames;
    this.end += 2;
  }

  /** `frames` more frames were queued with the last mark's frames (the same turn): no clock read. */
  join(frames: number): void {
    if (this.end === this.head) throw new Error('QueueAges.join without a mark');
    this.marks[this.end - 1] = (this.marks[this.end - 1] as number) + frames;
  }

  /** The oldest `frames` frames left the queue. */
  take(frames: number): void {
    const { marks } = this;
    let left = frames;
    while (left > 0 && this.head < this.end) {
      const count = marks[this.head + 1] as number;
      if (count > left) {
        marks[this.head + 1] = count - left;
        return;
      }
      left -= count;
      this.head += 2;
    }
    if (this.head === this.end) this.clear();
    else if (this.head >= 64) {
      marks.copyWithin(0, this.head, this.end);
      this.end -= this.head;
      this.head = 0;
    }
  }

  clear(): void {
    this.head = 0;
    this.end = 0;
    // A queue that once held many marks (a stalled reader) gives their room back once empty.
    if (this.marks.length > 64) this.marks.length = 0;
  }

  /** Milliseconds the oldest queued frame has waited at `now`; 0 when none waits. */
  oldestAge(now: number): number {
    if (this.head === this.end) return 0;
    return Math.max(0, now - (this.marks[this.head] as number));
  }
}
