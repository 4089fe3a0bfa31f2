/** Timing rules of the reconnect supervisor (docs/design/rules/client.md §3), pure so they are unit-testable. */

export const OPENING_DEADLINE_MS = 10_000;
export const BACKOFF_BASE_MS = 250;
export const BACKOFF_CAP_MS = 30_000;
export const RETRY_AFTER_CAP_MS = 5 * 60_000;
export const SERVER_SHUTDOWN_WAIT_MS = 5_000;
export const SHORT_SESSION_MS = 1_000;
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 30_000;

/** Full jitter: uniform in [0, min(250 ms · 2^attempt, 30 s)). */
export function backoffDelay(attempt: number, random: () => number): number {
  const ceiling = Math.min(BACKOFF_BASE_MS * 2 ** Math.min(attempt, 30), BACKOFF_CAP_MS);
  return Math.floor(random() * ceiling);
}

/** `Retry-After` as delay-seconds or an HTTP date, capped at 5 minutes; `undefined` when absent or unreadable. */
export function retryAfterDelay(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, RETRY_AFTER_CAP_MS);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(date - now, 0), RETRY_AFTER_CAP_MS);
}

/** Silence longer than this is a lost connection: max(3 × interval, interval + 30 s). */
export function watchdogTimeout(heartbeatIntervalMs: number): number {
  return Math.max(3 * heartbeatIntervalMs, heartbeatIntervalMs + 30_000);
}

/** `text/event-stream`, case-insensitive, parameters allowed. */
export function isEventStream(contentType: string | null): boolean {
  return contentType !== null && contentType.split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
}
