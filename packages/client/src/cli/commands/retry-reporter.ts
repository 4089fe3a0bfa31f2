import type { Attributes } from '../log.js';

/** The aviso client shows a listener's retries at most this often. */
export const RETRY_REPORT_INTERVAL_MS = 5_000;

export interface RetryReport {
  readonly body: string;
  readonly attributes: Attributes;
}

/**
 * Coalesces one listener's reconnect attempts into at most one INFO line per 5 s, so a server
 * that keeps failing shows why and how long the next wait is without flooding stderr. The first
 * retry is shown at once; the ones within the next 5 s are counted and reported with the next
 * line that is shown (`suppressed`).
 */
export class RetryReporter {
  private lastShownAt: number | undefined;
  private suppressed = 0;

  constructor(
    private readonly listener: string,
    private readonly now: () => number,
  ) {}

  /** The line to show for this retry, or `undefined` when it is coalesced into the next one. */
  retry(cause: string, delayMs: number): RetryReport | undefined {
    const at = this.now();
    if (this.lastShownAt !== undefined && at - this.lastShownAt < RETRY_REPORT_INTERVAL_MS) {
      this.suppressed += 1;
      return undefined;
    }
    this.lastShownAt = at;
    const attributes: Record<string, unknown> = {
      'event.name': 'cli.listener.retrying',
      listener: this.listener,
      cause,
      delay_ms: Math.round(delayMs),
    };
    if (this.suppressed > 0) attributes.suppressed = this.suppressed;
    this.suppressed = 0;
    return { body: 'Retrying listener connection', attributes };
  }
}
