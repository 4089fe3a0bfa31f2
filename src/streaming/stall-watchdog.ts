import type { Clock, TimerHandle } from '../time/clock.js';

/** A stream connection the watchdog looks at; it decides itself what a check means for it. */
export interface WatchedConnection {
  /** Returns false once it needs no more checks. */
  check(now: number): boolean;
}

/**
 * The one timer behind the no-silent-stall rule (docs/streaming.md "Slow consumers"): connections
 * that hold unsent bytes, or were closed and have not ended yet, are checked a few times per bound;
 * a connection with nothing waiting is not watched at all. One interval for the whole process,
 * running only while something is watched, rather than a timer per stream.
 */
export class StallWatchdog {
  private readonly watched = new Set<WatchedConnection>();
  private timer: TimerHandle | undefined;
  readonly checkIntervalMs: number;

  constructor(
    private readonly clock: Clock,
    readonly boundMs: number,
  ) {
    // Four checks per bound, so a stall is acted on within 1.25 × the bound; never busier than 10/s.
    this.checkIntervalMs = Math.min(1_000, Math.max(100, Math.floor(boundMs / 4)));
  }

  get size(): number {
    return this.watched.size;
  }

  now(): number {
    return this.clock.now();
  }

  watch(connection: WatchedConnection): void {
    this.watched.add(connection);
    this.timer ??= this.clock.setInterval(() => this.checkAll(), this.checkIntervalMs);
  }

  forget(connection: WatchedConnection): void {
    this.watched.delete(connection);
    if (this.watched.size === 0) this.stop();
  }

  private stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private checkAll(): void {
    const now = this.clock.now();
    for (const connection of [...this.watched]) {
      if (!connection.check(now)) this.watched.delete(connection);
    }
    if (this.watched.size === 0) this.stop();
  }
}
