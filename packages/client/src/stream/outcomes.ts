import { AuthError, HttpError, StreamProtocolError } from '../errors.js';
import { isEventStream, retryAfterDelay, SERVER_SHUTDOWN_WAIT_MS, SHORT_SESSION_MS } from './backoff.js';
import { CLOSE_REASONS } from './frames.js';

/** What one connection ended with: the stream is complete, or the supervisor reconnects after `wait`. */
export type Outcome =
  { readonly kind: 'finished' } | { readonly kind: 'reconnect'; readonly wait: 'now' | 'backoff' | number; readonly reason: string };

export interface ResponseContext {
  /** A credential exists and was not refreshed since the last confirmed opening. */
  readonly canRefresh: boolean;
  readonly refresh: () => Promise<void>;
  readonly now: number;
}

/**
 * docs/design/rules/client.md §3 on a watch's HTTP answer: `undefined` for 200 + `text/event-stream` (read it);
 * a reconnect for 5xx, 429/503 (after `Retry-After`) and a first 401 (after a refresh); a throw
 * for everything terminal.
 */
export async function responseOutcome(response: Response, context: ResponseContext): Promise<Outcome | undefined> {
  const status = response.status;
  if (status === 200 && isEventStream(response.headers.get('content-type'))) return undefined;
  const text = await response.text().catch(() => '');
  const requestId = response.headers.get('x-request-id') ?? undefined;
  if (status === 401) {
    if (context.canRefresh) {
      await context.refresh();
      return { kind: 'reconnect', wait: 'now', reason: '401, credential refreshed' };
    }
    throw new AuthError('the server refused the credential (401)', 401, { cause: new HttpError(401, text, requestId) });
  }
  if (status === 429 || status === 503) {
    const wait = retryAfterDelay(response.headers.get('retry-after'), context.now);
    return { kind: 'reconnect', wait: wait ?? 'backoff', reason: `HTTP ${status}` };
  }
  if (status >= 500) return { kind: 'reconnect', wait: 'backoff', reason: `HTTP ${status}` };
  if (status >= 400) throw new HttpError(status, text, requestId);
  if (status !== 200) throw new StreamProtocolError(`expected HTTP 200 for a stream, got ${status}`);
  throw new StreamProtocolError(`expected Content-Type text/event-stream, got ${response.headers.get('content-type') ?? 'none'}`);
}

/** docs/design/rules/client.md §3 on a `connection-closing` frame. `sessionMs`: how long the connection had been open. */
export function closeOutcome(data: Record<string, unknown>, context: { readonly replay: boolean; readonly sessionMs: number }): Outcome {
  const reason = data.reason;
  if (typeof reason !== 'string' || !CLOSE_REASONS.has(reason))
    throw new StreamProtocolError(`unknown close reason ${JSON.stringify(reason)}`);
  if (reason === 'server_shutdown') return { kind: 'reconnect', wait: SERVER_SHUTDOWN_WAIT_MS, reason };
  // A replay's own end_of_stream is its completion; a slow-consumer close (D32) still resumes.
  if (context.replay && reason === 'end_of_stream' && data.cause === undefined) return { kind: 'finished' };
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the server's close cause is a string, shown here as it came
  const label = data.cause === undefined ? reason : `${reason} (${String(data.cause)})`;
  return { kind: 'reconnect', wait: context.sessionMs < SHORT_SESSION_MS ? 'backoff' : 'now', reason: label };
}
