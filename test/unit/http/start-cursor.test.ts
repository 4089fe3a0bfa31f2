import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StartCursorError, parseFromDate, parseFromId, resolveStartCursor } from '../../../src/http/routes/request-range.js';
import { formatFromDateEcho } from '../../../src/time/time-format.js';
import { thrownError } from '../../support/thrown-error.js';

const FROM_ID_EMPTY = 'from_id cannot be empty. Provide a valid sequence number or omit the field';
const FROM_DATE_EMPTY = 'from_date cannot be empty. Provide a valid datetime/timestamp or omit the field';
const REPLAY_NEEDS_CURSOR =
  'Replay endpoint requires either from_id or from_date parameter. Use from_id for sequence-based replay or from_date for time-based replay.';
const BOTH_CURSORS =
  'Cannot specify both from_id and from_date. Please provide only one replay parameter. Use from_id for sequence-based replay or from_date for time-based replay.';
const UNRECOGNISED = 'expected ISO-8601 datetime (RFC3339/space-separated with optional timezone) or unix epoch seconds/milliseconds';

function invalidFromId(value: string): string {
  return `from_id must be a valid positive integer. Got: '${value}'. Valid examples: '1', '123', '9999'`;
}

function invalidFromDate(value: string, reason: string): string {
  return `from_date must be a valid datetime/timestamp. Got: '${value}'. Error: ${reason}. Valid examples: '2025-06-09T13:15:00Z', '2025-06-09 13:15:00+00:00', '2025-06-09 13:15:00', '1740509903', '1740509903710'`;
}

// Years 0000 to 9999, the span RFC 3339 can write.
const MIN_FOUR_DIGIT_NS = BigInt(Date.parse('0000-01-01T00:00:00Z')) * 1_000_000n;
const MAX_FOUR_DIGIT_NS = BigInt(Date.parse('9999-12-31T23:59:59.999Z')) * 1_000_000n + 999_999n;

const messageOf = (action: () => unknown): string => thrownError(action, StartCursorError).message;

/** Nanoseconds of an ISO instant that `Date` can read, plus sub-millisecond nanoseconds. */
function utcNs(iso: string, extraNs = 0n): bigint {
  return BigInt(Date.parse(iso)) * 1_000_000n + extraNs;
}

describe('parseFromId', () => {
  it.each([
    ['0', 0n],
    ['1', 1n],
    ['124', 124n],
    ['05', 5n],
    ['+7', 7n],
    ['+0005', 5n],
    ['18446744073709551615', 18446744073709551615n],
  ])('reads %s as %s', (input, expected) => {
    expect(parseFromId(input)).toBe(expected);
  });

  it.each(['', ' ', '\t\n', '\u3000', '\u0085'])('refuses the empty or whitespace-only %j as empty', (input) => {
    expect(messageOf(() => parseFromId(input))).toBe(FROM_ID_EMPTY);
  });

  it.each([
    '18446744073709551616',
    '99999999999999999999999',
    '-1',
    '-0',
    '1.5',
    '1e3',
    ' 5',
    '5 ',
    'mars@5',
    '+',
    '++5',
    '0x10',
    '\u0661',
    '\ufeff5',
  ])('refuses %j as not a positive integer, quoting it as sent', (input) => {
    expect(messageOf(() => parseFromId(input))).toBe(invalidFromId(input));
  });
});

