import { IdentifierError } from '../identifier-error.js';
import type { DateRule } from '../identifier-rule.js';
import { trimRustStart } from '../rust-whitespace.js';
import type { ScalarFieldHandler } from './field-handler.js';

/**
 * DateHandler (schema-and-validation.md §5.2). Parsing reproduces the reference's date library
 * (chrono) on its three formats, leniency included (S9), so that every spelling the reference
 * accepts is accepted here and nothing more.
 */
export function createDateHandler(field: string, rule: DateRule): ScalarFieldHandler {
  const separator = rule.canonical_format === '%Y-%m-%d' ? '-' : '';
  return {
    kind: 'scalar',
    canonicalize(text: string): string {
      const date = parseLenientDate(text);
      if (date === undefined) {
        throw new IdentifierError(
          `Failed to parse date value for field '${field}'`,
          `Field '${field}' contains invalid date '${text}'. Expected: YYYY-MM-DD, YYYYMMDD, or YYYY-DDD`,
        );
      }
      return [formatYear(date.year), pad2(date.month), pad2(date.day)].join(separator);
    },
  };
}

export interface CalendarDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

/** The forms the reference tries, in its order: `%Y-%m-%d`, `%Y%m%d`, `%Y-%j`. */
export function parseLenientDate(text: string): CalendarDate | undefined {
  return parseYearMonthDay(text, '-') ?? parseYearMonthDay(text, '') ?? parseYearOrdinal(text);
}

// chrono's NaiveDate spans these years; anything outside does not resolve to a date.
const MIN_YEAR = -262_144;
const MAX_YEAR = 262_143;

/** A cursor over the text, consuming items the way chrono's format parser does. */
class Scanner {
  private rest: string;

  constructor(text: string) {
    this.rest = text;
  }

  get done(): boolean {
    return this.rest.length === 0;
  }

  /** A literal must match exactly; no whitespace is skipped before it. */
  literal(expected: string): boolean {
    if (!this.rest.startsWith(expected)) return false;
    this.rest = this.rest.slice(expected.length);
    return true;
  }

  /**
   * `%Y`: whitespace skipped, then either an explicit sign followed by any number of digits, or
   * 1–4 digits.
   */
  year(): number | undefined {
    this.rest = trimRustStart(this.rest);
    const sign = this.rest[0];
    if (sign === '-' || sign === '+') {
      this.rest = this.rest.slice(1);
      const magnitude = this.digits(Number.MAX_SAFE_INTEGER);
      return magnitude === undefined ? undefined : sign === '-' ? -magnitude : magnitude;
    }
    return this.digits(4);
  }

  /** `%m`, `%d`, `%j`: whitespace skipped, then 1 to `width` digits, greedily. */
  unsigned(width: number): number | undefined {
    this.rest = trimRustStart(this.rest);
    return this.digits(width);
  }

  private digits(width: number): number | undefined {
    let count = 0;
    let value = 0;
    while (count < width && count < this.rest.length) {
      const code = this.rest.charCodeAt(count);
      if (code < 0x30 || code > 0x39) break;
      value = value * 10 + (code - 0x30);
      // Beyond chrono's year range nothing can succeed; stop before precision is lost.
      if (value > MAX_YEAR * 10) return undefined;
      count++;
    }
    if (count === 0) return undefined;
    this.rest = this.rest.slice(count);
    return value;
  }
}

function parseYearMonthDay(text: string, separator: string): CalendarDate | undefined {
  const scanner = new Scanner(text);
  const year = scanner.year();
  if (year === undefined || !scanner.literal(separator)) return undefined;
  const month = scanner.unsigned(2);
  if (month === undefined || !scanner.literal(separator)) return undefined;
  const day = scanner.unsigned(2);
  if (day === undefined || !scanner.done) return undefined;
  return existingDate(year, month, day);
}

function parseYearOrdinal(text: string): CalendarDate | undefined {
  const scanner = new Scanner(text);
  const year = scanner.year();
  if (year === undefined || !scanner.literal('-')) return undefined;
  const ordinal = scanner.unsigned(3);
  if (ordinal === undefined || !scanner.done || !inYearRange(year)) return undefined;
  if (ordinal < 1 || ordinal > (isLeapYear(year) ? 366 : 365)) return undefined;
  let month = 1;
  let day = ordinal;
  while (day > daysInMonth(year, month)) {
    day -= daysInMonth(year, month);
    month++;
  }
  return { year, month, day };
}

function existingDate(year: number, month: number, day: number): CalendarDate | undefined {
  if (!inYearRange(year) || month < 1 || month > 12) return undefined;
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  return { year, month, day };
}

function inYearRange(year: number): boolean {
  return year >= MIN_YEAR && year <= MAX_YEAR;
}

/** Proleptic Gregorian rule; `%` keeps the sign, and `-0 === 0`, so negative years work too. */
function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month === 2 && isLeapYear(year)) return 29;
  return DAYS_IN_MONTH[month - 1] ?? 0;
}

/** chrono's `%Y`: four digits for 0–9999, otherwise an explicit sign and at least four digits. */
function formatYear(year: number): string {
  if (year >= 0 && year <= 9999) return String(year).padStart(4, '0');
  return (year < 0 ? '-' : '+') + String(Math.abs(year)).padStart(4, '0');
}

function pad2(value: number): string {
  return String(value).padStart(2, '0');
}
