/**
 * A refused request, as the console shows it in place (docs/console.md): the status, the
 * server's `code` and `message` (docs/api.md error bodies) and the request id. Pure: no DOM.
 */

export interface ShownError {
  readonly status: number;
  /** e.g. `400 INVALID_WATCH_REQUEST`, `401 UNAUTHORIZED`. */
  readonly title: string;
  readonly message: string;
  readonly requestId?: string;
}

export function describeHttpError(status: number, bodyText: string, requestIdHeader: string | null): ShownError {
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(bodyText) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page, say): its text is shown as the message.
  }
  const code = typeof body.code === 'string' ? body.code : typeof body.error === 'string' ? body.error : '';
  const message = typeof body.message === 'string' ? body.message : bodyText.trim() || 'The server gave no reason';
  const requestId = typeof body.request_id === 'string' ? body.request_id : (requestIdHeader ?? undefined);
  return { status, title: code ? `${status} ${code}` : `${status}`, message, ...(requestId ? { requestId } : {}) };
}

/** The parts of a `Response` that `describeResponse` reads (so this module needs no DOM types). */
export interface AnsweredResponse {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
}

/** A refused response and its body text, with the request id from `X-Request-ID` when the body has none. */
export function describeResponse(response: AnsweredResponse, bodyText: string): ShownError {
  return describeHttpError(response.status, bodyText, response.headers.get('X-Request-ID'));
}

/** A request that never got an answer (server down, connection dropped). */
export function describeNetworkError(error: unknown): ShownError {
  const reason = error instanceof Error ? error.message : String(error);
  return { status: 0, title: 'network error', message: `The server could not be reached: ${reason}` };
}