describe('parseFromDate: unix timestamps', () => {
  it.each([
    ['1740509903', utcNs('2025-02-25T18:58:23Z')],
    ['+1740509903', utcNs('2025-02-25T18:58:23Z')],
    ['00000000001740509903', utcNs('2025-02-25T18:58:23Z')],
    ['10000000000', 10_000_000_000n * 1_000_000_000n],
    ['99999999999', 99_999_999_999n * 1_000_000_000n],
  ])('reads %s (at most 11 significant digits) as seconds', (input, expected) => {
    expect(parseFromDate(input)).toBe(expected);
  });

  it.each([
    ['1740509903710', utcNs('2025-02-25T18:58:23.710Z')],
    ['946684800000', utcNs('2000-01-01T00:00:00Z')],
    ['1000000000000', utcNs('2001-09-09T01:46:40Z')],
    ['+000946684800000', utcNs('2000-01-01T00:00:00Z')],
  ])('reads %s (12 or more significant digits) as milliseconds', (input, expected) => {
    expect(parseFromDate(input)).toBe(expected);
  });

  it('reads 946684800000 as 2000-01-01T00:00:00Z', () => {
    expect(formatFromDateEcho(parseFromDate('946684800000'))).toBe('2000-01-01T00:00:00Z');
  });

  it('reads 1000000000000 as 2001-09-09T01:46:40Z', () => {
    expect(formatFromDateEcho(parseFromDate('1000000000000'))).toBe('2001-09-09T01:46:40Z');
  });

  it.each(['0', '0000', '+0'])('reads the all-zero %s as the epoch', (input) => {
    expect(parseFromDate(input)).toBe(0n);
  });

  it('ignores surrounding whitespace, Unicode included', () => {
    expect(parseFromDate(' \u00a01740509903\n')).toBe(utcNs('2025-02-25T18:58:23Z'));
  });

  it('accepts the largest millisecond count the reference can represent', () => {
    expect(formatFromDateEcho(parseFromDate('8210266876799999'))).toBe('+262142-12-31T23:59:59Z');
  });

  it('refuses a millisecond count past the reference range with its out-of-range reason', () => {
    expect(messageOf(() => parseFromDate('+8210266876800000'))).toBe(
      invalidFromDate('+8210266876800000', "invalid unix milliseconds timestamp '8210266876800000'"),
    );
  });

  it('refuses the largest signed 64-bit value as an out-of-range millisecond count', () => {
    expect(messageOf(() => parseFromDate('9223372036854775807'))).toBe(
      invalidFromDate('9223372036854775807', "invalid unix milliseconds timestamp '9223372036854775807'"),
    );
  });

  it('refuses a number that does not fit a signed 64-bit integer', () => {
    expect(messageOf(() => parseFromDate('9223372036854775808'))).toBe(
      invalidFromDate(
        '9223372036854775808',
        "failed to parse unix timestamp '9223372036854775808': number too large to fit in target type",
      ),
    );
  });

  it('refuses a negative timestamp, quoting the trimmed value in the reason', () => {
    expect(messageOf(() => parseFromDate(' -1 '))).toBe(invalidFromDate(' -1 ', "negative unix timestamps are not supported: '-1'"));
  });

  it.each(['-', '+', '++1', '+-1', '1 2', '1_000', '١٢٣'])('refuses the not-quite-number %j as unrecognised', (input) => {
    expect(messageOf(() => parseFromDate(input))).toBe(invalidFromDate(input, UNRECOGNISED));
  });
});

describe('parseFromDate: RFC 3339', () => {
  it.each([
    ['2025-01-15T10:00:00Z', utcNs('2025-01-15T10:00:00Z')],
    ['2025-01-15T10:00:00+02:00', utcNs('2025-01-15T08:00:00Z')],
    ['2025-01-15T10:00:00.5+02:00', utcNs('2025-01-15T08:00:00.500Z')],
    ['2025-01-15 10:00:00Z', utcNs('2025-01-15T10:00:00Z')],
    ['2025-06-09T13:15:00.456Z', utcNs('2025-06-09T13:15:00.456Z')],
    ['2025-06-09T13:15:00+02:00', utcNs('2025-06-09T11:15:00Z')],
    ['2025-01-15T10:00:00-05:30', utcNs('2025-01-15T15:30:00Z')],
    ['2025-01-15T10:00:00-00:00', utcNs('2025-01-15T10:00:00Z')],
    ['2025-01-15T10:00:00+23:59', utcNs('2025-01-14T10:01:00Z')],
  ])('reads %s with its offset', (input, expected) => {
    expect(parseFromDate(input)).toBe(expected);
  });

  it.each([
    ['2025-01-15t10:00:00Z', utcNs('2025-01-15T10:00:00Z')],
    ['2025-01-15T10:00:00z', utcNs('2025-01-15T10:00:00Z')],
    ['2025-01-15t10:00:00.25z', utcNs('2025-01-15T10:00:00.250Z')],
  ])('accepts the lower-case separator and zone letter in %s', (input, expected) => {
    expect(parseFromDate(input)).toBe(expected);
  });

  it('keeps nanosecond precision', () => {
    expect(parseFromDate('2026-02-25T17:01:02.999999999+00:00')).toBe(utcNs('2026-02-25T17:01:02.999Z', 999_999n));
  });

  it('ignores fraction digits after the ninth', () => {
    expect(parseFromDate('2025-01-15T10:00:00.1234567899876Z')).toBe(utcNs('2025-01-15T10:00:00.123Z', 456_789n));
  });

  it('accepts U+2212 MINUS SIGN in the offset, as the reference date library does', () => {
    expect(parseFromDate('2025-01-15T10:00:00\u221202:00')).toBe(utcNs('2025-01-15T12:00:00Z'));
  });

  it('reads a four-digit year below 100 literally', () => {
    expect(formatFromDateEcho(parseFromDate('0025-01-15T00:00:00Z'))).toBe('0025-01-15T00:00:00Z');
  });

  it('accepts a date in the future', () => {
    expect(parseFromDate('2999-12-31T23:59:59Z')).toBe(utcNs('2999-12-31T23:59:59Z'));
  });

  it.each(['2024-02-29T00:00:00Z', '2000-02-29T00:00:00Z'])('accepts the leap day %s', (input) => {
    expect(parseFromDate(input)).toBe(utcNs(input));
  });
});

