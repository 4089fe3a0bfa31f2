import { describe, expect, it } from 'vitest';
import type { StoredNotification } from '../../../src/backend/backend.js';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { StoredIdentityReader } from '../../../src/schema/stored-identifier.js';
import { CloudEventRenderer } from '../../../src/streaming/cloudevent.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';

const schemas = TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>;

/** `test_polygon`'s base under another event type name, and `mars` gone. */
function renamed(): SchemaRegistry {
  const { mars: _mars, test_polygon, ...rest } = schemas;
  return new SchemaRegistry({ ...rest, area: test_polygon as EventSchemaSource }, true);
}

const stored: StoredNotification = {
  sequence: 4,
  topic: 'polygon.20250706.1200',
  payload: '{"note":"a"}',
  timestampNs: 1_700_000_000_000_000_000n,
  metadata: { spatial_geometry: '(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)' },
};

describe('SchemaRegistry.replaceWith (docs/design/rules/browser.md §5)', () => {
  it('answers from the new configuration afterwards, through the same object', () => {
    const registry = new SchemaRegistry(schemas, false);
    registry.replaceWith(renamed());
    expect(registry.eventTypes).toEqual(['area', 'dissemination', 'extreme_event', 'sensor_cloud']);
    expect(registry.get('mars')).toBeUndefined();
    expect(registry.forBase('polygon')?.eventType).toBe('area');
    expect(registry.strictMode).toBe(true);
    expect(registry.rejectsEventType('mars')).toBe(true);
    expect(registry.configured).toBe(true);
  });

  it('makes the identity reader and the CloudEvent renderer drop what they cached under the old schemas', () => {
    const registry = new SchemaRegistry(schemas, false);
    const identities = new StoredIdentityReader(registry);
    const renderer = new CloudEventRenderer(identities, 'http://localhost:8000');
    expect(identities.read(stored)?.eventType).toBe('test_polygon');
    expect(JSON.parse(renderer.render(stored)).type).toBe('int.ecmwf.aviso.test_polygon');
    expect(renderer.frameBytes(stored, 'replay').toString()).toContain('"id":"test_polygon@4"');

    registry.replaceWith(renamed());
    expect(identities.read(stored)?.eventType).toBe('area');
    expect(JSON.parse(renderer.render(stored)).type).toBe('int.ecmwf.aviso.area');
    expect(renderer.frameBytes(stored, 'replay').toString()).toContain('"id":"area@4"');
  });
});
