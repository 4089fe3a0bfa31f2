import { isRustWhitespace, trimRust, trimRustStart } from '../schema/rust-whitespace.js';

// Writing instants back lives in date-echo.ts; re-exported so a caller needs one import.
export { formatFromDateEcho, formatRfc3339Utc } from './date-echo.js';

/**
 * Where a watch or replay stream starts (api.md §3.2–§3.4, streaming.md §2.1).
 *
 * `requested` is the `from_id` exactly as parsed (a u64, echoed as `from_sequence`); `sequence`
 * is the same value clamped to `Number.MAX_SAFE_INTEGER`, which is beyond every stored sequence
 * anyway. `atNs` is the `from_date` instant in nanoseconds since the Unix epoch (UTC).
 */
export type StartCursorRequest =
  | { kind: 'live' }
  | { kind: 'sequence'; sequence: number; requested: bigint }
  | { kind: 'date'; atNs: bigint };

/** A malformed or conflicting start cursor; `message` is the spec's exact text. */
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
const UNRECOGNISED_DATE =
  'expected ISO-8601 datetime (RFC3339/space-separated with optional timezone) or unix epoch seconds/milliseconds';

/** The request fields read as a sequence (`from_id`, `to_id`) or as an instant (`from_date`, `to_date`). */
export type SequenceField = 'from_id' | 'to_id';
export type DateField = 'from_date' | 'to_date';

function emptySequence(field: SequenceField): string {
  return `${field} cannot be empty. Provide a valid sequence number or omit the field`;
}

function emptyDate(field: DateField): string {
  return `${field} cannot be empty. Provide a valid datetime/timestamp or omit the field`;
}

function invalidSequence(field: SequenceField, value: string): string {
  return `${field} must be a valid positive integer. Got: '${value}'. Valid examples: '1', '123', '9999'`;
}

function invalidDate(field: DateField, value: string, reason: string): string {
  return (
    `${field} must be a valid datetime/timestamp. Got: '${value}'. Error: ${reason}. ` +
    "Valid examples: '2025-06-09T13:15:00Z', '2025-06-09 13:15:00+00:00', '2025-06-09 13:15:00', '1740509903', '1740509903710'"
  );
}