describe('parseFromDate: space-separated with an offset', () => {
  it.each([
    ['2025-01-15 10:00:00+00:00', utcNs('2025-01-15T10:00:00Z')],
    ['2025-01-15 10:00:00.123+01:00', utcNs('2025-01-15T09:00:00.123Z')],
    ['2025-06-09 13:15:00.5+01:00', utcNs('2025-06-09T12:15:00.500Z')],
    ['2025-06-09 13:15:00+00:00', utcNs('2025-06-09T13:15:00Z')],
  ])('reads %s with its offset', (input, expected) => {
    expect(parseFromDate(input)).toBe(expected);
  });

  it.each([
    ['2025-01-15 10:00:00+0100', utcNs('2025-01-15T09:00:00Z')],
    ['2025-01-15 10:00:00-0230', utcNs('2025-01-15T12:30:00Z')],
    ['2025-06-09 13:15:00.5+0100', utcNs('2025-06-09T12:15:00.500Z')],
  ])('accepts the offset %s without its colon', (input, expected) => {
    expect(parseFromDate(input)).toBe(expected);
  });

  it('accepts a fraction longer than nine digits', () => {
    expect(parseFromDate('2025-01-15 10:00:00.0000000019+00:00')).toBe(utcNs('2025-01-15T10:00:00Z', 1n));
  });
});

describe('parseFromDate: naive date-times as UTC', () => {
  it.each([
    ['2025-01-15T10:00:00', utcNs('2025-01-15T10:00:00Z')],
    ['2025-01-15 10:00:00', utcNs('2025-01-15T10:00:00Z')],
    ['2025-06-09 13:15:00', utcNs('2025-06-09T13:15:00Z')],
    ['2025-06-09 13:15:00.123', utcNs('2025-06-09T13:15:00.123Z')],
    ['2025-01-15T10:00:00.5', utcNs('2025-01-15T10:00:00.500Z')],
    ['2025-01-15T10:00:00.1234567891', utcNs('2025-01-15T10:00:00.123Z', 456_789n)],
  ])('reads %s as UTC', (input, expected) => {
    expect(parseFromDate(input)).toBe(expected);
  });
});

