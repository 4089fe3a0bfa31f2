/**
 * When the frames of a stream's queue were queued, so the admin streams list can say how long the
 * oldest one has waited (`lag_ms`, D49). Frames queued together share one mark (time, count): the
 * queue's order is kept, and a stream that keeps up holds one mark at most, whatever its rate.
 */
export class QueueAges {
  /** Pairs: the time of a mark, then how many queued frames it stands for; from `head` on. */
  private marks: number[] = [];
  private head = 0;

  /** `frames` more frames were queued at `at`; frames of the same millisecond join the last mark. */
  add(at: number, frames: number): void {
    const { marks } = this;
    if (marks.length > this.head && marks[marks.length - 2] === at) {
      marks[marks.length - 1] = (marks[marks.length - 1] as number) + frames;
      return;
    }
    marks.push(at, frames);
  }

  /** `frames` more frames were queued with the last mark's frames (the same turn): no clock read. */
  join(frames: number): void {
    const { marks } = this;
    if (marks.length === this.head) throw new Error('QueueAges.join without a mark');
    marks[marks.length - 1] = (marks[marks.length - 1] as number) + frames;
  }

  /** The oldest `frames` frames left the queue. */
  take(frames: number): void {
    const { marks } = this;
    let left = frames;
    while (left > 0 && this.head < marks.length) {
      const count = marks[this.head + 1] as number;
      if (count > left) {
        marks[this.head + 1] = count - left;
        return;
      }
      left -= count;
      this.head += 2;
    }
    if (this.head === marks.length) this.clear();
    else if (this.head >= 64) {
      marks.splice(0, this.head);
      this.head = 0;
    }
  }

  clear(): void {
    this.marks.length = 0;
    this.head = 0;
  }

  /** Milliseconds the oldest queued frame has waited at `now`; 0 when none waits. */
  oldestAge(now: number): number {
    if (this.head === this.marks.length) return 0;
    return Math.max(0, now - (this.marks[this.head] as number));
  }
}
