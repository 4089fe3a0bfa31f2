import { describe, expect, it } from 'vitest';
import { JsonNumber } from '../../../src/json/json-value.js';
import { scalarText } from '../../../src/schema/scalar-text.js';
import { expectIdentifierError, json } from './identifier-error-assertions.js';

describe('scalarText', () => {
  it('keeps a string unchanged, whitespace and case included', () => {
    expect(scalarText('f', ' North ')).toBe(' North ');
  });

  it('keeps the empty string', () => {
    expect(scalarText('f', '')).toBe('');
  });

  it.each([
    ['42', '42'],
    ['-3', '-3'],
    ['0', '0'],
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808', '-9223372036854775808'],
    ['18446744073709551615', '18446744073709551615'],
  ])('writes the integer literal %s as its digits', (literal, text) => {
    expect(scalarText('f', json(literal))).toBe(text);
  });

  it('reads the literal -0 as a float', () => {
    expect(scalarText('f', json('-0'))).toBe('-0.0');
  });

  it.each([
    ['4.0', '4.0'],
    ['42.5', '42.5'],
    ['5.0', '5.0'],
    ['42.50', '42.5'],
    ['1e15', '1000000000000000.0'],
    ['1e16', '1e+16'],
    ['1.5e-7', '1.5e-7'],
    ['1E2', '100.0'],
    ['-0.0', '-0.0'],
    ['18446744073709551616', '1.8446744073709552e+19'],
    ['-9223372036854775809', '-9.223372036854776e+18'],
  ])('writes the non-integer literal %s as the reference float text %s', (literal, text) => {
    expect(scalarText('f', json(literal))).toBe(text);
  });

  it('writes booleans as true and false', () => {
    expect(scalarText('f', true)).toBe('true');
    expect(scalarText('f', false)).toBe('false');
  });

  it('rejects null', () => {
    expectIdentifierError(() => scalarText('step', null), "Field 'step' cannot be null");
  });

  it('rejects an array', () => {
    expectIdentifierError(
      () => scalarText('step', [new JsonNumber('1')]),
      "Field 'step' must be a scalar value or constraint object, got array",
    );
  });

  it('treats an object as a programming error, not a client error', () => {
    expect(() => scalarText('step', { eq: new JsonNumber('1') })).toThrow(Error);
    expect(() => scalarText('step', { eq: new JsonNumber('1') })).not.toThrow(/Field 'step'/);
  });
});
