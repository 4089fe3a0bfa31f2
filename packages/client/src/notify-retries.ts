import { sleep, type Clock } from './clock.js';
import { TransportError } from './errors.js';
import { backoffDelay, retryAfterDelay } from './stream/backoff.js';

/** Retries of one notify after its first attempt, when retrying is safe (docs/client.md "Idempotent notify"). */
export const NOTIFY_RETRIES = 5;

export interface Exchange {
  readonly response: Response;
  readonly text: string;
}

/** A 5xx or a 409 (the first request with the key still in flight). */
export function retryableAnswer(exchange: Exchange): boolean {
  return exchange.response.status >= 500 || exchange.response.status === 409;
}

/**
 * Sends a notify and, while `mayRetry()` says the server deduplicates by the request's
 * `Idempotency-Key`, sends it again after a retryable failure, with the streams' full-jitter
 * backoff or the server's `Retry-After`. Without that knowledge a notify is never sent twice: the
 * first may have been stored.
 */
export async function sendWithRetries(
  send: () => Promise<Exchange>,
  mayRetry: () => boolean,
  clock: Clock,
  signal?: AbortSignal,
  retryable: (exchange: Exchange) => boolean = retryableAnswer,
): Promise<Exchange> {
  for (let retry = 0; ; retry++) {
    let outcome: Exchange | TransportError;
    try {
      outcome = await send();
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      outcome = error;
    }
    // A cut or timed-out request is always worth sending again; an answer when `retryable` says so.
    const again = outcome instanceof TransportError || retryable(outcome);
    if (!again || retry >= NOTIFY_RETRIES || !mayRetry()) {
      if (outcome instanceof TransportError) throw outcome;
      return outcome;
    }
    const serverWait =
      outcome instanceof TransportError ? undefined : retryAfterDelay(outcome.response.headers.get('retry-after'), clock.now());
    await sleep(clock, serverWait ?? backoffDelay(retry, () => clock.random()), signal);
  }
}
