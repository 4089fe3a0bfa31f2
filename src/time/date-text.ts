import { daysInMonth, formatYear, isLeapYear, pad2, type CalendarDate } from './calendar.js';
import { ChronoScanner } from './chrono-scanner.js';

/**
 * Dates as the reference's date identifier handler reads and writes them, with chrono's leniency
 * on its three formats, so that every spelling the reference accepts is accepted here and
 * nothing more.
 */

// chrono's NaiveDate spans these years; anything outside does not resolve to a date.
const MIN_YEAR = -262_144;
const MAX_YEAR = 262_143;

/** The forms the reference tries, in its order: `%Y-%m-%d`, `%Y%m%d`, `%Y-%j`. */
export function parseLenientDate(text: string): CalendarDate | undefined {
  return parseYearMonthDay(text, '-') ?? parseYearMonthDay(text, '') ?? parseYearOrdinal(text);
}

/** `%Y-%m-%d` with the separator `-`, `%Y%m%d` with none. */
export function formatCalendarDate(date: CalendarDate, separator: '-' | ''): string {
  return [formatYear(date.year), pad2(date.month), pad2(date.day)].join(separator);
}

function parseYearMonthDay(text: string, separator: string): CalendarDate | undefined {
  const scanner = new ChronoScanner(text);
  const year = scanner.year();
  if (year === undefined || !scanner.literal(separator)) return undefined;
  const month = scanner.number(2);
  if (month === undefined || !scanner.literal(separator)) return undefined;
  const day = scanner.number(2);
  if (day === undefined || !scanner.atEnd) return undefined;
  return existingDate(year, month, day);
}

function parseYearOrdinal(text: string): CalendarDate | undefined {
  const scanner = new ChronoScanner(text);
  const year = scanner.year();
  if (year === undefined || !scanner.literal('-')) return undefined;
  const ordinal = scanner.number(3);
  if (ordinal === undefined || !scanner.atEnd || !inYearRange(year)) return undefined;
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
