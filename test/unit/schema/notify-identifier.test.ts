import { describe, expect, it } from 'vitest';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { prepareNotification } from '../../../src/schema/notify-identifier.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';
import { expectIdentifierError, jsonObject } from './identifier-error-assertions.js';

/** A schema that lists its polygon in key_order (accepted with a warning, D19). */
const SCHEMAS = {
  ...TEST_SCHEMAS,
  keyed_polygon: {
    topic: { base: 'keyed', key_order: ['polygon'] },
    identifier: { polygon: { type: 'PolygonHandler', required: true } },
  },
};
const registry = new SchemaRegistry(SCHEMAS as unknown as Record<string, EventSchemaSource>, false);
const prepare = (eventType: string, identifier: string) =>
  prepareNotification(registry, { event_type: eventType, identifier: jsonObject(identifier), payload: 'p' });

describe('prepareNotification: polygons (D7, D27)', () => {
  it.each([
    ['an array with float literals', '[[50.0,10],[52,10.0],[52,12],[50,12],[50.0,10]]'],
    ['a string holding JSON', '"[[50.0,10],[52,10.0],[52,12],[50,12],[50.0,10]]"'],
    ['the legacy text', '"(50.0,10,52,10.0,52,12,50,12,50.0,10)"'],
  ])('stores %s as the canonical array in the identifier header', (_name, polygon) => {
    const prepared = prepare('test_polygon', `{"date":"20250706","time":"1200","polygon":${polygon}}`);
    expect(prepared.metadata.aviso_identifier).toBe(
      '{"date":"20250706","polygon":[[50,10],[52,10],[52,12],[50,12],[50,10]],"time":"1200"}',
    );
    expect(prepared.metadata.spatial_bbox).toBe('50,10,52,12');
  });

  it('keeps the legacy text unchanged in spatial_geometry and writes an array as the equivalent text', () => {
    const text = ' ( 50.0,10 ,52,10,52,12,50,12,50.0,10 ) ';
    expect(prepare('test_polygon', `{"date":"20250706","time":"1200","polygon":"${text}"}`).metadata.spatial_geometry).toBe(text);
    expect(
      prepare('test_polygon', '{"date":"20250706","time":"1200","polygon":[[50.0,10],[52,10],[52,12],[50,12],[50.0,10]]}').metadata
        .spatial_geometry,
    ).toBe('(50,10,52,10,52,12,50,12,50,10)');
  });

  it('puts the spatial_geometry text in the topic when the polygon is listed in key_order', () => {
    expect(prepare('keyed_polygon', '{"polygon":"(0,0,0,1,1,1,0,0)"}').topic).toBe('keyed.(0,0,0,1,1,1,0,0)');
    expect(prepare('keyed_polygon', '{"polygon":[[0,0],[0,1],[1,1],[0,0]]}').topic).toBe('keyed.(0,0,0,1,1,1,0,0)');
  });

  it('reports an invalid array point with its index', () => {
    expectIdentifierError(
      () => prepare('test_polygon', '{"date":"20250706","time":"1200","polygon":[[0,0],[0,1],[1,1],[0,0,1]]}'),
      "field 'polygon' must be a valid polygon: polygon point 3 is invalid: coordinate must be a two-element array [lat,lon]",
    );
  });

  it('takes typed JSON numbers for Int and Float fields', () => {
    const prepared = prepare(
      'extreme_event',
      '{"region":"north","run_time":"12","severity":4,"anomaly":42.50,"polygon":[[0,0],[0,1],[1,1],[0,0]]}',
    );
    expect(prepared.topic).toBe('extreme_event.north.1200.4.42%2E5');
  });
});

describe('prepareNotification: unknown fields', () => {
  it('reports the first unknown name in code-point order, whatever the request order', () => {
    const identifier = '{"zeta":"1","date":"20250706","time":"1200","polygon":"(1,2,3,4,1,2)","\\u00e9t\\u00e9":"x","beta":"2"}';
    expectIdentifierError(() => prepare('test_polygon', identifier), "Unknown field 'beta' provided for notify operation");
  });
});
