/**
 * Typed errors with stable names (docs/design/rules/client.md §2). `name` is part of the contract: callers and the
 * CLI switch on it, so it is set explicitly rather than left to minifiers.
 */
export class AvisoError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AvisoError';
  }
}

/** Bad options: an unusable base URL, contradictory request fields, an unreadable config. */
export class ConfigError extends AvisoError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/** The network failed: connection refused, reset, timed out, a stream that went silent. */
export class TransportError extends AvisoError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
  }
}

/** The server answered with a status the operation does not accept. */
export class HttpError extends AvisoError {
  readonly status: number;
  /** The response body as text (aviso sends a JSON error object). */
  readonly body: string;
  /** `X-Request-ID` of the response, else `request_id` of the JSON body. */
  readonly requestId: string | undefined;
  /** `code` of the JSON error body when there is one (for example `INVALID_WATCH_REQUEST`). */
  readonly code: string | undefined;
  constructor(status: number, body: string, requestId: string | undefined, message?: string) {
    const parsed = parseErrorBody(body);
    super(message ?? `HTTP ${status}${parsed.message ? `: ${parsed.message}` : ''}`);
    this.name = 'HttpError';
    this.status = status;
    this.body = body;
    this.requestId = requestId ?? parsed.requestId;
    this.code = parsed.code;
  }
}

/** A response body that is not what the endpoint documents (not JSON, wrong shape). */
export class DecodeError extends AvisoError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DecodeError';
  }
}

/** Credentials are missing, refused twice, or may not be sent to this base URL. */
export class AuthError extends AvisoError {
  readonly status: number | undefined;
  constructor(message: string, status?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthError';
    this.status = status;
  }
}

/** A notification frame whose CloudEvent cannot be trusted (bad id, other event type, no identifier object). */
export class MalformedEventError extends AvisoError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MalformedEventError';
  }
}

export type HistoryGap =
  | { readonly kind: 'replay_limit_reached'; readonly maxAllowed: number }
  | { readonly kind: 'sequence_jump'; readonly expected: number; readonly observed: number };

/** History the consumer asked for cannot be delivered completely. */
export class HistoryGapError extends AvisoError {
  readonly gap: HistoryGap;
  constructor(gap: HistoryGap) {
    super(
      gap.kind === 'replay_limit_reached'
        ? `history gap: the server limited the replay to ${gap.maxAllowed} notifications`
        : `history gap: expected sequence ${gap.expected}, received ${gap.observed}`,
    );
    this.name = 'HistoryGapError';
    this.gap = gap;
  }
}

/** The stream broke the protocol: not SSE, a wrong opening frame, an `error` event, an unknown close reason, an oversized line. */
export class StreamProtocolError extends AvisoError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StreamProtocolError';
  }
}

/** The state store could not be read or written; resuming safely is impossible. */
export class StateStoreError extends AvisoError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StateStoreError';
  }
}

/** A required trigger failed (raised by the CLI's listener runner). */
export class TriggerFailedError extends AvisoError {
  readonly trigger: string;
  constructor(trigger: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TriggerFailedError';
    this.trigger = trigger;
  }
}

/** `message`, `request_id` and `code` of an aviso JSON error body; each absent when the body has none. */
export function parseErrorBody(body: string): { message?: string; requestId?: string; code?: string } {
  try {
    const value: unknown = JSON.parse(body);
    if (value === null || typeof value !== 'object') return {};
    const record = value as Record<string, unknown>;
    return {
      message: typeof record.message === 'string' ? record.message : undefined,
      requestId: typeof record.request_id === 'string' ? record.request_id : undefined,
      code: typeof record.code === 'string' ? record.code : undefined,
    };
  } catch {
    return {};
  }
}

/**
 * A fetch failure in words a person can act on: undici reports every network failure as
 * `fetch failed` and keeps the reason (`ECONNREFUSED`, a certificate error) in its cause.
 */
export function describeNetworkFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause === undefined || cause === null || typeof cause !== 'object') return message;
  const detail = [cause.code, cause.message].filter((p): p is string => typeof p === 'string' && p !== '' && p !== message);
  return detail.length > 0 ? `${message} (${[...new Set(detail)].join(': ')})` : message;
}
