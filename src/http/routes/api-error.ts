import { VALIDATION_CODES, type EndpointName } from './endpoint.js';
import { ENDPOINT_LABEL, errorCodeEntry, type ErrorCode, type MessageArgs } from './error-codes.js';

/**
 * An error body as the client receives it, minus `request_id`, which the error handler adds
 * (docs/design/rules/api.md §9.1). Keys are sorted on the wire (D1), so the order here is free.
 */
export interface ApiErrorBody {
  readonly code: ErrorCode;
  readonly error: string;
  readonly message: string;
  /** Notify, watch and replay refusals: the precise reason; a backend failure: its cause. */
  readonly details?: string;
  /** `UNKNOWN_EVENT_TYPE`: the event types strict mode accepts, sorted. */
  readonly configured_event_types?: readonly string[];
  /** `SSE_STREAM_INITIALIZATION_FAILED`: the topic pattern of the stream that could not be set up. */
  readonly topic?: string;
}

/** What a refusal adds to its code's entry. */
export interface ApiErrorExtras {
  /** The endpoint whose label is the `error` of the request-shape codes (`ENDPOINT_LABEL`). */
  readonly endpoint?: EndpointName;
  readonly details?: string;
  readonly configured_event_types?: readonly string[];
  readonly topic?: string;
  readonly headers?: Readonly<Record<string, string | string[]>>;
  /** Facts for the log line of this rejection that are not part of the response. */
  readonly logContext?: Readonly<Record<string, unknown>>;
  /** Only fastify's own 4xx keep their status under `BAD_REQUEST`; every other answer has its code's. */
  readonly status?: number;
}

/**
 * The one error type that routes and validation throw; the central error handler renders it
 * (docs/design/architecture.md "Errors"). Built with `apiError`, so that status, `error` and
 * message come from the code's entry in the table (error-codes.ts).
 */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly body: ApiErrorBody;
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly logContext: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, extras: ApiErrorExtras = {}) {
    super(message);
    this.name = 'ApiError';
    const entry = errorCodeEntry(code);
    const { endpoint, headers = {}, logContext = {}, status, ...fields } = extras;
    const error = entry.error === ENDPOINT_LABEL ? endpointLabel(endpoint ?? 'notify') : entry.error;
    this.statusCode = status ?? entry.status;
    this.body = { code, error, message, ...fields };
    this.headers = headers;
    this.logContext = logContext;
  }
}

/** The error of `code`, its message written by the code's template from `args`. */
export function apiError<C extends ErrorCode>(code: C, args: MessageArgs<C>, extras?: ApiErrorExtras): ApiError {
  const template = errorCodeEntry(code).message;
  const message = typeof template === 'string' ? template : (template as (...values: readonly unknown[]) => string)(...args);
  return new ApiError(code, message, extras);
}

/** `Invalid Notification Request` and the like: the `error` of the endpoint's validation code. */
function endpointLabel(endpoint: EndpointName): string {
  const { error } = errorCodeEntry(VALIDATION_CODES[endpoint]);
  return typeof error === 'string' ? error : endpoint;
}
