/**
 * At most one log line per interval for an event that can repeat in a flood (a refused stream, a
 * refused connection): the first occurrence is logged at once, the next ones only counted, and the
 * first occurrence after the interval is logged with how many it stands for. A flood therefore
 * costs one line per interval, whatever its rate; the event's counter metric keeps the exact total.
 */
export class RateLimitedLine {
  private lastLineAt = Number.NEGATIVE_INFINITY;
  private unlogged = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Records one occurrence. Returns how many occurrences the line to write now stands for (this
   * one and those only counted since the last line), or 0 when no line is due.
   */
  occurred(): number {
    this.unlogged++;
    const now = this.now();
    if (now - this.lastLineAt < this.intervalMs) return 0;
    this.lastLineAt = now;
    const count = this.unlogged;
    this.unlogged = 0;
    return count;
  }
}

/** How often a flood of refusals is logged (one line, with the count since the previous line). */
export const REFUSAL_LOG_INTERVAL_MS = 10_000;
