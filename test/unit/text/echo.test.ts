import { describe, expect, it } from 'vitest';
import { MAX_ECHO_CHARACTERS, echo, withOneCutValue } from '../../../src/text/echo.js';

const LIMIT = MAX_ECHO_CHARACTERS;

describe('echo', () => {
  it('is 256 characters, the documented length (docs/api.md#echoed-values-decision-d45)', () => {
    expect(MAX_ECHO_CHARACTERS).toBe(256);
  });

  it.each([
    ['empty', ''],
    ['short', 'mars@5'],
    ['exactly at the limit', 'x'.repeat(LIMIT)],
    ['at the limit in characters though longer in code units', '😀'.repeat(LIMIT)],
  ])('returns a value within the limit unchanged (%s)', (_name, value) => {
    expect(echo(value)).toBe(value);
  });

  it('cuts a longer value at the limit and gives its whole length', () => {
    expect(echo('a'.repeat(LIMIT) + 'b'.repeat(3_744))).toBe(`${'a'.repeat(LIMIT)}…(4000 characters)`);
    expect(echo('x'.repeat(LIMIT + 1))).toBe(`${'x'.repeat(LIMIT)}…(${LIMIT + 1} characters)`);
  });

  it('counts characters, never splits a surrogate pair', () => {
    const value = `${'a'.repeat(LIMIT - 1)}😀${'b'.repeat(10)}`;
    expect(echo(value)).toBe(`${'a'.repeat(LIMIT - 1)}😀…(${LIMIT + 10} characters)`);
  });

  it('keeps the length of what it returns bounded whatever it is given', () => {
    expect(echo('9'.repeat(1_000_000)).length).toBeLessThanOrEqual(LIMIT + '…(1000000 characters)'.length);
  });
});

describe('withOneCutValue', () => {
  const long = 'A'.repeat(4_000);
  const cut = echo(long);
  const marker = '…(4000 characters)';

  it('leaves texts without a cut value as they are, even when they repeat each other', () => {
    const message = "from_id must be a valid positive integer. Got: 'x'. Valid examples: '1', '123', '9999'";
    expect(withOneCutValue([message, message])).toEqual([message, message]);
  });

  it('keeps the first cut value and reduces a repetition to its marker', () => {
    const message = `Last-Event-ID must be '<event_type>@<sequence>'. Got: '${cut}'`;
    const [first, second] = withOneCutValue([message, message]);
    expect(first).toBe(message);
    expect(second).toBe(`Last-Event-ID must be '<event_type>@<sequence>'. Got: '${marker}'`);
  });

  it('reduces a second cut value inside the same text', () => {
    const digits = echo('1'.repeat(3_000));
    const message = `from_date must be a valid datetime/timestamp. Got: '${digits}'. Error: failed to parse unix timestamp '${digits}': number too large`;
    const [once] = withOneCutValue([message]);
    expect(once).toBe(
      `from_date must be a valid datetime/timestamp. Got: '${digits}'. Error: failed to parse unix timestamp '…(3000 characters)': number too large`,
    );
    expect(once?.split('1'.repeat(LIMIT)).length).toBe(2);
  });

  it('handles a cut value at the very start of a text and one made of surrogate pairs', () => {
    const emoji = echo('😀'.repeat(300));
    expect(withOneCutValue([cut, emoji])).toEqual([cut, '…(300 characters)']);
  });

  it('does not take a marker that no cut produced for one', () => {
    const text = "Got: 'x…(9000 characters)'";
    expect(withOneCutValue([cut, text])).toEqual([cut, text]);
  });
});
