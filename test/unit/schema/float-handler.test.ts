import { describe, expect, it } from 'vitest';
import { JsonNumber } from '../../../src/json/json-value.js';
import type { ScalarFieldHandler } from '../../../src/schema/handlers/field-handler.js';
import { createFloatHandler } from '../../../src/schema/handlers/float-handler.js';
import { expectIdentifierError, identifierErrorOf, jsonObject } from './identifier-error-assertions.js';

const unbounded = createFloatHandler('anomaly', { type: 'FloatHandler', required: true });
const percent = createFloatHandler('anomaly', { type: 'FloatHandler', required: true, range: [0, 100] });
const fractional = createFloatHandler('level', { type: 'FloatHandler', required: true, range: [1.5, 9.1] });

function constraintOf(h: ScalarFieldHandler, text: string) {
  if (h.parseConstraint === undefined) throw new Error('FloatHandler must support constraints');
  return h.parseConstraint(jsonObject(text));
}

describe('FloatHandler', () => {
  describe('the canonical table of docs/design/rules/schema-and-validation.md §5.6', () => {
    it.each([
      ['3.14', '3.14'],
      ['42.50', '42.5'],
      ['5.0', '5'],
      ['5.', '5'],
      ['+5', '5'],
      ['1e5', '100000'],
      ['1e21', '1000000000000000000000'],
      ['1E-7', '0.0000001'],
      ['-0.0', '-0'],
      ['0.30000000000000004', '0.30000000000000004'],
    ])('canonicalises %s as %s', (input, output) => {
      expect(unbounded.canonicalize(input)).toBe(output);
    });
  });

  it('accepts a leading dot', () => {
    expect(unbounded.canonicalize('.5')).toBe('0.5');
  });

  it('reads an underflowing literal as zero', () => {
    expect(unbounded.canonicalize('1e-400')).toBe('0');
  });

  it.each(['abc', ' 1.5', '1.5 ', '0x10', '1_000', '.', 'e5', '1e', '1,5'])(
    'rejects %j with the invalid float literal details',
    (input) => {
      const error = identifierErrorOf(() => unbounded.canonicalize(input));
      expect({ message: error.message, details: error.details }).toEqual({
        message: `Field 'anomaly' must be a valid number, got: '${input}'`,
        details: 'invalid float literal',
      });
    },
  );

  it('rejects the empty string with the empty-float details', () => {
    const error = identifierErrorOf(() => unbounded.canonicalize(''));
    expect({ message: error.message, details: error.details }).toEqual({
      message: "Field 'anomaly' must be a valid number, got: ''",
      details: 'cannot parse float from empty string',
    });
  });

  it.each(['inf', '-Infinity', 'NaN', 'nan', '1e400', '-1e400'])('rejects the non-finite %s', (input) => {
    expectIdentifierError(() => unbounded.canonicalize(input), `Field 'anomaly' must be a finite number, got: '${input}'`);
  });

  it('accepts the bounds of its range', () => {
    expect(percent.canonicalize('0')).toBe('0');
    expect(percent.canonicalize('100.0')).toBe('100');
  });

  it('rejects a value outside its range, printing numbers canonically', () => {
    expectIdentifierError(() => percent.canonicalize('100.50'), "Field 'anomaly' value 100.5 is outside allowed range [0, 100]");
    expectIdentifierError(() => fractional.canonicalize('9.10001'), "Field 'level' value 9.10001 is outside allowed range [1.5, 9.1]");
  });

  describe('constraints', () => {
    it.each([
      ['{"eq": 0.3}', ['0.3'], ['0.30000000000000004']],
      ['{"eq": 40.0}', ['40'], ['40.5']],
      ['{"gt": 3}', ['3.5'], ['3']],
      ['{"gte": 3}', ['3'], ['2.999']],
      ['{"lt": 50.0}', ['49.99'], ['50']],
      ['{"lte": 50}', ['50'], ['50.01']],
      ['{"in": [1.5, 2]}', ['1.5', '2'], ['1']],
      ['{"between": [1, 2.5]}', ['1', '2.5'], ['0.9', '2.51']],
    ])('%s holds for %j and not for %j', (text, holding, failing) => {
      const constraint = constraintOf(unbounded, text);
      for (const token of holding) expect(constraint.matches(token)).toBe(true);
      for (const token of failing) expect(constraint.matches(token)).toBe(false);
    });

    it('treats negative zero as equal to zero', () => {
      expect(constraintOf(unbounded, '{"eq": 0}').matches('-0')).toBe(true);
    });

    it('fails candidate tokens that are not finite floats', () => {
      const constraint = constraintOf(unbounded, '{"lt": 1e300}');
      for (const token of ['', '*', 'abc', 'inf', 'NaN', '-inf']) expect(constraint.matches(token)).toBe(false);
    });

    it.each([
      ['{}', "Field 'anomaly' constraint must contain exactly one operator"],
      ['{"gt": 1, "lt": 2}', "Field 'anomaly' constraint must contain exactly one operator"],
      ['{"ne": 1}', "Field 'anomaly' has invalid operator 'ne'. Allowed: eq,in,gt,gte,lt,lte,between"],
      ['{"eq": "1.5"}', "Field 'anomaly' operator 'eq' expects numeric value"],
      ['{"gte": true}', "Field 'anomaly' operator 'gte' expects numeric value"],
      ['{"in": 1.5}', "Field 'anomaly' operator 'in' expects array of numbers"],
      ['{"in": []}', "Field 'anomaly' operator 'in' must contain at least one value"],
      ['{"in": [1, "2"]}', "Field 'anomaly' operator 'in' expects numeric value"],
      ['{"between": "1,2"}', "Field 'anomaly' operator 'between' expects [min,max]"],
      ['{"between": []}', "Field 'anomaly' operator 'between' expects exactly two values [min,max]"],
      ['{"between": [2.5, 1]}', "Field 'anomaly' operator 'between' expects min <= max"],
    ])('rejects %s', (text, message) => {
      expectIdentifierError(() => constraintOf(unbounded, text), message);
    });

    it('rejects an operand that is not finite', () => {
      // The request parser already refuses such literals; the handler does not rely on it.
      const parse = unbounded.parseConstraint;
      if (parse === undefined) throw new Error('FloatHandler must support constraints');
      expectIdentifierError(() => parse({ lt: new JsonNumber('1e400') }), "Field 'anomaly' operator 'lt' expects finite numeric value");
    });

    it.each([
      ['{"gte": 100.5}', "Field 'anomaly' constraint value 100.5 is outside allowed range [0, 100]"],
      ['{"in": [5, -0.5]}', "Field 'anomaly' constraint value -0.5 is outside allowed range [0, 100]"],
      ['{"between": [50, 1e3]}', "Field 'anomaly' constraint value 1000 is outside allowed range [0, 100]"],
    ])('checks every operand of %s against the range', (text, message) => {
      expectIdentifierError(() => constraintOf(percent, text), message);
    });
  });
});
