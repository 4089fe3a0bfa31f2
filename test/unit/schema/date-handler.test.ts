import { describe, expect, it } from 'vitest';
import { createDateHandler } from '../../../src/schema/handlers/date-handler.js';
import type { DateRule } from '../../../src/schema/identifier-rule.js';
import { identifierErrorOf } from './identifier-error-assertions.js';

function dateRule(format: '%Y%m%d' | '%Y-%m-%d'): DateRule {
  return { type: 'DateHandler', required: true, canonical_format: format };
}

const compact = createDateHandler('date', dateRule('%Y%m%d'));
const dashed = createDateHandler('date', dateRule('%Y-%m-%d'));
const defaulted = createDateHandler('date', { type: 'DateHandler', required: true });

function expectRejected(value: string): void {
  const error = identifierErrorOf(() => compact.canonicalize(value));
  expect({ message: error.message, details: error.details }).toEqual({
    message: "Failed to parse date value for field 'date'",
    details: `Field 'date' contains invalid date '${value}'. Expected: YYYY-MM-DD, YYYYMMDD, or YYYY-DDD`,
  });
}

describe('DateHandler', () => {
  describe('the accepted rows of the docs/design/rules/schema-and-validation.md §5.2 table', () => {
    it.each([
      ['2025-12-25', '20251225'],
      ['20251225', '20251225'],
      ['2025-359', '20251225'],
      ['2024-02-29', '20240229'],
      ['2024-366', '20241231'],
    ])('reads %s as %s', (input, output) => {
      expect(compact.canonicalize(input)).toBe(output);
    });
  });

  describe('the rejected rows of the docs/design/rules/schema-and-validation.md §5.2 table', () => {
    it.each([
      '2023-02-29',
      '2025-366',
      '2025-000',
      '2025-13-01',
      '2025/12/25',
      '2025.12.25',
      '2025',
      '2025-12-25T00:00:00',
      '25-12-2025',
      'not-a-date',
      '',
    ])('rejects %j with the two-level date message', (input) => {
      expectRejected(input);
    });
  });

  it('writes the %Y-%m-%d canonical format', () => {
    expect(dashed.canonicalize('20251225')).toBe('2025-12-25');
  });

  it('defaults to the %Y%m%d canonical format', () => {
    expect(defaulted.canonicalize('2025-12-25')).toBe('20251225');
  });

  describe('the reference leniency (S9)', () => {
    it('accepts one-digit month and day in the dashed form', () => {
      expect(compact.canonicalize('2025-7-6')).toBe('20250706');
    });

    it('reads a short ordinal as the day of the year', () => {
      expect(compact.canonicalize('2025-1')).toBe('20250101');
      expect(compact.canonicalize('2025-32')).toBe('20250201');
    });

    it('reads seven compact digits as YYYYMMD', () => {
      expect(compact.canonicalize('2025123')).toBe('20251203');
    });

    it('skips whitespace before the year', () => {
      expect(compact.canonicalize(' 2025-12-25')).toBe('20251225');
    });

    it('skips whitespace before the month and the day', () => {
      expect(compact.canonicalize('2025- 12-25')).toBe('20251225');
      expect(compact.canonicalize('2025-12- 25')).toBe('20251225');
    });

    it('skips whitespace before the ordinal', () => {
      expect(compact.canonicalize('2025- 359')).toBe('20251225');
    });

    it('does not skip whitespace before a literal dash', () => {
      expectRejected('2025 -12-25');
    });

    it('never accepts trailing characters, whitespace included', () => {
      expectRejected('2025-12-25 ');
      expectRejected('20251225x');
    });

    it('reads a one-to-four digit year and pads it to four digits', () => {
      expect(compact.canonicalize('25-12-25')).toBe('00251225');
      expect(compact.canonicalize('1-1-1')).toBe('00010101');
    });

    it('reads an explicitly signed year with any number of digits', () => {
      expect(compact.canonicalize('+2025-12-25')).toBe('20251225');
      expect(compact.canonicalize('+002025-12-25')).toBe('20251225');
    });

    it('writes years beyond 9999 and before year 0 with a sign, as the reference does', () => {
      expect(compact.canonicalize('+12025-12-25')).toBe('+120251225');
      expect(compact.canonicalize('-1-01-01')).toBe('-00010101');
      expect(dashed.canonicalize('-0044-03-15')).toBe('-0044-03-15');
    });

    it('accepts year zero, a leap year of the proleptic calendar', () => {
      expect(compact.canonicalize('0-02-29')).toBe('00000229');
    });

    it('rejects years outside the reference date range', () => {
      expectRejected('+262144-01-01');
      expectRejected('+99999999999999999999999-01-01');
    });

    it('rejects a sign not directly followed by digits', () => {
      expectRejected('+ 2025-12-25');
      expectRejected('-');
    });

    it('reads five unsigned digits as a four-digit year followed by garbage', () => {
      expectRejected('12025-12-25');
    });

    it('rejects six compact digits, which leave no day', () => {
      expectRejected('202512');
    });

    it('rejects non-ASCII digits', () => {
      expectRejected('٢٠٢٥-١٢-٢٥');
    });
  });

  it('honours the Gregorian century rule', () => {
    expectRejected('1900-02-29');
    expect(compact.canonicalize('2000-02-29')).toBe('20000229');
  });

  it('rejects day 31 of a 30-day month', () => {
    expectRejected('2025-04-31');
  });

  it('has no constraint operators', () => {
    expect(compact.parseConstraint).toBeUndefined();
  });
});
