import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeToken, decodeTopic, displayTopic, encodeToken, encodeTopic } from '../../../src/topic/percent-codec.js';

describe('encodeToken', () => {
  it.each([
    ['1.45', '1%2E45'],
    ['1*34', '1%2A34'],
    ['1>0', '1%3E0'],
    ['1%25', '1%2525'],
    ['1.45*foo>bar%baz', '1%2E45%2Afoo%3Ebar%25baz'],
  ])('encodes the reference characters of %s exactly as the reference does', (logical, wire) => {
    expect(encodeToken(logical)).toBe(wire);
  });

  it('leaves non-ASCII text unchanged', () => {
    expect(encodeToken('Zürich-東京')).toBe('Zürich-東京');
  });

  it('percent-encodes whitespace and control characters so NATS accepts the subject (D20)', () => {
    expect(encodeToken('a b\tc\nd\u0000e\u00a0f')).toBe('a%20b%09c%0Ad%00e%C2%A0f');
  });
});

describe('decodeToken', () => {
  it.each([
    ['1%2525', '1%25'],
    ['1%25', '1%'],
    ['%2e%2a', '.*'],
    ['%41', 'A'],
  ])('decodes %s to %s', (wire, logical) => {
    expect(decodeToken(wire)).toBe(logical);
  });

  it.each([
    ['%', "Invalid percent-encoding: trailing '%' in token '%'"],
    ['%2', "Invalid percent-encoding: trailing '%' in token '%2'"],
    ['%2G', "Invalid percent-encoding: non-hex 'G' in token '%2G'"],
    ['abc%ZZ', "Invalid percent-encoding: non-hex 'Z' in token 'abc%ZZ'"],
  ])('rejects %s', (wire, message) => {
    expect(() => decodeToken(wire)).toThrow(message);
  });

  it('rejects decoded bytes that are not UTF-8', () => {
    expect(() => decodeToken('%FF')).toThrow(/^Decoded token is not valid UTF-8 \('%FF'\): /);
  });
});

describe('topics', () => {
  it('joins encoded tokens with dots', () => {
    expect(encodeTopic(['mars', 'od', 'ens.member.7'])).toBe('mars.od.ens%2Emember%2E7');
  });

  it('shows the decoded display form, or the raw subject when decoding fails', () => {
    expect(displayTopic('mars.ens%2Emember%2E7.%2A')).toBe('mars.ens.member.7.*');
    expect(displayTopic('mars.bad%ZZ')).toBe('mars.bad%ZZ');
  });

  it('round-trips any token list through encode and decode', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 6 }), (tokens) => {
        const wellFormed = tokens.map((t) => t.toWellFormed());
        expect(decodeTopic(encodeTopic(wellFormed))).toEqual(wellFormed);
      }),
    );
  });

  it('never produces a wire token containing a NATS separator, wildcard or whitespace', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (token) => {
        expect(encodeToken(token.toWellFormed())).not.toMatch(/[.*>\s]/u);
      }),
    );
  });
});
