import { setTimeoutAt, type Clock, type TimerHandle } from '../time/clock.js';

interface Node<T> {
  readonly value: T;
  due: number;
  prev: Node<T> | undefined;
  next: Node<T> | undefined;
  linked: boolean;
  removed: boolean;
}

/**
 * Things that come due one period after they were added (and, repeating, one period after each
 * time they came due), kept in due order with one timer for the whole queue: the streams'
 * heartbeats and maximum durations (docs/architecture.md "Live dispatch"). Every entry has the same
 * period, so the order of adding is the order of coming due and a linked list keeps it: adding and
 * removing are O(1), and a process with 10,000 streams keeps one armed timer per queue instead of a
 * timer object (and its closure) per stream. The timer is only armed while something waits.
 */
export class DueQueue<T> {
  private head: Node<T> | undefined;
  private tail: Node<T> | undefined;
  private timer: TimerHandle | undefined;
  private armedFor = Number.NaN;

  constructor(
    private readonly clock: Clock,
    private readonly periodMs: number,
    private readonly repeat: boolean,
    private readonly fire: (value: T) => void,
  ) {}

  /** `value` comes due one period from now; the returned function removes it (once). */
  add(value: T): () => void {
    const node: Node<T> = { value, due: this.clock.now() + this.periodMs, prev: undefined, next: undefined, linked: false, removed: false };
    this.append(node);
    this.arm();
    return () => {
      if (node.removed) return;
      node.removed = true;
      if (!node.linked) return;
      this.unlink(node);
      this.arm();
    };
  }

  private append(node: Node<T>): void {
    node.prev = this.tail;
    node.next = undefined;
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    node.linked = true;
  }

  private unlink(node: Node<T>): void {
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = undefined;
    node.next = undefined;
    node.linked = false;
  }

  /** The timer follows the head: armed for its due time, cancelled when nothing waits. */
  private arm(): void {
    const head = this.head;
    if (head === undefined) {
      this.timer?.cancel();
      this.timer = undefined;
      this.armedFor = Number.NaN;
      return;
    }
    if (this.timer !== undefined && this.armedFor === head.due) return;
    this.timer?.cancel();
    this.armedFor = head.due;
    this.timer = setTimeoutAt(this.clock, head.due, () => this.onDue());
  }

  private onDue(): void {
    this.timer = undefined;
    this.armedFor = Number.NaN;
    const now = this.clock.now();
    const due: Node<T>[] = [];
    for (let node = this.head; node !== undefined && node.due <= now; node = this.head) {
      this.unlink(node);
      due.push(node);
    }
    // Re-queued before any fires, from now: one fired late does not pass the entries added since.
    if (this.repeat) {
      for (const node of due) {
        node.due = now + this.periodMs;
        this.append(node);
      }
    }
    for (const node of due) {
      // One fired before may have removed another (a stream that closed itself).
      if (node.removed) continue;
      this.fire(node.value);
    }
    this.arm();
  }
}
