import { describe, expect, it } from 'vitest';
import {
  StartCursorError,
  endPointNotSupported,
  hasEndPoint,
  parseFromDate,
  resolveEndPoint,
  resolveStartCursor,
} from '../../../src/http/routes/request-range.js';
import { LATEST, type StartCursorRequest } from '../../../src/streaming/stream-range.js';
import { formatRfc3339Utc } from '../../../src/time/time-format.js';
import { BOTH_ENDS, TO_DATE_EMPTY, TO_ID_EMPTY, invalidToDate, invalidToId } from '../../support/replay-end-messages.js';
import { thrownError } from '../../support/thrown-error.js';

const messageOf = (action: () => unknown): string => thrownError(action, StartCursorError).message;
const fromId = (value: string): StartCursorRequest => resolveStartCursor('replay', value, undefined);
const fromDate = (value: string): StartCursorRequest => resolveStartCursor('replay', undefined, value);

describe('resolveEndPoint: accepted ends', () => {
  it('is latest without an end point', () => {
    expect(resolveEndPoint(fromId('1'), undefined, undefined)).toEqual(LATEST);
  });

  it('reads to_id exactly like from_id: inclusive, a leading + allowed, u64 clamped', () => {
    expect(resolveEndPoint(fromId('5'), '5', undefined)).toEqual({ kind: 'sequence', sequence: 5, requested: 5n });
    expect(resolveEndPoint(fromId('5'), '+250', undefined)).toEqual({ kind: 'sequence', sequence: 250, requested: 250n });
    expect(resolveEndPoint(fromId('5'), '18446744073709551615', undefined)).toEqual({
      kind: 'sequence',
      sequence: Number.MAX_SAFE_INTEGER,
      requested: 18446744073709551615n,
    });
  });

  it.each(['2025-06-09T13:15:00Z', '2025-06-09 13:15:00', '2025-06-09 13:15:00+00:00', '1749474900', '1749474900000'])(
    'reads to_date %j exactly like from_date',
    (text) => {
      expect(resolveEndPoint(fromId('1'), undefined, text)).toEqual({
        kind: 'date',
        atNs: parseFromDate('2025-06-09T13:15:00Z'),
      });
    },
  );

  it('accepts "10000000000" (the year 2286) and dates far outside the nanosecond range', () => {
    expect(resolveEndPoint(fromId('1'), undefined, '10000000000')).toEqual({ kind: 'date', atNs: 10_000_000_000n * 1_000_000_000n });
    expect(resolveEndPoint(fromId('1'), undefined, '1500-01-01T00:00:00Z')).toMatchObject({ kind: 'date' });
    expect(resolveEndPoint(fromId('1'), undefined, '2300-01-01T00:00:00Z')).toMatchObject({ kind: 'date' });
  });

  it('accepts an end equal to the start (both ends inclusive)', () => {
    expect(resolveEndPoint(fromDate('2026-01-01T00:00:00Z'), undefined, '2026-01-01T00:00:00Z')).toMatchObject({ kind: 'date' });
    expect(resolveEndPoint(fromId('0'), '0', undefined)).toMatchObject({ kind: 'sequence', sequence: 0 });
  });

  it('never compares an end of the other kind with the start', () => {
    expect(resolveEndPoint(fromId('5'), undefined, '2000-01-01T00:00:00Z')).toMatchObject({ kind: 'date' });
    expect(resolveEndPoint(fromDate('2030-01-01T00:00:00Z'), '0', undefined)).toMatchObject({ kind: 'sequence', sequence: 0 });
  });
});

