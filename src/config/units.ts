/**
 * Duration and size literals of the configuration (docs/design/rules/operations.md §1.5). Both grammars are
 * "leading ASCII digits, then a unit from a closed table"; everything else is an error whose
 * message is the reason, ready to be prefixed with the field path by the caller.
 *
 * Results are JS numbers. The grammar allows values up to 2^64 − 1 seconds and 2^63 − 1 bytes,
 * which a number cannot hold exactly, so results beyond Number.MAX_SAFE_INTEGER are rejected
 * too (nobody keeps data for 285 million years).
 */

export class LiteralError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LiteralError';
  }
}

/** Duration units, case-insensitive, in seconds. */
const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** Size units, case-sensitive, in bytes. */
const SIZE_UNITS: Readonly<Record<string, number>> = {
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

const U64_MAX = 2n ** 64n - 1n;
const I64_MAX = 2n ** 63n - 1n;
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

interface Split {
  readonly digits: string;
  readonly unit: string;
}

function split(kind: string, input: string, unitList: string): Split {
  const text = input.trim();
  if (text === '') throw new LiteralError(`${kind} is empty`);
  const match = /^[0-9]*/.exec(text);
  const digits = match?.[0] ?? '';
  if (digits === '') {
    throw new LiteralError(`${kind} '${input}' must be an integer followed by a unit (${unitList})`);
  }
  const unit = text.slice(digits.length);
  if (unit === '') throw new LiteralError(`${kind} '${input}' has no unit (expected ${unitList})`);
  return { digits, unit };
}

/** Parses a duration literal (`50s`, `10m`, `1h`, `2d`, `1w`; unit case-insensitive) into seconds. `0s` parses. */
export function parseDuration(input: string): number {
  const unitList = 's, m, h, d or w';
  const { digits, unit } = split('duration', input, unitList);
  const factor = DURATION_UNITS[unit.toLowerCase()];
  if (factor === undefined) {
    throw new LiteralError(`duration '${input}' has an unknown unit '${unit}' (expected ${unitList})`);
  }
  const value = BigInt(digits);
  const seconds = value * BigInt(factor);
  if (value > U64_MAX || seconds > U64_MAX) {
    throw new LiteralError(`duration '${input}' does not fit in unsigned 64-bit seconds`);
  }
  if (seconds > SAFE_MAX) {
    throw new LiteralError(`duration '${input}' is too large (at most ${Number.MAX_SAFE_INTEGER} seconds are supported)`);
  }
  return Number(seconds);
}

/** Parses a size literal (`100K`, `100Ki`, `2M`, `2Mi`, `1G`, …; unit case-sensitive) into bytes. The value must be > 0. */
export function parseSize(input: string): number {
  const unitList = 'K, M, G, T, Ki, Mi, Gi or Ti';
  const { digits, unit } = split('size', input, unitList);
  const factor = SIZE_UNITS[unit];
  if (factor === undefined) {
    throw new LiteralError(`size '${input}' has an unknown unit '${unit}' (expected ${unitList}, case-sensitive)`);
  }
  const value = BigInt(digits);
  if (value === 0n) throw new LiteralError(`size '${input}' must be greater than 0`);
  const bytes = value * BigInt(factor);
  if (bytes > I64_MAX) throw new LiteralError(`size '${input}' does not fit in signed 64-bit bytes`);
  if (bytes > SAFE_MAX) {
    throw new LiteralError(`size '${input}' is too large (at most ${Number.MAX_SAFE_INTEGER} bytes are supported)`);
  }
  return Number(bytes);
}
