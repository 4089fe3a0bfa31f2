import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalFloatText,
  NumberParseError,
  parseRustF64,
  parseRustI64,
  parseRustU32,
  referenceFloatText,
} from '../../../src/schema/number-text.js';
import { thrownError } from '../../support/thrown-error.js';

const parseErrorOf = (action: () => unknown): string => thrownError(action, NumberParseError).message;

describe('parseRustI64', () => {
  it.each([
    ['0', 0n],
    ['42', 42n],
    ['-3', -3n],
    ['+5', 5n],
    ['007', 7n],
    ['-0', 0n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
  ])('reads %s', (text, expected) => {
    expect(parseRustI64(text)).toBe(expected);
  });

  it.each([
    ['', 'cannot parse integer from empty string'],
    ['+', 'invalid digit found in string'],
    ['-', 'invalid digit found in string'],
    ['4.0', 'invalid digit found in string'],
    ['1e3', 'invalid digit found in string'],
    [' 4', 'invalid digit found in string'],
    ['4 ', 'invalid digit found in string'],
    ['1_000', 'invalid digit found in string'],
    ['--1', 'invalid digit found in string'],
    ['+-1', 'invalid digit found in string'],
    ['abc', 'invalid digit found in string'],
    ['١٢', 'invalid digit found in string'],
    ['9223372036854775808', 'number too large to fit in target type'],
    ['-9223372036854775809', 'number too small to fit in target type'],
  ])('rejects %j with Rust text %j', (text, message) => {
    expect(parseErrorOf(() => parseRustI64(text))).toBe(message);
  });

  it('reports an overflow seen before a later invalid digit, reading left to right as Rust does', () => {
    expect(parseErrorOf(() => parseRustI64('99999999999999999999x'))).toBe('number too large to fit in target type');
  });

  it('reports an invalid digit seen before the value overflows', () => {
    expect(parseErrorOf(() => parseRustI64('9x9999999999999999999'))).toBe('invalid digit found in string');
  });

  it('reads back any i64 written in decimal', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (value) => {
        expect(parseRustI64(value.toString())).toBe(value);
      }),
    );
  });
});

describe('parseRustU32', () => {
  it.each([
    ['1', 1],
    ['+1', 1],
    ['00001', 1],
    ['4294967295', 4294967295],
  ])('reads %s', (text, expected) => {
    expect(parseRustU32(text)).toBe(expected);
  });

  it.each([
    ['', 'cannot parse integer from empty string'],
    ['-1', 'invalid digit found in string'],
    ['-0', 'invalid digit found in string'],
    ['+', 'invalid digit found in string'],
    ['4294967296', 'number too large to fit in target type'],
  ])('rejects %j with Rust text %j', (text, message) => {
    expect(parseErrorOf(() => parseRustU32(text))).toBe(message);
  });
});

describe('parseRustF64', () => {
  it.each([
    ['3.14', 3.14],
    ['5.', 5],
    ['.5', 0.5],
    ['+5', 5],
    ['-2.5', -2.5],
    ['1e5', 100000],
    ['1E-7', 1e-7],
    ['1e+2', 100],
    ['.5e1', 5],
    ['5.e1', 50],
    ['1e400', Number.POSITIVE_INFINITY],
    ['-1e400', Number.NEGATIVE_INFINITY],
    ['inf', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['+INF', Number.POSITIVE_INFINITY],
  ])('reads %s', (text, expected) => {
    expect(parseRustF64(text)).toBe(expected);
  });

  it('reads nan in any case', () => {
    expect(parseRustF64('NaN')).toBeNaN();
    expect(parseRustF64('nan')).toBeNaN();
    expect(parseRustF64('-nAn')).toBeNaN();
  });

  it('keeps the sign of negative zero', () => {
    expect(Object.is(parseRustF64('-0.0'), -0)).toBe(true);
  });

  it('underflows to zero', () => {
    expect(parseRustF64('1e-400')).toBe(0);
  });

  it('rejects the empty string with its own text', () => {
    expect(parseErrorOf(() => parseRustF64(''))).toBe('cannot parse float from empty string');
  });

  it.each(['.', '-', '+', 'e5', '1e', '1e+', ' 1', '1 ', '0x10', '1_000', '1,5', 'abc', 'infin', 'nana', '1.2.3', '١'])(
    'rejects %j as an invalid float literal',
    (text) => {
      expect(parseErrorOf(() => parseRustF64(text))).toBe('invalid float literal');
    },
  );
});

describe('canonicalFloatText', () => {
  it.each([
    [3.14, '3.14'],
    [42.5, '42.5'],
    [5, '5'],
    [100000, '100000'],
    [1e21, '1000000000000000000000'],
    [1e-7, '0.0000001'],
    [1.5e-7, '0.00000015'],
    [-0, '-0'],
    [0, '0'],
    [0.1 + 0.2, '0.30000000000000004'],
    [-2.5, '-2.5'],
    [1.2345e25, '12345000000000000000000000'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'inf'],
    [Number.NEGATIVE_INFINITY, '-inf'],
  ])('prints %s as %s', (value, text) => {
    expect(canonicalFloatText(value)).toBe(text);
  });

  it('reads back to the same double and never uses exponent notation', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        const text = canonicalFloatText(value);
        expect(text).not.toMatch(/e/i);
        expect(Object.is(Number(text), value)).toBe(true);
      }),
    );
  });
});

describe('referenceFloatText', () => {
  it.each([
    [42.5, '42.5'],
    [5, '5.0'],
    [-5, '-5.0'],
    [1e15, '1000000000000000.0'],
    [9999999999999998, '9999999999999998.0'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [1.5e-7, '1.5e-7'],
    [1e-5, '0.00001'],
    [1.5e-5, '0.000015'],
    [9.9e-6, '9.9e-6'],
    [1e-7, '1e-7'],
    [-1e300, '-1e+300'],
    [0, '0.0'],
    [-0, '-0.0'],
    [0.1 + 0.2, '0.30000000000000004'],
  ])('prints %s as %s', (value, text) => {
    expect(referenceFloatText(value)).toBe(text);
  });

  it('reads back to the same double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(Object.is(Number(referenceFloatText(value)), value)).toBe(true);
      }),
    );
  });
});
