import { trimRust } from '../../text/rust-whitespace.js';
import type { StreamEndpoint } from '../../schema/watch-identifier.js';
import { readInstant } from '../../time/instant-text.js';
import { formatRfc3339Utc } from '../../time/time-format.js';
import { LATEST, type ReplayEndRequest, type StartCursorRequest } from '../../streaming/stream-range.js';
import { echo } from '../../text/echo.js';

/** A malformed or conflicting start cursor or end point; `message` is the spec's exact text. */
export class StartCursorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartCursorError';
  }
}

const REPLAY_NEEDS_CURSOR =
  'Replay endpoint requires either from_id or from_date parameter. Use from_id for sequence-based replay or from_date for time-based replay.';
const BOTH_CURSORS =
  'Cannot specify both from_id and from_date. Please provide only one replay parameter. Use from_id for sequence-based replay or from_date for time-based replay.';
const BOTH_ENDS =
  'Cannot specify both to_id and to_date. Please provide only one replay end parameter. Use to_id for a sequence-based end or to_date for a time-based end.';

/** The request fields read as a sequence (`from_id`, `to_id`) or as an instant (`from_date`, `to_date`). */
type SequenceField = 'from_id' | 'to_id';
type DateField = 'from_date' | 'to_date';

function emptySequence(field: SequenceField): string {
  return `${field} cannot be empty. Provide a valid sequence number or omit the field`;
}

function emptyDate(field: DateField): string {
  return `${field} cannot be empty. Provide a valid datetime/timestamp or omit the field`;
}

function invalidSequence(field: SequenceField, value: string): string {
  return `${field} must be a valid positive integer. Got: '${echo(value)}'. Valid examples: '1', '123', '9999'`;
}

function invalidDate(field: DateField, value: string, reason: string): string {
  return (
    `${field} must be a valid datetime/timestamp. Got: '${echo(value)}'. Error: ${reason}. ` +
    "Valid examples: '2025-06-09T13:15:00Z', '2025-06-09 13:15:00+00:00', '2025-06-09 13:15:00', '1740509903', '1740509903710'"
  );
}

/**
 * The start of a stream (docs/streaming.md "Where to start"). Both fields are validated
 * (`from_id` first) before they are compared.
 */
export function resolveStartCursor(endpoint: StreamEndpoint, fromId: string | undefined, fromDate: string | undefined): StartCursorRequest {
  const requested = fromId === undefined ? undefined : parseFromId(fromId);
  const atNs = fromDate === undefined ? undefined : parseFromDate(fromDate);
  if (requested !== undefined && atNs !== undefined) throw new StartCursorError(BOTH_CURSORS);
  if (requested !== undefined) {
    return { kind: 'sequence', sequence: clampSequence(requested), requested };
  }
  if (atNs !== undefined) return { kind: 'date', atNs };
  if (endpoint === 'replay') throw new StartCursorError(REPLAY_NEEDS_CURSOR);
  return { kind: 'live' };
}

/** The refusal of an end point by `/watch` and `/notification`. */
export function endPointNotSupported(path: '/watch' | '/notification'): string {
  return `to_id and to_date are only supported for the replay endpoint, not ${path}`;
}

export function hasEndPoint(body: { readonly to_id?: string; readonly to_date?: string }): boolean {
  return body.to_id !== undefined || body.to_date !== undefined;
}

/**
 * The reference's `validate_end_at`, run once the start cursor is valid: both fields parsed
 * (`to_id` first), then refused together, then an end of the start's own kind compared with it.
 * An end of the other kind is never compared: it may well select nothing, which is not an error.
 */
export function resolveEndPoint(start: StartCursorRequest, toId: string | undefined, toDate: string | undefined): ReplayEndRequest {
  const requested = toId === undefined ? undefined : parseSequenceField('to_id', toId);
  const atNs = toDate === undefined ? undefined : parseDateField('to_date', toDate);
  if (requested !== undefined && atNs !== undefined) throw new StartCursorError(BOTH_ENDS);
  if (requested !== undefined) {
    if (start.kind === 'sequence' && requested < start.requested) {
      throw new StartCursorError(`to_id (${requested}) must not be lower than from_id (${start.requested})`);
    }
    return { kind: 'sequence', sequence: clampSequence(requested), requested };
  }
  if (atNs !== undefined) {
    if (start.kind === 'date' && atNs < start.atNs) {
      throw new StartCursorError(
        `to_date (${formatRfc3339Utc(atNs)}) must not be earlier than from_date (${formatRfc3339Utc(start.atNs)})`,
      );
    }
    return { kind: 'date', atNs };
  }
  return LATEST;
}

const U64_MAX = 0xffff_ffff_ffff_ffffn;
const ASCII_DIGITS = /^[0-9]+$/;

/**
 * `from_id` as the reference reads it with Rust's `u64::from_str`: one optional `+`,
 * then ASCII digits, nothing around them. Only the emptiness check trims.
 */
export function parseFromId(value: string): bigint {
  return parseSequenceField('from_id', value);
}

/** `from_id` or `to_id`: `to_id` is read exactly like `from_id` (D25). */
function parseSequenceField(field: SequenceField, value: string): bigint {
  if (trimRust(value).length === 0) throw new StartCursorError(emptySequence(field));
  const digits = value.startsWith('+') ? value.slice(1) : value;
  if (!ASCII_DIGITS.test(digits)) throw new StartCursorError(invalidSequence(field, value));
  const sequence = BigInt(digits);
  if (sequence > U64_MAX) throw new StartCursorError(invalidSequence(field, value));
  return sequence;
}

/**
 * `from_date` in nanoseconds since the Unix epoch. The message quotes the value as
 * sent; only the negative-timestamp reason quotes it trimmed, as the reference does.
 */
export function parseFromDate(value: string): bigint {
  return parseDateField('from_date', value);
}

/** `from_date` or `to_date`: `to_date` is read exactly like `from_date` (D25). */
function parseDateField(field: DateField, value: string): bigint {
  const trimmed = trimRust(value);
  if (trimmed.length === 0) throw new StartCursorError(emptyDate(field));
  const reading = readInstant(trimmed);
  if ('reason' in reading) throw new StartCursorError(invalidDate(field, value, reading.reason));
  return reading.atNs;
}

/** The sequence a cursor reads from: a u64 clamped to `Number.MAX_SAFE_INTEGER`, beyond every stored one. */
function clampSequence(requested: bigint): number {
  return requested > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(requested);
}