describe("parseFromDate: the reference date library's leniency outside RFC 3339", () => {
  it.each([
    ['2025-1-5 1:2:3', utcNs('2025-01-05T01:02:03Z')],
    ['2025- 01- 15T 10: 00: 00', utcNs('2025-01-15T10:00:00Z')],
    ['2025-01-15   10:00:00', utcNs('2025-01-15T10:00:00Z')],
    ['2025-01-1510:00:00', utcNs('2025-01-15T10:00:00Z')],
    ['2025-01-15 10:00:00 +01:00', utcNs('2025-01-15T09:00:00Z')],
    ['2025-01-15 10:00:00+01: :00', utcNs('2025-01-15T09:00:00Z')],
    ['+002025-01-15 10:00:00', utcNs('2025-01-15T10:00:00Z')],
  ])('accepts %j', (input, expected) => {
    expect(parseFromDate(input)).toBe(expected);
  });

  it('reads a signed year of more than four digits', () => {
    expect(formatFromDateEcho(parseFromDate('+10000-01-01 00:00:00'))).toBe('+10000-01-01T00:00:00Z');
  });

  it('reads a negative signed year', () => {
    expect(formatFromDateEcho(parseFromDate('-0001-12-31T23:59:59'))).toBe('-0001-12-31T23:59:59Z');
  });

  it('reads an unsigned year of fewer than four digits literally, not as a two-digit year', () => {
    expect(formatFromDateEcho(parseFromDate('25-01-15 10:00:00'))).toBe('0025-01-15T10:00:00Z');
  });

  it('does not re-split digits the way a backtracking match would', () => {
    expect(messageOf(() => parseFromDate('2025-01-15:00:00'))).toBe(invalidFromDate('2025-01-15:00:00', UNRECOGNISED));
  });

  it.each(['+262143-01-01 00:00:00', '-262144-12-31 23:59:59', '+262142-12-31 23:59:59-01:00'])(
    'refuses %j outside the reference date range',
    (input) => {
      expect(messageOf(() => parseFromDate(input))).toBe(invalidFromDate(input, UNRECOGNISED));
    },
  );

  it('accepts the last representable second', () => {
    expect(formatFromDateEcho(parseFromDate('+262142-12-31 23:59:59'))).toBe('+262142-12-31T23:59:59Z');
  });
});

describe('parseFromDate: refusals', () => {
  it.each(['', ' ', '\t\r\n', '\u2003'])('refuses the empty or whitespace-only %j as empty', (input) => {
    expect(messageOf(() => parseFromDate(input))).toBe(FROM_DATE_EMPTY);
  });

  it.each([
    '2025-06-09',
    'not-a-date',
    '2025-01-15T10:00',
    '2025-01-15T10:00:00+0100',
    '2025-01-15T10:00:00 Z',
    '2025-01-15T10:00:00.Z',
    '2025-01-15T10:00:00+01',
    '2025-01-15T10:00:00+01:60',
    '2025-01-15T10:00:00+24:00',
    '2025-01-15 10:00:00+24:00',
    '2025-01-15 10:00:00 UTC',
    '2025-01-15T10:00:00Z trailing',
    '2025/01/15 10:00:00',
    '2025-13-01T00:00:00Z',
    '2025-00-01T00:00:00Z',
    '2025-01-32T00:00:00Z',
    '2025-04-31T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29 00:00:00',
    '2025-01-15T24:00:00Z',
    '2025-01-15T10:60:00Z',
    '2025-01-15T10:00:60Z',
    '2025-01-15 23:59:60',
    '20250-01-15 10:00:00',
  ])('refuses %j as unrecognised', (input) => {
    expect(messageOf(() => parseFromDate(input))).toBe(invalidFromDate(input, UNRECOGNISED));
  });

  it('quotes the value as sent, surrounding whitespace included', () => {
    expect(messageOf(() => parseFromDate('  not-a-date\n'))).toBe(invalidFromDate('  not-a-date\n', UNRECOGNISED));
  });
});

