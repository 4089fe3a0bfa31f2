import type { JsonValue } from '../../json/json-value.js';
import { JsonSyntaxError, parseJsonBody } from '../../json/lossless-parse.js';
import type { StreamEndpoint } from '../../schema/watch-identifier.js';
import { requestError, validationError } from './error-bodies.js';
import { ALLOWED_REQUEST_FIELDS, parseRequestValue, type NotificationRequest } from './request-body.js';
import { echo } from '../../text/echo.js';

/**
 * The GET forms of watch and replay (docs/design/rules/browser.md §1): the query mirrors the POST body, so it is
 * turned into the same JSON value and judged by the same parse stages (`request-body.ts`) and
 * then the same validation as a POST.
 */

/** The query parameters a GET stream accepts: the body fields of a stream request (no `payload`). */
const STREAM_QUERY_PARAMETERS = ALLOWED_REQUEST_FIELDS.filter((field) => field !== 'payload');

/**
 * The request a GET stream's URL describes. `identifier` is JSON text (omitted: `{}`); a parameter
 * given twice becomes a sequence, which the shape stage refuses as it would in a body. Anything
 * else (`token`, `access_token`: tokens in URLs are never accepted) is an unknown field.
 */
export function parseStreamQuery(endpoint: StreamEndpoint, url: string): NotificationRequest {
  const question = url.indexOf('?');
  const params = new URLSearchParams(question < 0 ? '' : url.slice(question + 1));
  // Own properties only, so a `__proto__` parameter stays a parameter (and an unknown one).
  const entries: [string, JsonValue][] = [];
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    entries.push([key, values.length === 1 ? (values[0] as string) : values]);
  }
  const value = Object.fromEntries(entries) as Record<string, JsonValue>;
  const identifier = value.identifier;
  if (identifier === undefined) value.identifier = {};
  else if (typeof identifier === 'string') value.identifier = parseIdentifierText(endpoint, identifier);
  return parseRequestValue(endpoint, value, STREAM_QUERY_PARAMETERS);
}

/** The POST body's malformed-JSON answer, naming the parameter that held the text. */
function parseIdentifierText(endpoint: StreamEndpoint, text: string): JsonValue {
  try {
    return parseJsonBody(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw requestError(endpoint, 'INVALID_JSON', `JSON parsing failed: query parameter 'identifier': ${error.message}`);
  }
}

/** u64::MAX: a `Last-Event-ID` must leave room for `from_id = n + 1`. */
const U64_MAX = 0xffff_ffff_ffff_ffffn;

function malformedLastEventIdMessage(value: string): string {
  return `Last-Event-ID must be '<event_type>@<sequence>', the id of a notification of this stream. Got: '${echo(value)}'`;
}

function otherEventTypeMessage(value: string, eventType: string): string {
  return `Last-Event-ID '${echo(value)}' names another event type than this stream's '${echo(eventType)}'`;
}

/**
 * `Last-Event-ID: <event_type>@<n>` (docs/design/rules/browser.md §1): the sequence of the last notification the
 * browser received, `undefined` when the header is absent (or empty, which `EventSource` never
 * sends). A malformed value or another event type is the endpoint's validation error.
 */
export function parseLastEventId(endpoint: StreamEndpoint, header: string | string[] | undefined, eventType: string): bigint | undefined {
  if (header === undefined || header === '') return undefined;
  const value = Array.isArray(header) ? header.join(', ') : header;
  const at = value.lastIndexOf('@');
  const digits = value.slice(at + 1);
  if (at <= 0 || !/^(0|[1-9][0-9]*)$/.test(digits) || BigInt(digits) >= U64_MAX) {
    throw validationError(endpoint, malformedLastEventIdMessage(value));
  }
  if (value.slice(0, at) !== eventType) throw validationError(endpoint, otherEventTypeMessage(value, eventType));
  return BigInt(digits);
}
