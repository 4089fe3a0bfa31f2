import { daysFromCivil, daysInMonth } from './calendar.js';
import { ChronoScanner, fractionToNanos } from './chrono-scanner.js';
import { echo } from '../text/echo.js';

/**
 * Instants as the reference reads `from_date` and `to_date`: RFC 3339, chrono's other formats
 * with its leniency, or Unix seconds or milliseconds; nanoseconds since the Unix epoch out. A
 * refusal carries the reason the reference's message quotes.
 */

/** An instant read, or why the text is none. */
export type InstantReading = { readonly atNs: bigint } | { readonly reason: string };

const UNRECOGNISED_DATE = 'expected ISO-8601 datetime (RFC3339/space-separated with optional timezone) or unix epoch seconds/milliseconds';

const I64_MAX = 0x7fff_ffff_ffff_ffffn;
const ASCII_DIGITS = /^[0-9]+$/;

/** The reference's rules in their order, on text already trimmed; the first form that applies decides. */
export function readInstant(trimmed: string): InstantReading {
  if (trimmed.startsWith('-') && ASCII_DIGITS.test(trimmed.slice(1))) {
    return { reason: `negative unix timestamps are not supported: '${echo(trimmed)}'` };
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
function readUnixTimestamp(digits: string): InstantReading {
  const value = BigInt(digits);
  if (value > I64_MAX) {
    return { reason: `failed to parse unix timestamp '${echo(digits)}': number too large to fit in target type` };
  }
  const significantDigits = Math.max(digits.replace(/^0+/, '').length, 1);
  const inSeconds = significantDigits <= 11;
  const atNs = inSeconds ? value * NS_PER_SECOND : value * NS_PER_MILLISECOND;
  if (!isWithinChronoRange(atNs)) {
    return { reason: `invalid unix ${inSeconds ? 'seconds' : 'milliseconds'} timestamp '${echo(digits)}'` };
  }
  return { atNs };
}

/**
 * chrono's `DateTime::parse_from_rfc3339`: fixed-width fields, separator `T`, `t` or one space, a
 * fraction of at least one digit (digits after the ninth ignored), offset `Z`, `z` or `±hh:mm`
 * with U+2212 MINUS SIGN accepted as `-`, and at most 23:59 either way.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+\u2212-])(\d{2}):([0-5]\d))$/;

/** An RFC 3339 timestamp as nanoseconds since the Unix epoch; undefined when it is none. */
export function readRfc3339(text: string): bigint | undefined {
  const match = RFC3339.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes] = match;
  const offsetSeconds = sign === undefined ? 0 : (sign === '+' ? 1 : -1) * (Number(offsetHours) * 3600 + Number(offsetMinutes) * 60);
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
  const localNs = BigInt(daysFromCivil(year, month, day)) * NS_PER_DAY + BigInt(secondOfDay) * NS_PER_SECOND + BigInt(nanosecond);
  const atNs = localNs - BigInt(offsetSeconds) * NS_PER_SECOND;
  return isWithinChronoRange(atNs) ? atNs : undefined;
}
