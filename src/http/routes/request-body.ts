import { JsonNumber, isJsonObject, jsonKind, type JsonObject, type JsonValue } from '../../json/json-value.js';
import { JsonSyntaxError, parseJsonBody } from '../../json/lossless-parse.js';
import type { EndpointName } from './endpoint.js';
import { requestError } from './error-bodies.js';
import { echo } from '../../text/echo.js';

/** The request model shared by notify, watch and replay. */
export interface NotificationRequest {
  readonly event_type: string;
  readonly identifier: JsonObject;
  /** `null` and absent are the same thing. */
  readonly from_id?: string;
  readonly from_date?: string;
  /** replay only: the inclusive end point; watch and notify refuse it. */
  readonly to_id?: string;
  readonly to_date?: string;
  readonly payload?: JsonValue;
}

export const ALLOWED_REQUEST_FIELDS = ['event_type', 'identifier', 'from_id', 'from_date', 'to_id', 'to_date', 'payload'] as const;

function allowedList(allowed: readonly string[]): string {
  return `[${allowed.map((f) => `"${f}"`).join(', ')}]`;
}

/**
 * The parse stages, in the reference's order, first failure wins: JSON → unknown top-level keys → model shape.
 * Diagnostics after the contractual prefixes follow serde's wording where the reference's do.
 */
export function parseNotificationRequest(endpoint: EndpointName, body: Buffer | string | undefined): NotificationRequest {
  let value: JsonValue;
  try {
    value = parseJsonBody(body ?? '');
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return fail(endpoint, 'INVALID_JSON', `JSON parsing failed: ${error.message}`);
  }
  return parseRequestValue(endpoint, value, ALLOWED_REQUEST_FIELDS);
}

/**
 * The stages after JSON parsing, for a value that may also come from elsewhere (a GET stream's
 * query): unknown keys (judged against `allowed`) → model shape.
 */
export function parseRequestValue(endpoint: EndpointName, value: JsonValue, allowed: readonly string[]): NotificationRequest {
  if (isJsonObject(value)) {
    const unknown = Object.keys(value)
      .filter((key) => !allowed.includes(key))
      .sort();
    if (unknown.length > 0) {
      return fail(
        endpoint,
        'UNKNOWN_FIELD',
        `Request contains unknown fields: Unknown field '${echo(unknown[0] ?? '')}' in request. Allowed fields: ${allowedList(allowed)}`,
      );
    }
  }

  const shapeProblem = describeShapeProblem(value);
  if (shapeProblem) {
    return fail(endpoint, 'INVALID_REQUEST_SHAPE', `Request deserialization failed: ${shapeProblem}`);
  }
  const request = value as JsonObject;
  return {
    event_type: request.event_type as string,
    identifier: request.identifier as JsonObject,
    ...(typeof request.from_id === 'string' ? { from_id: request.from_id } : {}),
    ...(typeof request.from_date === 'string' ? { from_date: request.from_date } : {}),
    ...(typeof request.to_id === 'string' ? { to_id: request.to_id } : {}),
    ...(typeof request.to_date === 'string' ? { to_date: request.to_date } : {}),
    ...(request.payload !== undefined && request.payload !== null ? { payload: request.payload } : {}),
  };
}

function fail(endpoint: EndpointName, code: 'INVALID_JSON' | 'UNKNOWN_FIELD' | 'INVALID_REQUEST_SHAPE', message: string): never {
  throw requestError(endpoint, code, message);
}

/** Checks fields in key order, then missing ones, like serde mapping a sorted JSON map onto a struct. */
function describeShapeProblem(value: JsonValue): string | undefined {
  if (!isJsonObject(value)) {
    return `invalid type: ${describeValue(value)}, expected struct NotificationRequest`;
  }
  for (const key of Object.keys(value).sort()) {
    const field = value[key] as JsonValue;
    switch (key) {
      case 'event_type':
        if (typeof field !== 'string') return `invalid type: ${describeValue(field)}, expected a string`;
        break;
      case 'identifier':
        if (!isJsonObject(field)) return `invalid type: ${describeValue(field)}, expected a map`;
        break;
      case 'from_id':
      case 'from_date':
      case 'to_id':
      case 'to_date':
        if (field !== null && typeof field !== 'string') {
          return `invalid type: ${describeValue(field)}, expected a string (field \`${key}\`)`;
        }
        break;
      default:
        break;
    }
  }
  if (!('event_type' in value)) return 'missing field `event_type`';
  if (!('identifier' in value)) return 'missing field `identifier`';
  return undefined;
}

function describeValue(value: JsonValue): string {
  if (value instanceof JsonNumber) {
    return value.isIntegerLiteral ? `integer \`${echo(value.source)}\`` : `floating point \`${echo(value.source)}\``;
  }
  switch (jsonKind(value)) {
    case 'string':
      return `string ${JSON.stringify(echo(value as string))}`;
    case 'boolean':
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- jsonKind said it is a boolean
      return `boolean \`${String(value)}\``;
    case 'null':
      return 'null';
    case 'array':
      return 'sequence';
    default:
      return 'map';
  }
}