/** The §3.4 table. Both fields are validated (`from_id` first) before they are compared. */
export function resolveStartCursor(
  endpoint: 'watch' | 'replay',
  fromId: string | undefined,
  fromDate: string | undefined,
): StartCursorRequest {
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

const U64_MAX = 0xffff_ffff_ffff_ffffn;
const I64_MAX = 0x7fff_ffff_ffff_ffffn;
const ASCII_DIGITS = /^[0-9]+$/;

/**
 * `from_id` (api.md §3.2) as the reference reads it with Rust's `u64::from_str`: one optional `+`,
 * then ASCII digits, nothing around them. Only the emptiness check trims.
 */
export function parseFromId(value: string): bigint {
  return parseSequenceField('from_id', value);
}

/** `from_id` or `to_id` (reference-0.13.md §1: `to_id` is read exactly like `from_id`). */
export function parseSequenceField(field: SequenceField, value: string): bigint {
  if (trimRust(value).length === 0) throw new StartCursorError(emptySequence(field));
  const digits = value.startsWith('+') ? value.slice(1) : value;
  if (!ASCII_DIGITS.test(digits)) throw new StartCursorError(invalidSequence(field, value));
  const sequence = BigInt(digits);
  if (sequence > U64_MAX) throw new StartCursorError(invalidSequence(field, value));
  return sequence;
}

/**
 * `from_date` (api.md §3.3) in nanoseconds since the Unix epoch. The message quotes the value as
 * sent; only the negative-timestamp reason quotes it trimmed, as the reference does.
 */
export function parseFromDate(value: string): bigint {
  return parseDateField('from_date', value);
}

/** `from_date` or `to_date` (reference-0.13.md §1: `to_date` is read exactly like `from_date`). */
export function parseDateField(field: DateField, value: string): bigint {
  const trimmed = trimRust(value);
  if (trimmed.length === 0) throw new StartCursorError(emptyDate(field));
  const reading = readFromDate(trimmed);
  if ('reason' in reading) throw new StartCursorError(invalidDate(field, value, reading.reason));
  return reading.atNs;
}

/** The sequence a cursor reads from: a u64 clamped to `Number.MAX_SAFE_INTEGER`, beyond every stored one. */
export function clampSequence(requested: bigint): number {
  return requested > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(requested);
}

type DateReading = { readonly atNs: bigint } | { readonly reason: string };

/** The §3.3 rules in their order; the first form that applies decides. */
function readFromDate(trimmed: string): DateReading {
  if (trimmed.startsWith('-') && ASCII_DIGITS.test(trimmed.slice(1))) {
    return { reason: `negative unix timestamps are not supported: '${trimmed}'` };
  }
  const unsigned = trimmed.startsWith('+') ? trimmed.slice(1) : trimmed;
  if (ASCII_DIGITS.test(unsigned)) return readUnixTimestamp(unsigned);
  const atNs =
    readRfc3339(trimmed) ??
    readChronoFormat(trimmed, 'space', 'offset') ??
    readChronoFormat(trimmed, 'T', 'naive') ??
    readChronoFormat(trimmed, 'space', 'naive');
  return atNs === undefined ? { reason: UNRECOGNISED_DATE } : { atNs };
}

/**
 * Seconds up to 11 significant digits, milliseconds from 12: a digit-count rule rather than a
 * magnitude rule keeps far-future 11-digit seconds valid and early 12-digit milliseconds (year
 * 2000) read as milliseconds. The reasons are the reference's own texts.
 */
function readUnixTimestamp(digits: string): DateReading {
  const value = BigInt(digits);
  if (value > I64_MAX) {
    return { reason: `failed to parse unix timestamp '${digits}': number too large to fit in target type` };
  }
  const significantDigits = Math.max(digits.replace(/^0+/, '').length, 1);
  const inSeconds = significantDigits <= 11;
  const atNs = inSeconds ? value * NS_PER_SECOND : value * NS_PER_MILLISECOND;
  if (!isWithinChronoRange(atNs)) {
    return { reason: `invalid unix ${inSeconds ? 'seconds' : 'milliseconds'} timestamp '${digits}'` };
  }
  return { atNs };
}

/**
 * chrono's `DateTime::parse_from_rfc3339`: fixed-width fields, separator `T`, `t` or one space, a
 * fraction of at least one digit (digits after the ninth ignored), offset `Z`, `z` or `±hh:mm`
 * with U+2212 MINUS SIGN accepted as `-`, and at most 23:59 either way.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+\u2212-])(\d{2}):([0-5]\d))$/;

function readRfc3339(text: string): bigint | undefined {
  const match = RFC3339.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes] = match;
  const offsetSeconds =
    sign === undefined ? 0 : (sign === '+' ? 1 : -1) * (Number(offsetHours) * 3600 + Number(offsetMinutes) * 60);
  if (Math.abs(offsetSeconds) > MAX_RFC3339_OFFSET_SECONDS) return undefined;
  return toEpochNs(
    {
      year: Number(year),
      month: Number(month),
      day: Number(day),
      hour: Number(hour),
      minute: Number(minute),
      second: Number(second),
      nanosecond: fraction === undefined ? 0 : fractionToNanos(fraction),
    },
    offsetSeconds,
  );
}

const MAX_RFC3339_OFFSET_SECONDS = (23 * 60 + 59) * 60;
// chrono's FixedOffset: strictly less than one day either way.
const MAX_FIXED_OFFSET_SECONDS = 86_399;

/**
 * chrono's generic parser on the reference's other formats: `%Y-%m-%d %H:%M:%S%.f%:z` (which also
 * covers its `%Y-%m-%d %H:%M:%S%:z`), `%Y-%m-%dT%H:%M:%S%.f` and `%Y-%m-%d %H:%M:%S%.f` (covering
 * their fraction-less twins). Its leniency is reproduced, not just the documented shapes, so the
 * port accepts and refuses exactly what the reference does.
 */
function readChronoFormat(text: string, separator: 'T' | 'space', zone: 'offset' | 'naive'): bigint | undefined {
  const scanner = new ChronoScanner(text);
  const year = scanner.year();
  if (year === undefined || !scanner.literal('-')) return undefined;
  const month = scanner.number(2);
  if (month === undefined || !scanner.literal('-')) return undefined;
  const day = scanner.number(2);
  if (day === undefined) return undefined;
  if (separator === 'space') scanner.whitespace();
  else if (!scanner.literal('T')) return undefined;
  const hour = scanner.number(2);
  if (hour === undefined || !scanner.literal(':')) return undefined;
  const minute = scanner.number(2);
  if (minute === undefined || !scanner.literal(':')) return undefined;
  const second = scanner.number(2);
  const nanosecond = scanner.fraction();
  if (second === undefined || nanosecond === undefined) return undefined;
  const offsetSeconds = zone === 'offset' ? scanner.offset() : 0;
  if (offsetSeconds === undefined || Math.abs(offsetSeconds) > MAX_FIXED_OFFSET_SECONDS) return undefined;
  if (!scanner.atEnd) return undefined;
  return toEpochNs({ year, month, day, hour, minute, second, nanosecond }, offsetSeconds);
}

/**
 * A cursor over the text that consumes format items the way chrono's `format::parse` does:
 * greedily and without backtracking, so `2025-01-15:00:00` fails on the hour rather than being
 * re-split as day 1, hour 5.
 */
class ChronoScanner {
  private rest: string;

  constructor(text: string) {
    this.rest = text;
  }

  get atEnd(): boolean {
    return this.rest.length === 0;
  }

  /** A literal matches exactly; nothing is skipped before it. */
  literal(expected: string): boolean {
    if (!this.rest.startsWith(expected)) return false;
    this.rest = this.rest.slice(expected.length);
    return true;
  }

  /** A space in the format consumes any run of whitespace, including none. */
  whitespace(): void {
    this.rest = trimRustStart(this.rest);
  }

  /** `%Y`: whitespace skipped, then an explicit sign with any number of digits, or 1–4 digits. */
  year(): number | undefined {
    this.whitespace();
    const sign = this.rest.charAt(0);
    if (sign !== '+' && sign !== '-') return this.digits(4);
    this.rest = this.rest.slice(1);
    const magnitude = this.digits(Number.POSITIVE_INFINITY);
    return magnitude === undefined ? undefined : sign === '-' ? -magnitude : magnitude;
  }

  /** `%m`, `%d`, `%H`, `%M`, `%S`: whitespace skipped, then 1 to `width` digits, greedily. */
  number(width: number): number | undefined {
    this.whitespace();
    return this.digits(width);
  }

  /** `%.f`: nothing unless a `.` follows; then at least one digit, those after the ninth ignored. */
  fraction(): number | undefined {
    if (!this.rest.startsWith('.')) return 0;
    const digits = /^[0-9]+/.exec(this.rest.slice(1))?.[0];
    if (digits === undefined) return undefined;
    this.rest = this.rest.slice(1 + digits.length);
    return fractionToNanos(digits);
  }

  /**
   * `%:z`: whitespace skipped, a sign (`+`, `-` or U+2212), two hour digits, any run of colons and
   * whitespace, two minute digits. The result is in seconds east of UTC.
   */
  offset(): number | undefined {
    this.whitespace();
    const sign = this.rest.charAt(0);
    if (sign !== '+' && sign !== '-' && sign !== '\u2212') return undefined;
    const hours = /^[0-9]{2}/.exec(this.rest.slice(1))?.[0];
    if (hours === undefined) return undefined;
    let separatorEnd = 3;
    while (separatorEnd < this.rest.length && isColonOrWhitespace(this.rest.charAt(separatorEnd))) separatorEnd++;
    const minutes = /^[0-5][0-9]/.exec(this.rest.slice(separatorEnd))?.[0];
    if (minutes === undefined) return undefined;
    this.rest = this.rest.slice(separatorEnd + 2);
    const seconds = Number(hours) * 3600 + Number(minutes) * 60;
    return sign === '+' ? seconds : -seconds;
  }

  private digits(width: number): number | undefined {
    let count = 0;
    let value = 0;
    while (count < width && count < this.rest.length) {
      const code = this.rest.charCodeAt(count);
      if (code < 0x30 || code > 0x39) break;
      value = value * 10 + (code - 0x30);
      // Past chrono's year range nothing can succeed; stop before precision is lost.
      if (value > MAX_YEAR * 10) return undefined;
      count++;
    }
    if (count === 0) return undefined;
    this.rest = this.rest.slice(count);
    return value;
  }
}

/** chrono's `colon_or_space`: what may stand between the hours and minutes of a `%:z` offset. */
function isColonOrWhitespace(char: string): boolean {
  return char === ':' || isRustWhitespace(char);
}

/** The first nine digits of a fraction of a second, as nanoseconds. */
function fractionToNanos(digits: string): number {
  return Number(digits.slice(0, 9).padEnd(9, '0'));
}

interface CivilDateTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly nanosecond: number;
}

