import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ScalarFieldHandler } from '../../../src/schema/handlers/field-handler.js';
import { createIntHandler } from '../../../src/schema/handlers/int-handler.js';
import { expectIdentifierError, identifierErrorOf, jsonObject } from './identifier-error-assertions.js';

const unbounded = createIntHandler('step', { type: 'IntHandler', required: true });
const severity = createIntHandler('severity', { type: 'IntHandler', required: true, range: [1, 7] });

function constraintOf(h: ScalarFieldHandler, text: string) {
  if (h.parseConstraint === undefined) throw new Error('IntHandler must support constraints');
  return h.parseConstraint(jsonObject(text));
}

function expectParseFailure(value: string, details: string): void {
  const error = identifierErrorOf(() => unbounded.canonicalize(value));
  expect({ message: error.message, details: error.details }).toEqual({
    message: `Field 'step' must be a valid integer, got: '${value}'`,
    details,
  });
}

describe('IntHandler', () => {
  it.each([
    ['42', '42'],
    ['007', '7'],
    ['+5', '5'],
    ['-0', '0'],
    ['-12', '-12'],
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808', '-9223372036854775808'],
  ])('canonicalises %s as %s', (input, output) => {
    expect(unbounded.canonicalize(input)).toBe(output);
  });

  it.each([
    ['4.0', 'invalid digit found in string'],
    ['1e3', 'invalid digit found in string'],
    [' 4', 'invalid digit found in string'],
    ['1,000', 'invalid digit found in string'],
    ['+', 'invalid digit found in string'],
    ['', 'cannot parse integer from empty string'],
    ['9223372036854775808', 'number too large to fit in target type'],
    ['-9223372036854775809', 'number too small to fit in target type'],
  ])('rejects %j with the parser text %j as details', (input, details) => {
    expectParseFailure(input, details);
  });

  it('accepts the bounds of its range', () => {
    expect(severity.canonicalize('1')).toBe('1');
    expect(severity.canonicalize('7')).toBe('7');
  });

  it('rejects a value outside its range', () => {
    expectIdentifierError(() => severity.canonicalize('9'), "Field 'severity' value 9 is outside allowed range [1, 7]");
  });

  it('prints the canonical value in the range message', () => {
    expectIdentifierError(() => severity.canonicalize('+09'), "Field 'severity' value 9 is outside allowed range [1, 7]");
  });

  it('canonicalises any i64 written with leading zeros and a plus sign to its minimal decimal', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.nat(3), (value, zeros) => {
        const digits = (value < 0n ? -value : value).toString();
        const text = (value < 0n ? '-' : '+') + '0'.repeat(zeros) + digits;
        expect(unbounded.canonicalize(text)).toBe(value.toString());
      }),
    );
  });

  describe('constraints', () => {
    it.each([
      ['{"eq": 4}', ['4'], ['3', '5']],
      ['{"gt": 4}', ['5'], ['4', '3']],
      ['{"gte": 4}', ['4', '5'], ['3']],
      ['{"lt": 4}', ['3'], ['4', '5']],
      ['{"lte": 4}', ['3', '4'], ['5']],
      ['{"in": [2, 4]}', ['2', '4'], ['3']],
      ['{"between": [3, 5]}', ['3', '4', '5'], ['2', '6']],
    ])('%s holds for %j and not for %j', (text, holding, failing) => {
      const constraint = constraintOf(unbounded, text);
      for (const token of holding) expect(constraint.matches(token)).toBe(true);
      for (const token of failing) expect(constraint.matches(token)).toBe(false);
    });

    it('names its operator', () => {
      expect(constraintOf(unbounded, '{"between": [3, 5]}').operator).toBe('between');
    });

    it('compares beyond 2^53 without losing precision', () => {
      const constraint = constraintOf(unbounded, '{"gt": 9007199254740992}');
      expect(constraint.matches('9007199254740993')).toBe(true);
      expect(constraint.matches('9007199254740992')).toBe(false);
    });

    it('fails candidate tokens that are not i64', () => {
      const constraint = constraintOf(unbounded, '{"gte": 0}');
      for (const token of ['', '*', '4.0', 'abc', '9223372036854775808']) expect(constraint.matches(token)).toBe(false);
    });

    it.each([
      ['{}', "Field 'step' constraint must contain exactly one operator"],
      ['{"gte": 4, "lt": 7}', "Field 'step' constraint must contain exactly one operator"],
      ['{"ge": 4}', "Field 'step' has invalid operator 'ge'. Allowed: eq,in,gt,gte,lt,lte,between"],
      ['{"Eq": 4}', "Field 'step' has invalid operator 'Eq'. Allowed: eq,in,gt,gte,lt,lte,between"],
      ['{"eq": "4"}', "Field 'step' operator 'eq' expects integer value"],
      ['{"eq": 4.0}', "Field 'step' operator 'eq' expects integer value"],
      ['{"gt": 1e2}', "Field 'step' operator 'gt' expects integer value"],
      ['{"lt": -0}', "Field 'step' operator 'lt' expects integer value"],
      ['{"eq": 9223372036854775808}', "Field 'step' operator 'eq' expects integer value"],
      ['{"eq": -9223372036854775809}', "Field 'step' operator 'eq' expects integer value"],
      ['{"eq": null}', "Field 'step' operator 'eq' expects integer value"],
      ['{"in": 4}', "Field 'step' operator 'in' expects array of integers"],
      ['{"in": []}', "Field 'step' operator 'in' must contain at least one value"],
      ['{"in": [1, "2"]}', "Field 'step' operator 'in' expects integer value"],
      ['{"between": 4}', "Field 'step' operator 'between' expects [min,max]"],
      ['{"between": [1]}', "Field 'step' operator 'between' expects exactly two values [min,max]"],
      ['{"between": [1, 2, 3]}', "Field 'step' operator 'between' expects exactly two values [min,max]"],
      ['{"between": [1, 2.5]}', "Field 'step' operator 'between' expects integer value"],
      ['{"between": [6, 2]}', "Field 'step' operator 'between' expects min <= max"],
    ])('rejects %s', (text, message) => {
      expectIdentifierError(() => constraintOf(unbounded, text), message);
    });

    it.each([
      ['{"gte": 9}', "Field 'severity' constraint value 9 is outside allowed range [1, 7]"],
      ['{"eq": 0}', "Field 'severity' constraint value 0 is outside allowed range [1, 7]"],
      ['{"in": [2, 8]}', "Field 'severity' constraint value 8 is outside allowed range [1, 7]"],
      ['{"between": [0, 5]}', "Field 'severity' constraint value 0 is outside allowed range [1, 7]"],
      ['{"between": [3, 8]}', "Field 'severity' constraint value 8 is outside allowed range [1, 7]"],
    ])('checks every operand of %s against the range', (text, message) => {
      expectIdentifierError(() => constraintOf(severity, text), message);
    });

    it('accepts operands on the range bounds', () => {
      expect(constraintOf(severity, '{"between": [1, 7]}').matches('7')).toBe(true);
    });
  });
});
