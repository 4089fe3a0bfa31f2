import type { AuthError, AuthErrorStatus } from '../../auth/auth-error.js';
import { ApiError } from './api-error.js';
import { ENDPOINTS, type EndpointName } from './endpoint.js';
import { echo, withOneCutValue } from '../../text/echo.js';

/** Constructors for every error shape of docs/design/rules/api.md §9.1, so no route assembles an error body itself. */

/**
 * Shape A: parse and validation failures of notify/watch/replay. A value cut to the echo length
 * is quoted once in the whole body: `details` repeating `message` keeps only the cut's marker
 * (docs/api.md#echoed-values-decision-d45).
 */
export function requestError(endpoint: EndpointName, code: string, message: string, details: string = message): ApiError {
  const [onceMessage = message, onceDetails = details] = withOneCutValue([message, details]);
  return new ApiError(400, { code, details: onceDetails, error: ENDPOINTS[endpoint].label, message: onceMessage });
}

export function validationError(endpoint: EndpointName, message: string, details: string = message): ApiError {
  return requestError(endpoint, ENDPOINTS[endpoint].validationCode, message, details);
}

/** Shape B: strict-mode gate (docs/design/rules/api.md §4). */
export function unknownEventTypeError(eventType: string, configuredEventTypes: readonly string[]): ApiError {
  return new ApiError(400, {
    code: 'UNKNOWN_EVENT_TYPE',
    configured_event_types: configuredEventTypes,
    error: 'unknown_event_type',
    message: `unknown event type '${echo(eventType)}'`,
  });
}

/** Shape A with a 500: the backend refused the write. */
export function storageFailedError(cause: string): ApiError {
  return new ApiError(500, {
    code: 'NOTIFICATION_STORAGE_FAILED',
    details: cause,
    error: 'Notification Storage Failed',
    message: 'Failed to store notification',
  });
}

/** D3: no route for the path. */
export function notFoundError(method: string, path: string): ApiError {
  return new ApiError(404, { code: 'NOT_FOUND', error: 'not_found', message: `No route for ${method} ${echo(path)}` });
}

/** D3: the path exists with other methods. */
export function methodNotAllowedError(method: string, path: string, allowed: readonly string[]): ApiError {
  return new ApiError(
    405,
    {
      code: 'METHOD_NOT_ALLOWED',
      error: 'method_not_allowed',
      message: `Method ${method} is not allowed for ${echo(path)}. Allowed: ${allowed.join(', ')}`,
    },
    { allow: allowed.join(', ') },
  );
}

/** D15: body over `application.max_body_bytes`. */
export function payloadTooLargeError(limitBytes: number): ApiError {
  return new ApiError(413, {
    code: 'PAYLOAD_TOO_LARGE',
    error: 'payload_too_large',
    message: `Request body exceeds the limit of ${limitBytes} bytes`,
  });
}

/**
 * D33: a body within `max_body_bytes` whose notification (payload and headers) is still more than
 * the broker carries in one message. The same shape and code as D15, so clients need one rule.
 */
export function notificationTooLargeError(reason: string): ApiError {
  return new ApiError(413, { code: 'PAYLOAD_TOO_LARGE', error: 'payload_too_large', message: reason });
}

/** A URL fastify's router refuses before routing: a malformed percent escape. */
export function malformedUrlError(): ApiError {
  return new ApiError(400, { code: 'BAD_REQUEST', error: 'bad_request', message: 'Malformed URL: invalid percent-encoding' });
}

/** A path parameter longer than the router accepts (no event type or notification id is that long). */
export function uriTooLongError(): ApiError {
  return new ApiError(414, { code: 'URI_TOO_LONG', error: 'uri_too_long', message: 'A path segment of the URL is too long' });
}

/**
 * A request that would change state, sent by a page on an origin the CORS policy does not allow
 * (docs/security.md, "Cross-site writes"); refused before its body is read.
 */
export function crossOriginRefusedError(): ApiError {
  return new ApiError(403, {
    code: 'CROSS_ORIGIN_REQUEST_REFUSED',
    error: 'cross_origin_request_refused',
    message: 'A request from another origin may change nothing here unless application.cors.allowed_origins allows that origin',
  });
}

/** Anything that escaped the handlers: a bug, reported without internals. */
export function internalError(): ApiError {
  return new ApiError(500, { code: 'INTERNAL_ERROR', error: 'internal_error', message: 'Internal server error' });
}

/** Shape D: the backend could not set a stream up (docs/design/rules/api.md §9.1). */
export function streamInitializationFailedError(cause: string, topic: string): ApiError {
  return new ApiError(500, {
    code: 'SSE_STREAM_INITIALIZATION_FAILED',
    details: cause,
    error: 'SSE stream creation failed',
    message: 'Failed to create stream consumer',
    topic,
  });
}

