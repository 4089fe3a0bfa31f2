/**
 * At most N lines a second of each event a client causes with a bad request (D45,
 * `logging.client_error_lines_per_second`): a client that sends 10,000 bad requests a second
 * should cost the log a few lines and a count, not 10,000 lines. Each event name has its own
 * window of one second, opened by its first line; the lines past N in a window are not written,
 * and when the window closes one report says how many there were.
 */

export const RATE_LIMIT_WINDOW_MS = 1000;

export interface EventRateLimitOptions {
  readonly linesPerSecond: number;
  /** Called once for each window that held lines back, when it closes. */
  readonly report: (eventName: string, suppressedLines: number) => void;
  readonly now?: () => number;
  /** Runs `callback` after `ms`; it must not keep the process alive (the default timer is unref'd). */
  readonly schedule?: (callback: () => void, ms: number) => void;
}

interface Window {
  readonly startedAt: number;
  written: number;
  suppressed: number;
}

export class EventRateLimit {
  private readonly windows = new Map<string, Window>();
  private readonly now: () => number;
  private readonly schedule: (callback: () => void, ms: number) => void;
  private suppressedTotal = 0;

  constructor(private readonly options: EventRateLimitOptions) {
    this.now = options.now ?? Date.now;
    this.schedule = options.schedule ?? ((callback, ms) => setTimeout(callback, ms).unref());
  }

  /** Whether a line of `eventName` may be written now; counts it when not. */
  admit(eventName: string): boolean {
    const now = this.now();
    let window = this.windows.get(eventName);
    if (window === undefined || now - window.startedAt >= RATE_LIMIT_WINDOW_MS) {
      // A window that held lines back has its report scheduled already, with its own count.
      window = { startedAt: now, written: 0, suppressed: 0 };
      this.windows.set(eventName, window);
    }
    if (window.written < this.options.linesPerSecond) {
      window.written++;
      return true;
    }
    if (window.suppressed === 0) {
      const closing = window;
      this.schedule(() => this.options.report(eventName, closing.suppressed), closing.startedAt + RATE_LIMIT_WINDOW_MS - now);
    }
    window.suppressed++;
    this.suppressedTotal++;
    return false;
  }

  /** Lines held back since the process started. */
  get suppressedLines(): number {
    return this.suppressedTotal;
  }
}
