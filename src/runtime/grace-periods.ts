/** How long each step of a shutdown may take (docs/design/rules/operations.md §4.2); a primary of several workers uses them too. */

/** In-flight requests get this long to finish on shutdown before sockets are closed (docs/design/rules/operations.md §4.2). */
export const SHUTDOWN_GRACE_MS = 30_000;
export const METRICS_SHUTDOWN_GRACE_MS = 5_000;
export const LOG_FLUSH_GRACE_MS = 2_000;
/** Flushing queued OTLP records on shutdown; a dead collector must not hold the exit longer. */
export const OTLP_FLUSH_GRACE_MS = 2_000;
/** A NATS drain that hangs (a server gone mid-drain) must not keep the process from exiting. */
export const BACKEND_SHUTDOWN_GRACE_MS = 5_000;

export function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  return Promise.race([promise, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
}
