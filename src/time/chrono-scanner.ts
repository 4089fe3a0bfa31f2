import { isRustWhitespace, trimRustStart } from '../text/rust-whitespace.js';

/**
 * The largest year magnitude any reading accepts (chrono's `NaiveDate` reaches 262143). Digits are
 * read no further past ten times it: nothing can succeed there, and precision would be lost.
 */
const DIGITS_LIMIT = 262_143 * 10;

/**
 * A cursor over date and time text that consumes format items the way chrono's `format::parse`
 * does: greedily and without backtracking, so `2025-01-15:00:00` fails on the hour rather than
 * being re-split as day 1, hour 5. Every reading of a date or an instant the reference accepts is
 * built from these items (the date identifier handler, `from_date` and `to_date`).
 */
export class ChronoScanner {
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

  /** `%m`, `%d`, `%j`, `%H`, `%M`, `%S`: whitespace skipped, then 1 to `width` digits, greedily. */
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
      if (value > DIGITS_LIMIT) return undefined;
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
export function fractionToNanos(digits: string): number {
  return Number(digits.slice(0, 9).padEnd(9, '0'));
}
