import type { Clock, TimerHandle } from '../../src/clock.js';

interface Timer {
  readonly due: number;
  readonly ms: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when the test says so, with a fixed jitter draw, so the supervisor's
 * deadlines, watchdog and backoff are exercised without real minutes.
 */
export class ManualClock implements Clock {
  private timers: Timer[] = [];
  private current = Date.UTC(2026, 2, 1, 12, 0, 0);

  constructor(private readonly draw = 0) {}

  now(): number {
    return this.current;
  }

  random(): number {
    return this.draw;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: Timer = { due: this.current + ms, ms, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }

  /** Pending timers' durations, for checking what the supervisor armed. */
  pending(): number[] {
    return this.timers.filter((t) => !t.cancelled).map((t) => t.ms);
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const next = this.timers.filter((t) => !t.cancelled && t.due <= target).sort((a, b) => a.due - b.due)[0];
      if (!next) break;
      this.current = next.due;
      next.cancelled = true;
      next.fn();
    }
    this.current = target;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }
}

/** Polls `condition` on the real event loop (sockets move on their own) until it holds. */
export async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
