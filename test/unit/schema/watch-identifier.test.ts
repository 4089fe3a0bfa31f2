import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../../src/json/lossless-parse.js';
import type { JsonObject } from '../../../src/json/json-value.js';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { IdentifierError } from '../../../src/schema/identifier-error.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { checkSpatialShape, prepareWatch } from '../../../src/schema/watch-identifier.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';

const registry = new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, false);

function prepare(eventType: string, identifierJson: string, endpoint: 'watch' | 'replay' = 'watch') {
  const identifier = parseJsonBody(identifierJson) as JsonObject;
  return prepareWatch(registry, endpoint, { event_type: eventType, identifier }, checkSpatialShape(identifier));
}

function failure(eventType: string, identifierJson: string, endpoint: 'watch' | 'replay' = 'watch'): string {
  try {
    prepare(eventType, identifierJson, endpoint);
  } catch (error) {
    if (error instanceof IdentifierError) return error.message;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('prepareWatch on schema-backed event types', () => {
  it('puts canonical values in key_order positions and wildcards elsewhere', () => {
    const selection = prepare('extreme_event', '{"region":"NORTH","run_time":"12","severity":4}');
    expect(selection.pattern.display).toBe('extreme_event.north.1200.4.*');
    expect(selection.fieldFilters).toEqual([
      { field: 'region', kind: 'exact', value: 'north' },
      { field: 'run_time', kind: 'exact', value: '1200' },
      { field: 'severity', kind: 'exact', value: '4' },
    ]);
  });

  it('treats a scalar "*" as any value (D18)', () => {
    const selection = prepare('extreme_event', '{"region":"*","run_time":"1200","severity":"*"}');
    expect(selection.pattern.display).toBe('extreme_event.*.1200.*.*');
    expect(selection.fieldFilters.map((f) => f.field)).toEqual(['run_time']);
  });

  it('opens the topic position of a constrained field and keeps the constraint', () => {
    const selection = prepare('extreme_event', '{"region":{"in":["north","South"]},"run_time":"12","severity":{"gte":5}}');
    expect(selection.pattern.display).toBe('extreme_event.*.1200.*.*');
    const severity = selection.fieldFilters.find((f) => f.field === 'severity');
    expect(severity?.kind === 'constraint' && severity.constraint.matches('6')).toBe(true);
    expect(severity?.kind === 'constraint' && severity.constraint.matches('4')).toBe(false);
  });

  it('reports unknown names before anything else, for the endpoint', () => {
    expect(failure('extreme_event', '{"colour":"red"}', 'replay')).toBe("Unknown field 'colour' provided for replay operation");
  });

  it('reports missing required fields in alphabetical order', () => {
    expect(failure('extreme_event', '{}')).toBe("Required field 'region' missing for watch operation");
    expect(failure('extreme_event', '{"region":"north","run_time":"1200"}')).toBe("Required field 'severity' missing for watch operation");
  });

  it('refuses constraint objects on handlers without operators', () => {
    expect(failure('extreme_event', '{"region":"north","run_time":{"eq":"1200"},"severity":"4"}')).toBe(
      "Field 'run_time' does not support constraint filters; expected scalar value",
    );
  });

  it('validates present values even of optional fields', () => {
    expect(failure('extreme_event', '{"region":"north","run_time":"1200","severity":"9"}')).toBe(
      "Field 'severity' value 9 is outside allowed range [1, 7]",
    );
  });

  it('lets a point stand in for a required polygon and keeps the polygon position open', () => {
    const selection = prepare('test_polygon', '{"time":"1200","point":"52.55,13.5"}');
    expect(selection.pattern.display).toBe('polygon.*.1200');
    expect(selection.spatial).toEqual({ kind: 'point_in_polygon', point: [52.55, 13.5] });
  });

  it('turns a polygon into an intersection filter', () => {
    const selection = prepare('test_polygon', '{"polygon":"(0,0,0,1,1,1,0,0)"}');
    expect(selection.spatial?.kind).toBe('polygon_intersects');
  });

  it('accepts the polygon as an array and as a string holding JSON (D27)', () => {
    for (const polygon of ['[[0,0],[0,1],[1,1],[0,0]]', '"[[0,0],[0,1],[1,1],[0,0]]"']) {
      const selection = prepare('test_polygon', `{"time":"1200","polygon":${polygon}}`);
      expect(selection.pattern.display).toBe('polygon.*.1200');
      expect(selection.spatial?.kind).toBe('polygon_intersects');
    }
  });

  it('accepts the point as an array and as a string holding JSON (D27)', () => {
    for (const point of ['[52.55,13.5]', '"[52.55,13.5]"']) {
      expect(prepare('test_polygon', `{"point":${point}}`).spatial).toEqual({ kind: 'point_in_polygon', point: [52.55, 13.5] });
    }
  });

  it('reports an invalid array polygon with the point index, on replay too', () => {
    expect(failure('test_polygon', '{"polygon":[[0,0],[0,1],[1,"1"],[0,0]]}', 'replay')).toBe(
      "field 'polygon' must be a valid polygon: polygon point 2 is invalid: longitude must be a number",
    );
    expect(failure('sensor_cloud', '{"date":"20250706","polygon":"[[0,0],[0,1]"}')).toBe(
      "field 'polygon' must be a valid polygon: polygon must be an array of [lat,lon] points or a compatible string",
    );
  });

  it('refuses point on a schema without a polygon field (D21)', () => {
    expect(failure('mars', '{"class":"od","point":"1,2"}')).toBe("Unknown field 'point' provided for watch operation");
  });

  it('accepts a polygon filter on a point-cloud schema, which satisfies the required point_cloud', () => {
    const selection = prepare('sensor_cloud', '{"date":"20250706","polygon":[[0,0],[0,1],[1,1],[0,0]]}');
    expect(selection.spatial?.kind).toBe('cloud_in_polygon');
    expect(failure('sensor_cloud', '{"date":"20250706"}')).toBe("Required field 'point_cloud' missing for watch operation");
  });

  it('refuses a point_cloud sent by a subscriber', () => {
    expect(failure('sensor_cloud', '{"date":"20250706","point_cloud":[[0,0]]}')).toBe(
      "Field 'point_cloud' cannot be used as a watch filter; select point clouds with identifier.polygon",
    );
  });
});

describe('checkSpatialShape', () => {
  it('refuses polygon and point together', () => {
    expect(() => checkSpatialShape({ polygon: '(0,0,0,1,1,1,0,0)', point: '1,2' })).toThrow(
      'Cannot specify both identifier.polygon and identifier.point. Provide only one spatial filter.',
    );
  });
});

describe('prepareWatch on generic event types', () => {
  it('uses the values of the sorted keys as tokens, with * as a wildcard', () => {
    const selection = prepare('scratch', '{"b":"*","a":"x.y"}');
    expect(selection.pattern.tokens).toEqual(['scratch', 'x.y', '*']);
    expect(selection.pattern.wire).toBe('scratch.x%2Ey.%2A');
  });

  it('takes spatial arrays as tokens too; they still filter geometrically, so nothing matches', () => {
    const polygon = prepare('scratch', '{"polygon":[[0,0],[0,1],[1,1],[0,0]]}');
    expect(polygon.pattern.tokens).toEqual(['scratch', '[[0,0],[0,1],[1,1],[0,0]]']);
    expect(polygon.spatial?.kind).toBe('polygon_intersects');
    const point = prepare('scratch', '{"point":[1,2]}');
    expect(point.pattern.tokens).toEqual(['scratch', '[1,2]']);
    expect(point.spatial).toEqual({ kind: 'point_in_polygon', point: [1, 2] });
  });

  it('refuses constraint objects without a schema', () => {
    expect(failure('scratch', '{"a":{"eq":1}}')).toBe("Field 'a' constraint object is not supported without schema");
  });

  it('refuses an event type that is a configured base', () => {
    expect(failure('diss', '{}')).toMatch(/^Event type 'diss' cannot be used without a schema/);
  });
});