describe('resolveStartCursor', () => {
  it('starts a watch without a cursor live', () => {
    expect(resolveStartCursor('watch', undefined, undefined)).toEqual({ kind: 'live' });
  });

  it('refuses a replay without a cursor', () => {
    expect(messageOf(() => resolveStartCursor('replay', undefined, undefined))).toBe(REPLAY_NEEDS_CURSOR);
  });

  it.each(['watch', 'replay'] as const)('starts a %s from a sequence', (endpoint) => {
    expect(resolveStartCursor(endpoint, '4', undefined)).toEqual({ kind: 'sequence', sequence: 4, requested: 4n });
  });

  it.each(['watch', 'replay'] as const)('starts a %s from a date', (endpoint) => {
    expect(resolveStartCursor(endpoint, undefined, '2025-01-15T10:00:00Z')).toEqual({
      kind: 'date',
      atNs: utcNs('2025-01-15T10:00:00Z'),
    });
  });

  it('keeps sequence 0 as a cursor rather than treating it as absent', () => {
    expect(resolveStartCursor('replay', '0', undefined)).toEqual({ kind: 'sequence', sequence: 0, requested: 0n });
  });

  it('clamps a sequence beyond the safe integers while keeping the requested value', () => {
    expect(resolveStartCursor('watch', '18446744073709551615', undefined)).toEqual({
      kind: 'sequence',
      sequence: Number.MAX_SAFE_INTEGER,
      requested: 18446744073709551615n,
    });
  });

  it.each(['watch', 'replay'] as const)('refuses both cursors on %s', (endpoint) => {
    expect(messageOf(() => resolveStartCursor(endpoint, '1', '1740509903'))).toBe(BOTH_CURSORS);
  });

  it('reports a malformed from_id before comparing the two fields', () => {
    expect(messageOf(() => resolveStartCursor('watch', 'mars@5', '1740509903'))).toBe(invalidFromId('mars@5'));
  });

  it('reports a malformed from_date before comparing the two fields', () => {
    expect(messageOf(() => resolveStartCursor('replay', '5', 'not-a-date'))).toBe(invalidFromDate('not-a-date', UNRECOGNISED));
  });

  it('reports from_id before from_date when both are malformed', () => {
    expect(messageOf(() => resolveStartCursor('watch', '', ''))).toBe(FROM_ID_EMPTY);
  });

  it('treats an empty from_date as present and malformed, not as absent', () => {
    expect(messageOf(() => resolveStartCursor('replay', undefined, ''))).toBe(FROM_DATE_EMPTY);
  });
});

describe('formatFromDateEcho', () => {
  it('truncates to whole seconds rather than rounding', () => {
    expect(formatFromDateEcho(parseFromDate('2026-02-25T17:01:02.999999999+00:00'))).toBe('2026-02-25T17:01:02Z');
  });

  it('keeps the second of an instant just before the epoch', () => {
    expect(formatFromDateEcho(-1n)).toBe('1969-12-31T23:59:59Z');
  });

  it('prints the epoch', () => {
    expect(formatFromDateEcho(0n)).toBe('1970-01-01T00:00:00Z');
  });

  it('prints year 0 with four digits', () => {
    expect(formatFromDateEcho(parseFromDate('0000-01-01T00:00:00Z'))).toBe('0000-01-01T00:00:00Z');
  });

  it('agrees with Date for every instant from year 0 to 9999', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: MIN_FOUR_DIGIT_NS, max: MAX_FOUR_DIGIT_NS }), (atNs) => {
        const ms = Number(atNs / 1_000_000n - (atNs % 1_000_000n < 0n ? 1n : 0n));
        expect(formatFromDateEcho(atNs)).toBe(`${new Date(ms).toISOString().slice(0, 19)}Z`);
      }),
    );
  });
});

/** RFC 3339 text of an instant at an offset, built with `Date` and independently of the parser. */
function rfc3339WithNanos(atNs: bigint, offsetMinutes: number): string {
  const nanos = ((atNs % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n;
  const wholeSecondMs = Number((atNs - nanos) / 1_000_000n);
  const local = new Date(wholeSecondMs + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const magnitude = Math.abs(offsetMinutes);
  const offset = `${sign}${String(Math.floor(magnitude / 60)).padStart(2, '0')}:${String(magnitude % 60).padStart(2, '0')}`;
  return `${local}.${nanos.toString().padStart(9, '0')}${offset}`;
}

describe('parseFromDate round trip', () => {
  it('reads back any instant written as RFC 3339 with nanoseconds in UTC', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: MIN_FOUR_DIGIT_NS, max: MAX_FOUR_DIGIT_NS }), (atNs) => {
        expect(parseFromDate(rfc3339WithNanos(atNs, 0).replace('+00:00', 'Z'))).toBe(atNs);
      }),
    );
  });

  it('reads back any instant written as RFC 3339 with nanoseconds at any offset', () => {
    const dayNs = 86_400_000_000_000n;
    fc.assert(
      fc.property(
        fc.bigInt({ min: MIN_FOUR_DIGIT_NS + dayNs, max: MAX_FOUR_DIGIT_NS - dayNs }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        (atNs, offsetMinutes) => {
          expect(parseFromDate(rfc3339WithNanos(atNs, offsetMinutes))).toBe(atNs);
        },
      ),
    );
  });
});
