import type { AuthError, AuthErrorStatus } from '../../auth/auth-error.js';
import { ApiError, apiError } from './api-error.js';
import { VALIDATION_CODES, type EndpointName } from './endpoint.js';
import type { ErrorCode } from './error-codes.js';
import { describeClientError } from '../transport/server-limits.js';
import { withOneCutValue } from '../../text/echo.js';

/**
 * Constructors for the error shapes of docs/design/rules/api.md §9.1, each over its code's entry
 * in the table (error-codes.ts), adding what one refusal carries beyond it: `details`, headers,
 * the event types of strict mode, a stream's topic.
 */

/**
 * Shape A: parse and validation failures of notify/watch/replay. A value cut to the echo length
 * is quoted once in the whole body: `details` repeating `message` keeps only the cut's marker
 * (docs/api.md#echoed-values-decision-d45).
 */
export function requestError(
  endpoint: EndpointName,
  code: 'INVALID_JSON' | 'UNKNOWN_FIELD' | 'INVALID_REQUEST_SHAPE' | (typeof VALIDATION_CODES)[EndpointName],
  message: string,
  details: string = message,
): ApiError {
  const [onceMessage = message, onceDetails = details] = withOneCutValue([message, details]);
  return apiError(code, [onceMessage], { endpoint, details: onceDetails });
}

export function validationError(endpoint: EndpointName, message: string, details: string = message): ApiError {
  return requestError(endpoint, VALIDATION_CODES[endpoint], message, details);
}

/** Shape B: strict-mode gate (docs/design/rules/api.md §4). */
export function unknownEventTypeError(eventType: string, configuredEventTypes: readonly string[]): ApiError {
  return apiError('UNKNOWN_EVENT_TYPE', [eventType], { configured_event_types: configuredEventTypes });
}

/** Shape A with a 500: the backend refused the write. */
export function storageFailedError(cause: string): ApiError {
  return apiError('NOTIFICATION_STORAGE_FAILED', [], { details: cause });
}

/** D3: no route for the path. */
export function notFoundError(method: string, path: string): ApiError {
  return apiError('NOT_FOUND', [method, path]);
}

/** D3: the path exists with other methods. */
export function methodNotAllowedError(method: string, path: string, allowed: readonly string[]): ApiError {
  return apiError('METHOD_NOT_ALLOWED', [method, path, allowed], { headers: { allow: allowed.join(', ') } });
}

/** D15: body over `application.max_body_bytes`. */
export function payloadTooLargeError(limitBytes: number): ApiError {
  return apiError('PAYLOAD_TOO_LARGE', [{ bodyBytes: limitBytes }]);
}

/**
 * D33: a body within `max_body_bytes` whose notification (payload and headers) is still more than
 * the broker carries in one message. The same shape and code as D15, so clients need one rule.
 */
export function notificationTooLargeError(reason: string): ApiError {
  return apiError('PAYLOAD_TOO_LARGE', [{ backendReason: reason }]);
}

/** A URL fastify's router refuses before routing: a malformed percent escape. */
export function malformedUrlError(): ApiError {
  return apiError('BAD_REQUEST', ['Malformed URL: invalid percent-encoding']);
}

/** A path parameter longer than the router accepts (no event type or notification id is that long). */
export function uriTooLongError(): ApiError {
  return apiError('URI_TOO_LONG', []);
}

/**
 * What a request that never reached a route gets, as the HTTP/1.1 server answers it before
 * fastify (server-limits.ts): a head too large, a request not received in time.
 */
export function clientError(nodeErrorCode: string): ApiError {
  const answer = describeClientError(nodeErrorCode);
  return new ApiError(answer.code, answer.message);
}

/**
 * A request that would change state, sent by a page on an origin the CORS policy does not allow
 * (docs/security.md, "Cross-site writes"); refused before its body is read.
 */
export function crossOriginRefusedError(): ApiError {
  return apiError('CROSS_ORIGIN_REQUEST_REFUSED', []);
}

/** Anything that escaped the handlers: a bug, reported without internals. */
export function internalError(): ApiError {
  return apiError('INTERNAL_ERROR', []);
}

/** Shape D: the backend could not set a stream up (docs/design/rules/api.md §9.1). */
export function streamInitializationFailedError(cause: string, topic: string): ApiError {
  return apiError('SSE_STREAM_INITIALIZATION_FAILED', [], { details: cause, topic });
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
  return apiError('TOO_MANY_STREAMS', [limit], { headers: { 'retry-after': String(retryAfterSec), connection: 'close' } });
}

const AUTH_ERROR_CODES = {
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
} as const satisfies Readonly<Record<AuthErrorStatus, ErrorCode>>;

/** Shape C (docs/design/rules/operations.md §2.8): four members, never `details`; 401s carry their challenges. */
export function authError(
  status: AuthErrorStatus,
  message: string,
  challenges: readonly string[] = [],
  logContext: Readonly<Record<string, unknown>> = {},
): ApiError {
  return apiError(AUTH_ERROR_CODES[status], [message], {
    headers: challenges.length > 0 ? { 'www-authenticate': [...challenges] } : {},
    logContext,
  });
}

/** What auth refused, as the client sees it: shape C with its status and challenges. */
export function authErrorResponse(error: AuthError): ApiError {
  return authError(error.status, error.message, error.challenges, error.logContext);
}

/** docs/api.md "Idempotent notify": a malformed key, or one sent more than once. */
export function invalidIdempotencyKeyError(): ApiError {
  return apiError('INVALID_IDEMPOTENCY_KEY', []);
}

/** The key's first success stored a different notification. */
export function idempotencyKeyReusedError(): ApiError {
  return apiError('IDEMPOTENCY_KEY_REUSED', []);
}

/** The first request with this key has not finished: retry in a second. */
export function idempotencyKeyInProgressError(): ApiError {
  return apiError('IDEMPOTENCY_KEY_IN_PROGRESS', [], { headers: { 'retry-after': '1' } });
}

/** A query parameter of an admin list that is not one it takes, or out of its range (D49). */
export function invalidQueryError(message: string): ApiError {
  return apiError('INVALID_QUERY', [message]);
}

/** A reload refused (docs/design/rules/api.md §8.6): the configuration on disk would not start; `line` is what startup prints. */
export function invalidConfigurationError(line: string): ApiError {
  return apiError('INVALID_CONFIGURATION', [line]);
}

/** Batch notify (docs/api.md#batch-notify-decision-d48, D48): a body that is not a batch is refused whole, nothing stored. */
export function batchNotAnArrayError(got: string): ApiError {
  return apiError('BATCH_NOT_AN_ARRAY', [got]);
}

export function batchEmptyError(): ApiError {
  return apiError('BATCH_EMPTY', []);
}

export function batchItemNotAnObjectError(index: number, got: string): ApiError {
  return apiError('BATCH_ITEM_NOT_AN_OBJECT', [index, got]);
}

export function batchTooManyItemsError(items: number, limit: number): ApiError {
  return apiError('BATCH_TOO_MANY_ITEMS', [items, limit]);
}
