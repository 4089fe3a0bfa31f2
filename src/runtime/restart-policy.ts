/**
 * When the primary replaces a worker that died (D36). A worker that had run for a while is
 * replaced at once: one crash should cost its clients no more than a reconnect. A worker that
 * keeps dying soon after it started (NATS refusing new connections, a bug hit on every start)
 * is replaced after a doubling delay, so a crash loop does not eat the CPUs its siblings serve on.
 */

/** A worker that ran this long before it died counts as having been healthy. */
export const STABLE_RUN_MS = 60_000;
const FIRST_BACKOFF_MS = 1_000;
export const MAX_RESTART_DELAY_MS = 30_000;

/**
 * How many exits in a row of this worker slot came soon after their start, this one included:
 * 1 after a run of at least `STABLE_RUN_MS`, else one more than before.
 */
export function quickExitsAfter(previousQuickExits: number, ranForMs: number): number {
  return ranForMs >= STABLE_RUN_MS ? 1 : previousQuickExits + 1;
}

/** 0 for the first quick exit, then 1 s, 2 s, 4 s, … up to 30 s. */
export function restartDelayMs(quickExits: number): number {
  if (quickExits <= 1) return 0;
  return Math.min(MAX_RESTART_DELAY_MS, FIRST_BACKOFF_MS * 2 ** (quickExits - 2));
}
