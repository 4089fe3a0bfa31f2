import { echo } from '../../text/echo.js';

/**
 * The one table of the API's error codes (D50): for each `code` its HTTP status, its `error`
 * member, its message (fixed, or the template that writes it), where docs/ documents it, and how
 * a refusal of it is logged and counted. Every error body the server sends is built from an entry
 * here (`apiError` in api-error.ts); test/unit/http/error-codes.test.ts holds the table and
 * docs/api.md#error-codes to each other, so a code cannot be added without its documentation.
 */

/** The `error` member of the request-shape codes: the label of the endpoint that parsed the body. */
export const ENDPOINT_LABEL = Symbol('the endpoint label');

/**
 * The log line the error handler writes for a refusal (docs/logging.md#requests): a parse or a
 * validation failure, an idempotency conflict (info: the client's retry logic at work), a store
 * failure, a stream the backend could not set up. Codes without one get only the access line
 * (or the line of the hook that refused them).
 */
export type ErrorLogKind = 'parse' | 'validation' | 'idempotency_conflict' | 'processing' | 'stream_setup';

export interface ErrorCodeEntry {
  readonly status: number;
  /** The body's `error`; `ENDPOINT_LABEL` for the codes every request-parsing endpoint shares. */
  readonly error: string | typeof ENDPOINT_LABEL;
  /** The message, or the template that writes it from the values of one refusal. */
  readonly message: string | ((...args: never) => string);
  /** The page of docs/ and the heading that say when the code is answered. */
  readonly doc: string;
  readonly log?: ErrorLogKind;
  /**
   * Notify counts the refusal `rejected`, not `error`, in `aviso_notifications_total`: the request
   * was understood and refused by policy (strict mode, roles, an idempotency record).
   */
  readonly rejected?: true;
}

/** A message given whole by the refusal itself: a parser's or a validator's text, a configuration line. */
const given = (message: string): string => message;

const OUTSIDE_HANDLERS = 'docs/api.md#errors-outside-the-handlers-decisions-d3-d15';
const NOTIFY = 'docs/api.md#post-apiv1notification';
const STREAMS = 'docs/api.md#post-apiv1watch-and-post-apiv1replay';
const IDEMPOTENT = 'docs/api.md#idempotent-notify';
const BATCH = 'docs/api.md#batch-notify-decision-d48';
const AUTH = 'docs/auth.md#errors';