const NS_PER_SECOND = 1_000_000_000n;
const NS_PER_MILLISECOND = 1_000_000n;
const NS_PER_DAY = 86_400n * NS_PER_SECOND;

// chrono (0.4.32 and later) represents the years -262143 to 262142; both the local reading and
// its UTC instant must fall inside.
const MIN_YEAR = -262_143;
const MAX_YEAR = 262_142;
const MIN_INSTANT_NS = BigInt(daysFromCivil(MIN_YEAR, 1, 1)) * NS_PER_DAY;
const MAX_INSTANT_NS = BigInt(daysFromCivil(MAX_YEAR + 1, 1, 1)) * NS_PER_DAY - 1n;

function isWithinChronoRange(atNs: bigint): boolean {
  return atNs >= MIN_INSTANT_NS && atNs <= MAX_INSTANT_NS;
}

/**
 * The UTC instant of a wall-clock reading at `offsetSeconds` east of UTC, or `undefined` when a
 * field is out of range. chrono would read second 60 as a leap second; this port refuses it: a
 * leap second has no nanosecond count of its own, so it could be neither compared with stored
 * timestamps nor echoed the way the reference echoes it (`…:60Z`).
 */
function toEpochNs(civil: CivilDateTime, offsetSeconds: number): bigint | undefined {
  const { year, month, day, hour, minute, second, nanosecond } = civil;
  if (year < MIN_YEAR || year > MAX_YEAR || month < 1 || month > 12) return undefined;
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const secondOfDay = hour * 3600 + minute * 60 + second;
  const localNs =
    BigInt(daysFromCivil(year, month, day)) * NS_PER_DAY + BigInt(secondOfDay) * NS_PER_SECOND + BigInt(nanosecond);
  const atNs = localNs - BigInt(offsetSeconds) * NS_PER_SECOND;
  return isWithinChronoRange(atNs) ? atNs : undefined;
}

/** Proleptic Gregorian rule; `%` keeps the sign and `-0 === 0`, so negative years work too. */
function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month === 2 && isLeapYear(year)) return 29;
  return DAYS_IN_MONTH[month - 1] ?? 0;
}

/** Days since 1970-01-01 (Howard Hinnant's `days_from_civil`, eras of 400 years). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
