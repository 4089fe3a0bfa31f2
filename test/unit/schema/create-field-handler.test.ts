import { describe, expect, it } from 'vitest';
import { createFieldHandler } from '../../../src/schema/handlers/create-field-handler.js';
import type { IdentifierRule } from '../../../src/schema/identifier-rule.js';
import type { FieldHandler, ScalarFieldHandler } from '../../../src/schema/handlers/field-handler.js';

function scalar(handler: FieldHandler): ScalarFieldHandler {
  if (handler.kind !== 'scalar') throw new Error(`expected a scalar handler, got ${handler.kind}`);
  return handler;
}

describe('createFieldHandler', () => {
  const scalarCases: [IdentifierRule, string, string][] = [
    [{ type: 'StringHandler', required: true }, 'A b', 'A b'],
    // Cast while DateRule's static type reads canonical_format as undefined (identifier-rule.ts).
    [{ type: 'DateHandler', required: true, canonical_format: '%Y-%m-%d' }, '20251225', '2025-12-25'],
    [{ type: 'TimeHandler', required: true }, '9:05', '0905'],
    [{ type: 'EnumHandler', required: true, values: ['North'] }, 'NORTH', 'north'],
    [{ type: 'IntHandler', required: true }, '+007', '7'],
    [{ type: 'FloatHandler', required: true }, '42.50', '42.5'],
    [{ type: 'ExpverHandler', required: true }, '1', '0001'],
  ];

  it.each(scalarCases.map(([rule, input, output]) => [rule.type, rule, input, output] as const))(
    'builds the scalar handler for %s',
    (_type, rule, input, output) => {
      expect(scalar(createFieldHandler('f', rule)).canonicalize(input)).toBe(output);
    },
  );

  it('gives constraint operators to Int, Float and Enum handlers only', () => {
    const withOperators = (rule: IdentifierRule) => scalar(createFieldHandler('f', rule)).parseConstraint !== undefined;
    expect(withOperators({ type: 'IntHandler', required: true })).toBe(true);
    expect(withOperators({ type: 'FloatHandler', required: true })).toBe(true);
    expect(withOperators({ type: 'EnumHandler', required: true, values: ['a'] })).toBe(true);
    expect(withOperators({ type: 'StringHandler', required: true })).toBe(false);
    expect(withOperators({ type: 'DateHandler', required: true })).toBe(false);
    expect(withOperators({ type: 'TimeHandler', required: true })).toBe(false);
    expect(withOperators({ type: 'ExpverHandler', required: true })).toBe(false);
  });

  it('builds the polygon handler', () => {
    const handler = createFieldHandler('polygon', { type: 'PolygonHandler', required: false });
    expect(handler.kind).toBe('polygon');
  });

  it('builds the point cloud handler with its max_points', () => {
    const handler = createFieldHandler('point_cloud', { type: 'PointCloudHandler', required: true, max_points: 1 });
    if (handler.kind !== 'point_cloud') throw new Error('expected a point cloud handler');
    expect(() => handler.parse([[], []])).toThrow("field 'point_cloud' point cloud contains 2 points, maximum is 1");
  });
});
