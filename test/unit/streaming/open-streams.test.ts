import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../../src/json/lossless-parse.js';
import type { JsonObject } from '../../../src/json/json-value.js';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { checkSpatialShape, prepareWatch } from '../../../src/schema/watch-identifier.js';
import { filterOf, thisProcessOnly, type OpenStreamDirectory } from '../../../src/streaming/open-streams.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';

/** What the admin streams list says of a stream's filter, and the memory backend's deployment (D49). */

const registry = new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, true);

function filter(eventType: string, identifierJson: string) {
  const identifier = parseJsonBody(identifierJson) as JsonObject;
  return filterOf(prepareWatch(registry, 'watch', { event_type: eventType, identifier }, checkSpatialShape(identifier)));
}

describe('filterOf', () => {
  it('lists the constrained fields with their canonical values, sorted, and leaves the open ones out', () => {
    expect(filter('mars', '{"stream":"enfo","class":"od","date":"2025-07-06","step":"*"}')).toEqual({
      class: 'od',
      date: '20250706',
      stream: 'enfo',
    });
    expect(Object.keys(filter('mars', '{"stream":"enfo","class":"od"}'))).toEqual(['class', 'stream']);
    expect(filter('mars', '{"class":"*"}')).toEqual({});
  });

  it('gives a constraint as its object and the spatial filters as arrays', () => {
    expect(filter('extreme_event', '{"severity":{"gte":4},"region":"north","run_time":"*"}')).toEqual({
      region: 'north',
      severity: { gte: 4 },
    });
    expect(filter('extreme_event', '{"point":[51,11],"region":"*","run_time":"*","severity":"*"}')).toEqual({ point: [51, 11] });
    expect(filter('test_polygon', '{"polygon":"(50,10,52,10,52,12,50,10)"}')).toEqual({
      polygon: [
        [50, 10],
        [52, 10],
        [52, 12],
        [50, 10],
      ],
    });
  });

  it('survives JSON across processes unchanged', () => {
    const value = filter('extreme_event', '{"severity":{"gte":4},"point":[51,11],"region":"*","run_time":"*"}');
    expect(JSON.parse(JSON.stringify(value))).toEqual(value);
  });
});

describe('thisProcessOnly', () => {
  const closed: [string, string | null][] = [];
  const directory: OpenStreamDirectory = {
    list: () => [],
    close: (id, closedBy) => {
      closed.push([id, closedBy]);
      return id === 'held';
    },
  };
  const deployment = thisProcessOnly(directory, 'host:42');

  it('answers for this process alone, which always answers', async () => {
    expect(await deployment.list()).toEqual({
      answered: [{ process: 'host:42', streams: [] }],
      notAnswering: [],
      clusterUnreachable: false,
    });
  });

  it('closes on this process, or finds nothing and names no process as not answering', async () => {
    expect(await deployment.close('held', 'admin')).toEqual({ closedOn: 'host:42' });
    expect(await deployment.close('other', null)).toEqual({ closedOn: undefined, notAnswering: [] });
    expect(closed).toEqual([
      ['held', 'admin'],
      ['other', null],
    ]);
  });
});