describe('resolveEndPoint: refusals and their order', () => {
  it('refuses both ends', () => {
    expect(messageOf(() => resolveEndPoint(fromId('1'), '5', '2026-01-01T00:00:00Z'))).toBe(BOTH_ENDS);
  });

  it('refuses a sequence end below a sequence start, quoting both as integers', () => {
    expect(messageOf(() => resolveEndPoint(fromId('5'), '4', undefined))).toBe('to_id (4) must not be lower than from_id (5)');
    expect(messageOf(() => resolveEndPoint(fromId('+0100'), '+099', undefined))).toBe('to_id (99) must not be lower than from_id (100)');
  });

  it('refuses a date end before a date start, both in RFC 3339 with +00:00', () => {
    expect(messageOf(() => resolveEndPoint(fromDate('2026-01-02T00:00:00Z'), undefined, '2026-01-01T00:00:00Z'))).toBe(
      'to_date (2026-01-01T00:00:00+00:00) must not be earlier than from_date (2026-01-02T00:00:00+00:00)',
    );
    // Compared at full precision; the fraction is quoted as chrono prints it.
    expect(messageOf(() => resolveEndPoint(fromDate('2026-01-01T00:00:00.5+01:00'), undefined, '2025-12-31 23:00:00.25'))).toBe(
      'to_date (2025-12-31T23:00:00.250+00:00) must not be earlier than from_date (2025-12-31T23:00:00.500+00:00)',
    );
  });

  it.each(['', '   ', '\t\n'])('refuses an empty or blank to_id %j', (value) => {
    expect(messageOf(() => resolveEndPoint(fromId('1'), value, undefined))).toBe(TO_ID_EMPTY);
  });

  it.each(['soon', '-3', '1.5', ' 7', 'mars@5', '18446744073709551616'])('refuses to_id %j', (value) => {
    expect(messageOf(() => resolveEndPoint(fromId('1'), value, undefined))).toBe(invalidToId(value));
  });

  it.each(['', '  '])('refuses a blank to_date %j', (value) => {
    expect(messageOf(() => resolveEndPoint(fromId('1'), undefined, value))).toBe(TO_DATE_EMPTY);
  });

  it('refuses an unparsable to_date', () => {
    expect(messageOf(() => resolveEndPoint(fromId('1'), undefined, 'yesterday'))).toBe(invalidToDate('yesterday'));
  });

  it('parses both fields (to_id first) before refusing both, and refuses both before comparing', () => {
    expect(messageOf(() => resolveEndPoint(fromId('1'), 'soon', 'yesterday'))).toBe(invalidToId('soon'));
    expect(messageOf(() => resolveEndPoint(fromId('1'), '5', 'yesterday'))).toBe(invalidToDate('yesterday'));
    expect(messageOf(() => resolveEndPoint(fromId('9'), '5', '2026-01-01T00:00:00Z'))).toBe(BOTH_ENDS);
  });
});

describe('end point on other endpoints', () => {
  it('is present when either field is', () => {
    expect(hasEndPoint({})).toBe(false);
    expect(hasEndPoint({ to_id: '' })).toBe(true);
    expect(hasEndPoint({ to_date: 'x' })).toBe(true);
  });

  it('names the endpoint in the refusal', () => {
    expect(endPointNotSupported('/watch')).toBe('to_id and to_date are only supported for the replay endpoint, not /watch');
    expect(endPointNotSupported('/notification')).toBe('to_id and to_date are only supported for the replay endpoint, not /notification');
  });
});

describe('formatRfc3339Utc (chrono to_rfc3339)', () => {
  it.each([
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00+00:00'],
    ['2026-01-01T00:00:00.1Z', '2026-01-01T00:00:00.100+00:00'],
    ['2026-01-01T00:00:00.000120Z', '2026-01-01T00:00:00.000120+00:00'],
    ['2026-01-01T00:00:00.000000007Z', '2026-01-01T00:00:00.000000007+00:00'],
    ['1969-12-31T23:59:59.5Z', '1969-12-31T23:59:59.500+00:00'],
    ['+10000-01-01 00:00:00', '+10000-01-01T00:00:00+00:00'],
  ])('%s → %s', (input, expected) => {
    expect(formatRfc3339Utc(parseFromDate(input))).toBe(expected);
  });
});