/** Seconds a client refused by the stream limit is told to wait: at random in this range, so refused clients do not all return at once. */
export const STREAM_RETRY_AFTER_SEC = { min: 5, max: 15 } as const;

/**
 * D44: the process holds `application.max_streams` streams. `Retry-After` makes the aviso
 * clients retry (they reconnect after a 503, waiting what it says); over HTTP/1.1 the connection
 * is closed after the answer, so a refused client does not keep one of the connections kept for
 * probes and notify (the error handler drops `Connection` on HTTP/2, where the connection is shared).
 */
export function tooManyStreamsError(limit: number, retryAfterSec: number): ApiError {
  return new ApiError(
    503,
    {
      code: 'TOO_MANY_STREAMS',
      error: 'too_many_streams',
      message: `The server holds its limit of ${limit} streams; retry later`,
    },
    { 'retry-after': String(retryAfterSec), connection: 'close' },
  );
}

const AUTH_ERROR_CODES: Readonly<Record<AuthErrorStatus, { code: string; error: string }>> = {
  401: { code: 'UNAUTHORIZED', error: 'unauthorized' },
  403: { code: 'FORBIDDEN', error: 'forbidden' },
  500: { code: 'INTERNAL_ERROR', error: 'internal_error' },
  503: { code: 'SERVICE_UNAVAILABLE', error: 'service_unavailable' },
};

/** Shape C (docs/design/rules/operations.md §2.8): four members, never `details`; 401s carry their challenges. */
export function authError(
  status: AuthErrorStatus,
  message: string,
  challenges: readonly string[] = [],
  logContext: Readonly<Record<string, unknown>> = {},
): ApiError {
  return new ApiError(
    status,
    { ...AUTH_ERROR_CODES[status], message },
    challenges.length > 0 ? { 'www-authenticate': [...challenges] } : {},
    logContext,
  );
}

/** What auth refused, as the client sees it: shape C with its status and challenges. */
export function authErrorResponse(error: AuthError): ApiError {
  return authError(error.status, error.message, error.challenges, error.logContext);
}

/** docs/api.md "Idempotent notify": a malformed key, or one sent more than once. */
export function invalidIdempotencyKeyError(): ApiError {
  return new ApiError(400, {
    code: 'INVALID_IDEMPOTENCY_KEY',
    error: 'invalid_idempotency_key',
    message: 'Idempotency-Key must be one value of 1 to 255 visible ASCII characters',
  });
}

/** The key's first success stored a different notification. */
export function idempotencyKeyReusedError(): ApiError {
  return new ApiError(422, {
    code: 'IDEMPOTENCY_KEY_REUSED',
    error: 'idempotency_key_reused',
    message: 'Idempotency-Key was already used for a different notification',
  });
}

/** The first request with this key has not finished: retry in a second. */
export function idempotencyKeyInProgressError(): ApiError {
  return new ApiError(
    409,
    {
      code: 'IDEMPOTENCY_KEY_IN_PROGRESS',
      error: 'idempotency_key_in_progress',
      message: 'A request with this Idempotency-Key is still being processed',
    },
    { 'retry-after': '1' },
  );
}

/** A query parameter of an admin list that is not one it takes, or out of its range (D49). */
export function invalidQueryError(message: string): ApiError {
  return new ApiError(400, { code: 'INVALID_QUERY', error: 'invalid_query', message });
}

/** Batch notify (docs/api.md#batch-notify-decision-d48, D48): a body that is not a batch is refused whole, nothing stored. */
function batchError(status: number, code: string, message: string): ApiError {
  return new ApiError(status, { code, error: code.toLowerCase(), message });
}

export function batchNotAnArrayError(got: string): ApiError {
  return batchError(400, 'BATCH_NOT_AN_ARRAY', `A batch is a JSON array of notifications (or application/x-ndjson, one per line), got ${got}`);
}

export function batchEmptyError(): ApiError {
  return batchError(400, 'BATCH_EMPTY', 'The batch holds no notification');
}

export function batchItemNotAnObjectError(index: number, got: string): ApiError {
  return batchError(400, 'BATCH_ITEM_NOT_AN_OBJECT', `Batch item ${index} is not a JSON object, got ${got}`);
}

export function batchTooManyItemsError(items: number, limit: number): ApiError {
  return batchError(
    413,
    'BATCH_TOO_MANY_ITEMS',
    `The batch holds ${items} notifications, more than notification_endpoint.max_batch_items (${limit})`,
  );
}
