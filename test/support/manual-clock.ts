import type { Clock, TimerHandle } from '../../src/time/clock.js';

interface Timer {
  due: number;
  callback: () => void;
  every?: number;
  cancelled: boolean;
}

/** A clock that only moves when the test says so. */
export class ManualClock implements Clock {
  private timers: Timer[] = [];

  constructor(private current = Date.UTC(2026, 2, 1, 12, 0, 0)) {}

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    return this.add({ due: this.current + ms, callback, cancelled: false });
  }

  setInterval(callback: () => void, ms: number): TimerHandle {
    return this.add({ due: this.current + ms, callback, every: ms, cancelled: false });
  }

  /** Timers armed and not yet fired or cancelled, so tests can check that nothing outlives its stream. */
  get pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const next = this.timers.filter((t) => !t.cancelled && t.due <= target).sort((a, b) => a.due - b.due)[0];
      if (!next) break;
      this.current = next.due;
      if (next.every !== undefined) next.due += next.every;
      else next.cancelled = true;
      next.callback();
    }
    this.current = target;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }

  private add(timer: Timer): TimerHandle {
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }
}
