import { describe, expect, it } from 'vitest';
import { LiteralError, parseDuration, parseSize } from '../../../src/config/units.js';

describe('duration literal (docs/design/rules/operations.md §1.5)', () => {
  it.each([
    ['50s', 50],
    ['10m', 600],
    ['10M', 600],
    ['1h', 3600],
    ['2d', 172800],
    ['1w', 604800],
    [' 10m ', 600],
    ['0s', 0],
    ['3H', 10800],
  ])('parses %j as %i seconds', (input, seconds) => {
    expect(parseDuration(input)).toBe(seconds);
  });

  it.each(['10', 'abc', '10x', '-5m', '', '   ', '1h30m', '10 m', '10ms', '1mo', '+5m'])('rejects %j', (input) => {
    expect(() => parseDuration(input)).toThrow(LiteralError);
  });

  it('explains a missing unit', () => {
    expect(() => parseDuration('10')).toThrow("duration '10' has no unit (expected s, m, h, d or w)");
  });

  it('explains a missing number', () => {
    expect(() => parseDuration('abc')).toThrow('must be an integer');
  });

  it('explains an unknown unit', () => {
    expect(() => parseDuration('10x')).toThrow("unknown unit 'x'");
  });

  it('explains an empty literal', () => {
    expect(() => parseDuration('')).toThrow('duration is empty');
  });

  it('rejects values that overflow unsigned 64-bit seconds', () => {
    expect(() => parseDuration('18446744073709551615w')).toThrow('does not fit in unsigned 64-bit seconds');
    expect(() => parseDuration('18446744073709551616s')).toThrow('does not fit in unsigned 64-bit seconds');
  });

  it('rejects values a JS number cannot hold exactly', () => {
    expect(() => parseDuration('9007199254740992s')).toThrow('too large');
    expect(parseDuration('9007199254740991s')).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('size literal (docs/design/rules/operations.md §1.5)', () => {
  it.each([
    ['100K', 100000],
    ['100Ki', 102400],
    ['2M', 2000000],
    ['2Mi', 2097152],
    ['1G', 1000000000],
    ['1Gi', 2 ** 30],
    ['1T', 1e12],
    ['1Ti', 2 ** 40],
    ['64Mi', 67108864],
    [' 5K ', 5000],
  ])('parses %j as %i bytes', (input, bytes) => {
    expect(parseSize(input)).toBe(bytes);
  });

  it.each(['10', '0Mi', '10m', 'abc', '', '10k', '10KI', '-1K', '1.5G'])('rejects %j', (input) => {
    expect(() => parseSize(input)).toThrow(LiteralError);
  });

  it('explains a zero value', () => {
    expect(() => parseSize('0Mi')).toThrow("size '0Mi' must be greater than 0");
  });

  it('explains that units are case-sensitive', () => {
    expect(() => parseSize('10m')).toThrow("unknown unit 'm'");
  });

  it('rejects results beyond signed 64-bit', () => {
    expect(() => parseSize('9223372036854775808K')).toThrow('does not fit in signed 64-bit bytes');
    expect(() => parseSize('8388608Ti')).toThrow('does not fit in signed 64-bit bytes');
  });
});
