import { describe, expect, it } from 'vitest';
import type { StoredNotification } from '../../../src/backend/backend.js';
import { compileWatchFilter } from '../../../src/filter/watch-filter.js';
import { parseJsonBody } from '../../../src/json/lossless-parse.js';
import type { JsonObject } from '../../../src/json/json-value.js';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { StoredIdentityReader } from '../../../src/schema/stored-identifier.js';
import { checkSpatialShape, prepareWatch } from '../../../src/schema/watch-identifier.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';

const schemas = {
  ...(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>),
  reading: {
    topic: { base: 'reading', key_order: ['station'] },
    identifier: {
      station: { type: 'StringHandler', required: true },
      level: { type: 'IntHandler', required: false },
    },
  },
} as Record<string, EventSchemaSource>;
const registry = new SchemaRegistry(schemas, true);
const identities = new StoredIdentityReader(registry);

function filter(eventType: string, identifierJson: string) {
  const identifier = parseJsonBody(identifierJson) as JsonObject;
  return compileWatchFilter(
    prepareWatch(registry, 'watch', { event_type: eventType, identifier }, checkSpatialShape(identifier)),
    identities,
  );
}

let sequence = 0;
function stored(topic: string, identifier?: Record<string, unknown>, metadata: Record<string, string> = {}): StoredNotification {
  return {
    sequence: ++sequence,
    topic,
    payload: 'null',
    timestampNs: 0n,
    metadata: identifier ? { ...metadata, aviso_identifier: JSON.stringify(identifier) } : metadata,
  };
}

describe('compileWatchFilter', () => {
  it('applies a scalar filter on a field outside key_order using the stored identifier (D18)', () => {
    const matches = filter('reading', '{"station":"X","level":"3"}');
    expect(matches(stored('reading.X', { station: 'X', level: '3' }))).toBe(true);
    expect(matches(stored('reading.X', { station: 'X', level: '4' }))).toBe(false);
  });

  it('applies constraints on fields outside key_order too', () => {
    const matches = filter('reading', '{"station":"X","level":{"between":[2,4]}}');
    expect(matches(stored('reading.X', { station: 'X', level: '4' }))).toBe(true);
    expect(matches(stored('reading.X', { station: 'X', level: '5' }))).toBe(false);
  });

  it('rebuilds the identifier from the topic for notifications without the D7 header', () => {
    const matches = filter('extreme_event', '{"region":"north","run_time":"1200","severity":{"gte":5}}');
    expect(matches(stored('extreme_event.north.1200.6.1'))).toBe(true);
    expect(matches(stored('extreme_event.north.1200.4.1'))).toBe(false);
  });

  it('does not match a header-less notification on a field it cannot know', () => {
    const matches = filter('reading', '{"station":"X","level":"3"}');
    expect(matches(stored('reading.X'))).toBe(false);
  });

  it('requires the exact token count and values of the pattern', () => {
    const matches = filter('reading', '{"station":"X"}');
    expect(matches(stored('reading.Y', { station: 'Y' }))).toBe(false);
    expect(matches(stored('reading.X.extra', { station: 'X' }))).toBe(false);
  });

  it('combines the pattern with a spatial filter', () => {
    const matches = filter('test_polygon', '{"point":"0.5,0.5"}');
    const inside = stored(
      'polygon.20250706.1200',
      { date: '20250706', time: '1200', polygon: '(0,0,0,1,1,1,1,0,0,0)' },
      {
        spatial_bbox: '0,0,1,1',
        spatial_geometry: '(0,0,0,1,1,1,1,0,0,0)',
      },
    );
    const elsewhere = stored(
      'polygon.20250706.1200',
      { date: '20250706', time: '1200' },
      {
        spatial_bbox: '5,5,6,6',
        spatial_geometry: '(5,5,5,6,6,6,6,5,5,5)',
      },
    );
    expect(matches(inside)).toBe(true);
    expect(matches(elsewhere)).toBe(false);
  });
});