export const ERROR_CODES = {
  // Parsing a notify, watch or replay body (or a GET stream's query), first failure wins.
  INVALID_JSON: { status: 400, error: ENDPOINT_LABEL, message: given, doc: 'docs/api.md#request-bodies', log: 'parse' },
  UNKNOWN_FIELD: { status: 400, error: ENDPOINT_LABEL, message: given, doc: 'docs/api.md#request-bodies', log: 'parse' },
  INVALID_REQUEST_SHAPE: { status: 400, error: ENDPOINT_LABEL, message: given, doc: 'docs/api.md#request-bodies', log: 'parse' },
  // Strict mode, then each endpoint's validation.
  UNKNOWN_EVENT_TYPE: {
    status: 400,
    error: 'unknown_event_type',
    message: (eventType: string) => `unknown event type '${echo(eventType)}'`,
    doc: NOTIFY,
    log: 'validation',
    rejected: true,
  },
  INVALID_NOTIFICATION_REQUEST: { status: 400, error: 'Invalid Notification Request', message: given, doc: NOTIFY, log: 'validation' },
  INVALID_WATCH_REQUEST: { status: 400, error: 'Invalid Watch Request', message: given, doc: STREAMS, log: 'validation' },
  INVALID_REPLAY_REQUEST: { status: 400, error: 'Invalid Replay Request', message: given, doc: STREAMS, log: 'validation' },
  NOTIFICATION_STORAGE_FAILED: {
    status: 500,
    error: 'Notification Storage Failed',
    message: 'Failed to store notification',
    doc: NOTIFY,
    log: 'processing',
  },
  SSE_STREAM_INITIALIZATION_FAILED: {
    status: 500,
    error: 'SSE stream creation failed',
    message: 'Failed to create stream consumer',
    doc: STREAMS,
    log: 'stream_setup',
  },
  TOO_MANY_STREAMS: {
    status: 503,
    error: 'too_many_streams',
    message: (limit: number) => `The server holds its limit of ${limit} streams; retry later`,
    doc: 'docs/api.md#the-stream-limit-decision-d44',
  },
  // Idempotent notify.
  INVALID_IDEMPOTENCY_KEY: {
    status: 400,
    error: 'invalid_idempotency_key',
    message: 'Idempotency-Key must be one value of 1 to 255 visible ASCII characters',
    doc: IDEMPOTENT,
    log: 'validation',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    error: 'idempotency_key_reused',
    message: 'Idempotency-Key was already used for a different notification',
    doc: IDEMPOTENT,
    log: 'idempotency_conflict',
    rejected: true,
  },
  IDEMPOTENCY_KEY_IN_PROGRESS: {
    status: 409,
    error: 'idempotency_key_in_progress',
    message: 'A request with this Idempotency-Key is still being processed',
    doc: IDEMPOTENT,
    log: 'idempotency_conflict',
    rejected: true,
  },
  // Batch notify: a body that is not a batch is refused whole.
  BATCH_NOT_AN_ARRAY: {
    status: 400,
    error: 'batch_not_an_array',
    message: (got: string) => `A batch is a JSON array of notifications (or application/x-ndjson, one per line), got ${got}`,
    doc: BATCH,
    log: 'parse',
  },
  BATCH_EMPTY: { status: 400, error: 'batch_empty', message: 'The batch holds no notification', doc: BATCH, log: 'parse' },
  BATCH_ITEM_NOT_AN_OBJECT: {
    status: 400,
    error: 'batch_item_not_an_object',
    message: (index: number, got: string) => `Batch item ${index} is not a JSON object, got ${got}`,
    doc: BATCH,
    log: 'parse',
  },
  BATCH_TOO_MANY_ITEMS: {
    status: 413,
    error: 'batch_too_many_items',
    message: (items: number, limit: number) =>
      `The batch holds ${items} notifications, more than notification_endpoint.max_batch_items (${limit})`,
    doc: BATCH,
    log: 'parse',
  },
  // Admin routes.
  INVALID_QUERY: { status: 400, error: 'invalid_query', message: given, doc: 'docs/api.md#get-apiv1adminstreams', log: 'validation' },
  INVALID_CONFIGURATION: { status: 400, error: 'invalid_configuration', message: given, doc: 'docs/api.md#post-apiv1adminreload' },
  // Authentication and authorization (shape C: never `details`).
  UNAUTHORIZED: { status: 401, error: 'unauthorized', message: given, doc: AUTH, rejected: true },
  FORBIDDEN: { status: 403, error: 'forbidden', message: given, doc: AUTH, rejected: true },
  SERVICE_UNAVAILABLE: { status: 503, error: 'service_unavailable', message: given, doc: AUTH },
  // Outside the handlers: routing, limits, the connection.
  NOT_FOUND: {
    status: 404,
    error: 'not_found',
    message: (method: string, path: string) => `No route for ${method} ${echo(path)}`,
    doc: OUTSIDE_HANDLERS,
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    error: 'method_not_allowed',
    message: (method: string, path: string, allowed: readonly string[]) =>
      `Method ${method} is not allowed for ${echo(path)}. Allowed: ${allowed.join(', ')}`,
    doc: OUTSIDE_HANDLERS,
  },
  /** The body limit's refusal, or the backend's when a notification is more than it can hold in one message (D33). */
  PAYLOAD_TOO_LARGE: {
    status: 413,
    error: 'payload_too_large',
    message: (limit: { readonly bodyBytes: number } | { readonly backendReason: string }) =>
      'bodyBytes' in limit ? `Request body exceeds the limit of ${limit.bodyBytes} bytes` : limit.backendReason,
    doc: OUTSIDE_HANDLERS,
  },
  BAD_REQUEST: { status: 400, error: 'bad_request', message: given, doc: OUTSIDE_HANDLERS },
  URI_TOO_LONG: { status: 414, error: 'uri_too_long', message: 'A path segment of the URL is too long', doc: OUTSIDE_HANDLERS },
  REQUEST_TIMEOUT: { status: 408, error: 'request_timeout', message: 'The request was not received in time', doc: OUTSIDE_HANDLERS },
  HEADERS_TOO_LARGE: {
    status: 431,
    error: 'headers_too_large',
    message: 'The request head exceeds the configured limit',
    doc: OUTSIDE_HANDLERS,
  },
  CROSS_ORIGIN_REQUEST_REFUSED: {
    status: 403,
    error: 'cross_origin_request_refused',
    message: 'A request from another origin may change nothing here unless application.cors.allowed_origins allows that origin',
    doc: OUTSIDE_HANDLERS,
  },
  /** A bug, reported without internals; or auth's "cannot decide" (a misconfiguration), with its reason. */
  INTERNAL_ERROR: {
    status: 500,
    error: 'internal_error',
    message: (reason?: string) => reason ?? 'Internal server error',
    doc: OUTSIDE_HANDLERS,
  },
} as const satisfies Readonly<Record<string, ErrorCodeEntry>>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The values a code's message template takes; none for a fixed message. */
export type MessageArgs<C extends ErrorCode> = C extends ErrorCode
  ? (typeof ERROR_CODES)[C]['message'] extends (...args: infer A) => string
    ? A
    : []
  : never;

/** The entry of `code`, seen through the common shape. */
export function errorCodeEntry(code: ErrorCode): ErrorCodeEntry {
  return ERROR_CODES[code];
}
