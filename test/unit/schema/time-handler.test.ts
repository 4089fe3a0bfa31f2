import { describe, expect, it } from 'vitest';
import { createTimeHandler } from '../../../src/schema/handlers/time-handler.js';
import { expectIdentifierError } from './identifier-error-assertions.js';

const handler = createTimeHandler('time');

const hoursMessage = (h: string): string => `Field 'time' has invalid hours: ${h}. Hours must be 0-23 in 24-hour format`;
const minutesMessage = (m: string): string => `Field 'time' has invalid minutes: ${m}. Minutes must be 0-59`;
const colonFormatMessage = (v: string): string =>
  `Field 'time' has invalid HH:MM format '${v}'. Expected format: HH:MM (e.g., 14:30, 9:05)`;
const fourDigitMessage = (v: string): string =>
  `Field 'time' has invalid HHMM format '${v}'. Expected format: HHMM with exactly 4 digits (e.g., 1430, 0905)`;
const formatMessage = (v: string): string => `Field 'time' has invalid time format '${v}'. Expected: H, HH, HH:MM, or HHMM`;

describe('TimeHandler', () => {
  describe('the accepted rows of the docs/design/rules/schema-and-validation.md §5.3 table', () => {
    it.each([
      ['0', '0000'],
      ['9', '0900'],
      ['09', '0900'],
      ['14:30', '1430'],
      ['9:05', '0905'],
      ['1430', '1430'],
      ['0:59', '0059'],
    ])('reads %s as %s', (input, output) => {
      expect(handler.canonicalize(input)).toBe(output);
    });
  });

  describe('the rejected rows of the docs/design/rules/schema-and-validation.md §5.3 table', () => {
    it.each([
      ['24', '24'],
      ['99', '99'],
      ['2400', '24'],
      ['25:30', '25'],
    ])('rejects %s with the hours message', (input, hours) => {
      expectIdentifierError(() => handler.canonicalize(input), hoursMessage(hours));
    });

    it('rejects 12:60 with the minutes message', () => {
      expectIdentifierError(() => handler.canonicalize('12:60'), minutesMessage('60'));
    });

    it.each(['12:5', '1:2', 'ab:30', '12:ab'])('rejects %s with the HH:MM format message', (input) => {
      expectIdentifierError(() => handler.canonicalize(input), colonFormatMessage(input));
    });

    it('rejects 12ab with the HHMM format message', () => {
      expectIdentifierError(() => handler.canonicalize('12ab'), fourDigitMessage('12ab'));
    });

    it.each(['123', '12345', '12.30', 'abc', '12 ', ''])('rejects %j with the time format message', (input) => {
      expectIdentifierError(() => handler.canonicalize(input), formatMessage(input));
    });
  });

  it('rejects minutes above 59 in the four-digit form', () => {
    expectIdentifierError(() => handler.canonicalize('1260'), minutesMessage('60'));
  });

  it('reports hours before minutes when both are out of range', () => {
    expectIdentifierError(() => handler.canonicalize('25:61'), hoursMessage('25'));
  });

  it('accepts the last minute of the day', () => {
    expect(handler.canonicalize('23:59')).toBe('2359');
    expect(handler.canonicalize('2359')).toBe('2359');
  });

  it('tolerates no whitespace around an HH:MM value', () => {
    expectIdentifierError(() => handler.canonicalize(' 14:30'), colonFormatMessage(' 14:30'));
  });

  it('rejects non-ASCII digits around a colon with the HH:MM format message (D24)', () => {
    expectIdentifierError(() => handler.canonicalize('١٢:٣٠'), colonFormatMessage('١٢:٣٠'));
  });

  it('measures length in UTF-8 bytes, so two Arabic-Indic digits are a four-byte HHMM candidate', () => {
    expectIdentifierError(() => handler.canonicalize('١٢'), fourDigitMessage('١٢'));
  });

  it('rejects a one-character non-ASCII digit with the time format message', () => {
    expectIdentifierError(() => handler.canonicalize('٩'), formatMessage('٩'));
  });

  it('has no constraint operators', () => {
    expect(handler.parseConstraint).toBeUndefined();
  });
});
