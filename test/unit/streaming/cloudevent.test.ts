import { CloudEvent } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import type { StoredNotification } from '../../../src/backend/backend.js';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { StoredIdentityReader } from '../../../src/schema/stored-identifier.js';
import { CloudEventRenderError, CloudEventRenderer } from '../../../src/streaming/cloudevent.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';

const registry = new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, false);
const renderer = (baseUrl = 'http://localhost:8000') => new CloudEventRenderer(new StoredIdentityReader(registry), baseUrl);
const at = BigInt(Date.UTC(2026, 2, 1, 11, 58, 1, 207)) * 1_000_000n;

function notification(overrides: Partial<StoredNotification>): StoredNotification {
  return { sequence: 3, topic: 'polygon.20250706.1200', payload: '{"note":"a"}', timestampNs: at, ...overrides };
}

describe('CloudEventRenderer', () => {
  it('renders CE(3) of docs/design/rules/streaming.md §15 byte for byte from a reference-written message, the polygon as the array (D27)', () => {
    const polygon = '(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)';
    const json = renderer().render(notification({ metadata: { spatial_bbox: '50,10,52,12', spatial_geometry: polygon } }));
    expect(json).toBe(
      '{"data":{"identifier":{"date":"20250706","polygon":[[50,10],[52,10],[52,12],[50,12],[50,10]],"time":"1200"},"payload":{"note":"a"}},' +
        '"datacontenttype":"application/json","dataschema":"http://localhost:8000/schema/test_polygon",' +
        '"id":"test_polygon@3","source":"http://localhost:8000","specversion":"1.0","time":"2026-03-01T11:58:01.207Z",' +
        '"type":"int.ecmwf.aviso.test_polygon"}',
    );
  });

  it('produces a valid CloudEvents 1.0 event', () => {
    const parsed = JSON.parse(renderer().render(notification({}))) as Record<string, unknown>;
    expect(() => new CloudEvent(parsed, true)).not.toThrow();
  });

  it('uses the D7 header, so fields outside key_order are delivered', () => {
    const json = renderer().render(
      notification({ metadata: { aviso_identifier: '{"date":"20250706","time":"1200","polygon":[[0,0],[0,1],[1,1],[0,0]]}' } }),
    );
    expect(JSON.parse(json).data.identifier).toEqual({
      date: '20250706',
      time: '1200',
      polygon: [
        [0, 0],
        [0, 1],
        [1, 1],
        [0, 0],
      ],
    });
  });

  describe('polygon output (D27)', () => {
    const CANONICAL = [
      [50, 10],
      [52, 10],
      [52, 12],
      [50, 12],
      [50, 10],
    ];
    const identifierOf = (metadata: Record<string, string>, topic?: string) =>
      JSON.parse(renderer().render(notification({ metadata, ...(topic === undefined ? {} : { topic }) }))).data.identifier;

    it('renders the array notify stores in the identifier header', () => {
      const header = '{"date":"20250706","polygon":[[50,10],[52,10],[52,12],[50,12],[50,10]],"time":"1200"}';
      expect(renderer().render(notification({ metadata: { aviso_identifier: header } }))).toContain(`"identifier":${header}`);
    });

    it('renders an older header holding the legacy text as the array', () => {
      const header = '{"date":"20250706","polygon":" ( 50.0, 10 ,52,10,52,12,50,12,50,10 ) ","time":"1200"}';
      expect(identifierOf({ aviso_identifier: header }).polygon).toEqual(CANONICAL);
    });

    it('renders an older header holding the producer array with 50.0 literals canonically', () => {
      const header = '{"date":"20250706","polygon":[[50.0,10.0],[52.0,10],[52,12],[50,12],[50.0,10.0]],"time":"1200"}';
      const json = renderer().render(notification({ metadata: { aviso_identifier: header } }));
      expect(json).toContain('"polygon":[[50,10],[52,10],[52,12],[50,12],[50,10]]');
    });

    it('renders a reference-written ring of 3 pairs, which the reference 0.7.1 accepted, as the array', () => {
      expect(identifierOf({ spatial_geometry: '((0,0,0,1,0,0))' }).polygon).toEqual([
        [0, 0],
        [0, 1],
        [0, 0],
      ]);
    });

    it('renders a spatial_geometry holding a JSON array as the canonical array', () => {
      expect(identifierOf({ spatial_geometry: '[[50.0,10],[52,10],[52,12],[50,12],[50,10]]' }).polygon).toEqual(CANONICAL);
    });

    it('keeps text no reading understands as text rather than failing the delivery', () => {
      expect(identifierOf({ spatial_geometry: 'garbled' }).polygon).toBe('garbled');
    });

    it("keeps a schema-less event type's polygon value a string", () => {
      const generic = renderer().render(
        notification({ topic: 'adhoc.x', metadata: { aviso_identifier: '{"polygon":"(0,0,0,1,1,1,0,0)"}' } }),
      );
      expect(JSON.parse(generic).data.identifier).toEqual({ polygon: '(0,0,0,1,1,1,0,0)' });
    });

    it('leaves other identifier values strings', () => {
      const header = '{"date":"20250706","polygon":"(50,10,52,10,52,12,50,12,50,10)","time":"1200"}';
      expect(identifierOf({ aviso_identifier: header })).toEqual({ date: '20250706', polygon: CANONICAL, time: '1200' });
    });
  });

  it('re-attaches a point cloud from its header', () => {
    const json = renderer().render(
      notification({
        topic: 'sensor_cloud.20250706',
        metadata: { aviso_identifier: '{"date":"20250706"}', spatial_point_cloud: '[[52.52,13.4],[48.14,11.58]]' },
      }),
    );
    expect(JSON.parse(json).data.identifier).toEqual({
      date: '20250706',
      point_cloud: [
        [52.52, 13.4],
        [48.14, 11.58],
      ],
    });
  });

  it.each([
    ['', 'null'],
    ['null', 'null'],
    ['"text"', '"text"'],
    ['42', '42'],
    ['{"b":1,"a":12345678901234567890}', '{"a":12345678901234567890,"b":1}'],
    ['legacy text', '"legacy text"'],
  ])('renders stored payload %j as %s', (stored, rendered) => {
    expect(renderer().render(notification({ payload: stored }))).toContain(`"payload":${rendered}}`);
  });

  it('names a schema-less event type after its topic base (O7)', () => {
    const json = renderer().render(notification({ topic: 'scratch.x', metadata: { aviso_identifier: '{"a":"x"}' } }));
    expect(JSON.parse(json)).toMatchObject({ id: 'scratch@3', type: 'int.ecmwf.aviso.scratch', data: { identifier: { a: 'x' } } });
  });

  it('fails for a base_url that does not form a URL, and caches the verdict', () => {
    const broken = renderer('not a url');
    const stored = notification({});
    expect(() => broken.render(stored)).toThrow(CloudEventRenderError);
    expect(() => broken.render(stored)).toThrow(/base_url/);
  });

  it('gives a replay its unshared frame with the same bytes as the cached frame, and fails the same way', () => {
    const header = '{"date":"20250706","time":"1200"}';
    const fresh = () => notification({ metadata: { aviso_identifier: header } });
    const cached = renderer().frameBytes(fresh(), 'replay');
    expect(renderer().unsharedFrameBytes(fresh(), 'replay').equals(cached)).toBe(true);
    const one = renderer();
    const stored = fresh();
    expect(one.frameBytes(stored, 'live-notification').equals(one.unsharedFrameBytes(stored, 'live-notification'))).toBe(true);
    const broken = renderer('not a url');
    expect(() => broken.unsharedFrameBytes(fresh(), 'replay')).toThrow(CloudEventRenderError);
    const failed = fresh();
    expect(() => broken.render(failed)).toThrow(/base_url/);
    expect(() => broken.unsharedFrameBytes(failed, 'replay')).toThrow(/base_url/);
  });

  it('reads an unshared notification once inside `unshared` and caches nothing beyond it', () => {
    const identities = new StoredIdentityReader(registry);
    const stored = notification({ metadata: { aviso_identifier: '{"date":"20250706","time":"1200"}' } });
    const [first, second] = identities.unshared((n) => [identities.read(n), identities.read(n)], stored);
    expect(first).toBeDefined();
    expect(second).toBe(first);
    const outside = identities.read(stored);
    expect(outside).not.toBe(first); // computed again: nothing was cached
    expect(outside).toEqual(first);
    expect(identities.read(stored)).toBe(outside); // outside `unshared`, reads are cached as before
    expect(identities.unshared((n) => identities.read(n), stored)).toBe(outside);
  });

  it('prints the storage time with only the precision it has', () => {
    const whole = BigInt(Date.UTC(2026, 2, 1, 11, 58, 1)) * 1_000_000n;
    expect(JSON.parse(renderer().render(notification({ timestampNs: whole }))).time).toBe('2026-03-01T11:58:01Z');
    expect(JSON.parse(renderer().render(notification({ timestampNs: whole + 710_810_413n }))).time).toBe('2026-03-01T11:58:01.710810413Z');
  });
});
