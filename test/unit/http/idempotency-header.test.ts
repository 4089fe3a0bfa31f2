import { describe, expect, it } from 'vitest';
import { parseIdempotencyKey, readIdempotencyKey } from '../../../src/http/routes/idempotency-header.js';

/** docs/api.md "Idempotent notify": the header's form. */
describe('parseIdempotencyKey', () => {
  it.each([
    ['bare text', 'a1b2-c3', 'a1b2-c3'],
    ['a UUID', '0f8fad5b-d9cb-469f-a165-70867728950e', '0f8fad5b-d9cb-469f-a165-70867728950e'],
    ['an sf-string', '"abc"', 'abc'],
    ['an sf-string with escapes', '"a\\"b\\\\c"', 'a"b\\c'],
    ['surrounding whitespace', '  key-1\t', 'key-1'],
    ['every visible ASCII character', '!~#$%&()*+,-./:;<=>?@[]^_`{|}', '!~#$%&()*+,-./:;<=>?@[]^_`{|}'],
    ['255 characters', 'k'.repeat(255), 'k'.repeat(255)],
  ])('accepts %s', (_name, raw, key) => {
    expect(parseIdempotencyKey(raw)).toBe(key);
  });

  it.each([
    ['an empty value', ''],
    ['blanks only', '   '],
    ['an empty sf-string', '""'],
    ['256 characters', 'k'.repeat(256)],
    ['256 characters once unquoted', `"${'k'.repeat(256)}"`],
    ['a space inside', 'a b'],
    ['a space inside an sf-string', '"a b"'],
    ['a control character', 'a\u0001b'],
    ['a non-ASCII character', 'clé'],
    ['an unterminated sf-string', '"abc'],
    ['text after the closing quote', '"abc"d'],
    ['an unknown escape', '"a\\nb"'],
    ['a trailing backslash', '"abc\\"'],
  ])('refuses %s', (_name, raw) => {
    expect(parseIdempotencyKey(raw)).toBeUndefined();
  });
});

describe('readIdempotencyKey', () => {
  it('is absent without the header', () => {
    expect(readIdempotencyKey(['Content-Type', 'application/json'])).toEqual({ kind: 'absent' });
  });

  it('matches the header name in any case', () => {
    expect(readIdempotencyKey(['IDEMPOTENCY-KEY', 'k1'])).toEqual({ kind: 'key', key: 'k1' });
  });

  it('refuses the header sent twice, even with the same value', () => {
    expect(readIdempotencyKey(['Idempotency-Key', 'k1', 'idempotency-key', 'k1'])).toEqual({ kind: 'malformed' });
  });

  it('reads the header object when there is no raw list', () => {
    expect(readIdempotencyKey([], { 'idempotency-key': '"k2"' })).toEqual({ kind: 'key', key: 'k2' });
  });

  it('refuses a malformed value', () => {
    expect(readIdempotencyKey(['Idempotency-Key', 'a b'])).toEqual({ kind: 'malformed' });
  });
});
