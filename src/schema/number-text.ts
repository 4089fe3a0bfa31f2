/**
 * Numeric text as the reference reads and writes it: Rust's `FromStr` for `i64`, `u32` and `f64`
 * (with Rust's exact error texts, which clients see in `details`), Rust's `Display` for `f64`
 * (canonical FloatHandler output, docs/design/rules/schema-and-validation.md §5.6) and the JSON library's float text
 * used when a JSON number becomes an identifier string (docs/design/rules/schema-and-validation.md §4).
 */

/** A number text that Rust's parser would refuse; `message` is Rust's own error text. */
export class NumberParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NumberParseError';
  }
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const U32_MAX = 2n ** 32n - 1n;

const INVALID_DIGIT = 'invalid digit found in string';
const EMPTY_INTEGER = 'cannot parse integer from empty string';
const TOO_LARGE = 'number too large to fit in target type';
const TOO_SMALL = 'number too small to fit in target type';

/**
 * Rust's `i64::from_str`: an optional single `+` or `-`, then ASCII digits only. Digits are read
 * left to right and the first problem wins, so `99999999999999999999x` overflows before the `x`
 * is seen, as in Rust.
 */
export function parseRustI64(text: string): bigint {
  return parseRustInteger(text, I64_MIN, I64_MAX, true);
}

/** Rust's `u32::from_str`: like `parseRustI64` but a leading `-` is just an invalid digit. */
export function parseRustU32(text: string): number {
  return Number(parseRustInteger(text, 0n, U32_MAX, false));
}

function parseRustInteger(text: string, min: bigint, max: bigint, signed: boolean): bigint {
  if (text.length === 0) throw new NumberParseError(EMPTY_INTEGER);
  const first = text[0];
  if ((first === '+' || first === '-') && text.length === 1) throw new NumberParseError(INVALID_DIGIT);
  let negative = false;
  let digits = text;
  if (first === '+') {
    digits = text.slice(1);
  } else if (first === '-' && signed) {
    negative = true;
    digits = text.slice(1);
  }
  let value = 0n;
  for (let i = 0; i < digits.length; i++) {
    const code = digits.charCodeAt(i);
    if (code < 0x30 || code > 0x39) throw new NumberParseError(INVALID_DIGIT);
    const digit = BigInt(code - 0x30);
    value = negative ? value * 10n - digit : value * 10n + digit;
    if (value > max) throw new NumberParseError(TOO_LARGE);
    if (value < min) throw new NumberParseError(TOO_SMALL);
  }
  return value;
}

/** Rust's decimal float grammar (`core::num::dec2flt`); no whitespace, hex digits or `_`. */
const RUST_DECIMAL_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const RUST_SPECIAL_FLOAT = /^([+-]?)(inf|infinity|nan)$/i;

/**
 * Rust's `f64::from_str`. Overflowing literals give ±Infinity and underflowing ones ±0 (both
 * engines round correctly, so the value is the same double Rust produces).
 */
export function parseRustF64(text: string): number {
  if (text.length === 0) throw new NumberParseError('cannot parse float from empty string');
  const special = RUST_SPECIAL_FLOAT.exec(text);
  if (special) {
    if (special[2]?.toLowerCase() === 'nan') return Number.NaN;
    return special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (!RUST_DECIMAL_FLOAT.test(text)) throw new NumberParseError('invalid float literal');
  // `Number` accepts this whole grammar (`5.`, `.5`, `+5`, `-0`) with the same rounding.
  return Number(text);
}

/** Shortest round-trip digits of a finite non-zero |x| and where the decimal point goes. */
interface DecimalDigits {
  /** Significant digits without leading or trailing zeros, e.g. `15` for 1.5e-7. */
  readonly digits: string;
  /** Number of digits before the decimal point (may be ≤ 0 or exceed `digits.length`). */
  readonly pointPosition: number;
}

function shortestDigits(magnitude: number): DecimalDigits {
  // `toExponential()` without an argument yields the shortest digits that round-trip (ECMA-262
  // Number::toString), which is also what Rust's Display and the JSON library choose.
  const [mantissa = '', exponent = '0'] = magnitude.toExponential().split('e');
  return { digits: mantissa.replace('.', ''), pointPosition: Number(exponent) + 1 };
}

function plainDecimal({ digits, pointPosition }: DecimalDigits): string {
  if (pointPosition <= 0) return `0.${'0'.repeat(-pointPosition)}${digits}`;
  if (pointPosition >= digits.length) return digits + '0'.repeat(pointPosition - digits.length);
  return `${digits.slice(0, pointPosition)}.${digits.slice(pointPosition)}`;
}

/**
 * Canonical FloatHandler text (docs/design/rules/schema-and-validation.md §5.6), i.e. Rust's `Display` for `f64`: shortest round-trip digits,
 * never exponent notation, no `.0` for integral values, `-0` for negative zero. Non-finite values
 * (`NaN`, `inf`, `-inf`) only ever appear inside error messages.
 */
export function canonicalFloatText(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const sign = x < 0 ? '-' : '';
  return sign + plainDecimal(shortestDigits(Math.abs(x)));
}

/**
 * The reference JSON library's text for a float (docs/design/rules/schema-and-validation.md §4): plain decimal with at least one fractional
 * digit when 1e-5 ≤ |x| < 1e16, otherwise scientific notation whose positive exponents carry an
 * explicit `+` (`1e+16`, `1.5e-7`). Only called with finite values (JSON has no others).
 */
export function referenceFloatText(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const decimal = shortestDigits(Math.abs(x));
  const { digits, pointPosition } = decimal;
  if (pointPosition > -5 && pointPosition <= 16) {
    const plain = plainDecimal(decimal);
    return sign + (pointPosition >= digits.length ? `${plain}.0` : plain);
  }
  const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  const exponent = pointPosition - 1;
  return `${sign}${mantissa}e${exponent > 0 ? '+' : ''}${exponent}`;
}
