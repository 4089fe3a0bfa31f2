import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, compareCodePoints } from '../../../src/json/canonical-json.js';
import { parseJsonBody } from '../../../src/json/lossless-parse.js';

describe('canonicalJson', () => {
  it('sorts keys recursively and writes compact JSON', () => {
    expect(canonicalJson({ b: 1, a: { d: [true, null], c: 'x' } })).toBe('{"a":{"c":"x","d":[true,null]},"b":1}');
  });

  it('keeps the source text of parsed numbers, so integers beyond 2^53 survive', () => {
    expect(canonicalJson(parseJsonBody('{"n":12345678901234567890,"f":1.50}'))).toBe('{"f":1.50,"n":12345678901234567890}');
  });

  it('writes non-ASCII raw, escapes control characters in lower-case hex and leaves / alone', () => {
    expect(canonicalJson('é/\u0001"\n')).toBe('"é/\\u0001\\"\\n"');
  });

  it('orders keys by code point, not UTF-16 unit', () => {
    expect(compareCodePoints('\u{1F600}', '\uFFFF')).toBe(1);
    expect(canonicalJson({ '\u{1F600}': 1, '\uFFFF': 2 })).toBe('{"\uFFFF":2,"\u{1F600}":1}');
  });

  it('compares like the code-point sequences do, surrogates and prefixes included', () => {
    const byDefinition = (a: string, b: string): number => {
      const x = [...a].map((c) => c.codePointAt(0) ?? 0);
      const y = [...b].map((c) => c.codePointAt(0) ?? 0);
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        if (x[i] !== y[i]) return (x[i] ?? 0) < (y[i] ?? 0) ? -1 : 1;
      }
      return Math.sign(x.length - y.length);
    };
    // Small alphabets around U+D800 and U+FFFF so shared prefixes and surrogates are common.
    const char = fc.constantFrom('a', 'b', '\u00e9', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{1F600}', '\u{10FFFF}');
    const text = fc.array(char, { maxLength: 5 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(compareCodePoints(a, b)).toBe(byDefinition(a, b));
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves out undefined members wherever they sort', () => {
    expect(canonicalJson({ b: undefined, a: 1, c: { z: undefined } })).toBe('{"a":1,"c":{}}');
    expect(canonicalJson({ a: undefined })).toBe('{}');
  });
});

describe('parseJsonBody', () => {
  it('rejects invalid UTF-8', () => {
    expect(() => parseJsonBody(Buffer.from([0x22, 0xff, 0x22]))).toThrow('request body is not valid UTF-8');
  });

  it('rejects nesting deeper than serde_json allows without exhausting the stack', () => {
    expect(() => parseJsonBody('['.repeat(200_000) + ']'.repeat(200_000))).toThrow(/recursion limit exceeded/);
    expect(() => parseJsonBody('['.repeat(128) + ']'.repeat(128))).not.toThrow();
  });

  it('ignores brackets inside strings when measuring depth', () => {
    expect(parseJsonBody(JSON.stringify({ a: '['.repeat(500) }))).toEqual({ a: '['.repeat(500) });
  });

  it('rejects numbers outside the double range like serde_json', () => {
    expect(() => parseJsonBody('{"a":1e400}')).toThrow('number out of range: 1e400');
  });

  it('rejects trailing garbage and empty input', () => {
    expect(() => parseJsonBody('{} x')).toThrow();
    expect(() => parseJsonBody('')).toThrow();
  });
});
