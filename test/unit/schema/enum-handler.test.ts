import { describe, expect, it } from 'vitest';
import { createEnumHandler } from '../../../src/schema/handlers/enum-handler.js';
import type { ScalarFieldHandler } from '../../../src/schema/handlers/field-handler.js';
import { expectIdentifierError, jsonObject } from './identifier-error-assertions.js';

const handler = createEnumHandler('region', {
  type: 'EnumHandler',
  required: true,
  values: ['north', 'South', 'east', 'west'],
});

function constraintOf(h: ScalarFieldHandler, text: string) {
  if (h.parseConstraint === undefined) throw new Error('EnumHandler must support constraints');
  return h.parseConstraint(jsonObject(text));
}

describe('EnumHandler', () => {
  it('lower-cases an allowed value', () => {
    expect(handler.canonicalize('NORTH')).toBe('north');
  });

  it('accepts any case of a value configured with capitals', () => {
    expect(handler.canonicalize('south')).toBe('south');
    expect(handler.canonicalize('SOUTH')).toBe('south');
  });

  it('rejects a value outside the list, listing the values as configured', () => {
    expectIdentifierError(() => handler.canonicalize('Up'), "Field 'region' has invalid value 'Up'. Allowed: [north, South, east, west]");
  });

  it('rejects the empty string like any other value', () => {
    expectIdentifierError(() => handler.canonicalize(''), "Field 'region' has invalid value ''. Allowed: [north, South, east, west]");
  });

  it('rejects everything when no values are configured', () => {
    const empty = createEnumHandler('region', { type: 'EnumHandler', required: true, values: [] });
    expectIdentifierError(() => empty.canonicalize('north'), "Field 'region' has invalid value 'north'. Allowed: []");
  });

  it('compares with full Unicode lower-casing', () => {
    const greek = createEnumHandler('letter', { type: 'EnumHandler', required: true, values: ['ΣΊΣΥΦΟΣ', 'İ'] });
    expect(greek.canonicalize('σίσυφος')).toBe('σίσυφος');
    expect(greek.canonicalize('İ')).toBe('i̇');
  });

  describe('constraints', () => {
    it('matches eq on the lower-cased operand', () => {
      const constraint = constraintOf(handler, '{"eq": "NORTH"}');
      expect(constraint.operator).toBe('eq');
      expect(constraint.matches('north')).toBe(true);
      expect(constraint.matches('south')).toBe(false);
    });

    it('matches in on any listed value, compared lower-cased', () => {
      const constraint = constraintOf(handler, '{"in": ["north", "South"]}');
      expect(constraint.operator).toBe('in');
      expect(constraint.matches('south')).toBe(true);
      expect(constraint.matches('SOUTH')).toBe(true);
      expect(constraint.matches('east')).toBe(false);
    });

    it('fails an empty or wildcard token', () => {
      const constraint = constraintOf(handler, '{"in": ["north"]}');
      expect(constraint.matches('')).toBe(false);
      expect(constraint.matches('*')).toBe(false);
    });

    it.each([
      ['{}', "Field 'region' constraint must contain exactly one operator"],
      ['{"eq": "north", "in": ["south"]}', "Field 'region' constraint must contain exactly one operator"],
      ['{"gt": "north"}', "Field 'region' has invalid operator 'gt'. Allowed for enum constraints: eq,in"],
      ['{"EQ": "north"}', "Field 'region' has invalid operator 'EQ'. Allowed for enum constraints: eq,in"],
      ['{"eq": 1}', "Field 'region' operator 'eq' expects string value"],
      ['{"eq": ["north"]}', "Field 'region' operator 'eq' expects string value"],
      ['{"in": "north"}', "Field 'region' operator 'in' expects array of strings"],
      ['{"in": []}', "Field 'region' operator 'in' must contain at least one value"],
      ['{"in": ["north", 2]}', "Field 'region' operator 'in' expects string value"],
      ['{"eq": "UP"}', "Field 'region' has invalid enum value 'up'. Allowed: [north, south, east, west]"],
      ['{"in": ["north", "Down"]}', "Field 'region' has invalid enum value 'down'. Allowed: [north, south, east, west]"],
    ])('rejects %s', (text, message) => {
      expectIdentifierError(() => constraintOf(handler, text), message);
    });
  });
});
