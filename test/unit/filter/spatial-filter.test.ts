import { booleanIntersects } from '@turf/boolean-intersects';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { METADATA_KEYS, type StoredNotification } from '../../../src/backend/backend.js';
import type { LatLon } from '../../../src/schema/handlers/field-handler.js';
import { toPlanarPolygon } from '../../../src/filter/candidate-geometry.js';
import { compileSpatialFilter, type SpatialPredicate } from '../../../src/filter/spatial-filter.js';
import { notification, polygon, rectangleText, storedCloud, storedPolygon } from './spatial-fixtures.js';

const BBOX = METADATA_KEYS.spatialBbox;
const GEOMETRY = METADATA_KEYS.spatialGeometry;
const CLOUD = METADATA_KEYS.spatialPointCloud;

const intersects = (text: string): SpatialPredicate => compileSpatialFilter({ kind: 'polygon_intersects', polygon: polygon(text) });
const containsPoint = (point: LatLon): SpatialPredicate => compileSpatialFilter({ kind: 'point_in_polygon', point });
const cloudIn = (text: string): SpatialPredicate => compileSpatialFilter({ kind: 'cloud_in_polygon', polygon: polygon(text) });

/** The square lat 0..2, lon 0..2 used by most cases. */
const SQUARE = rectangleText(0, 0, 2, 2);

describe('polygon_intersects (docs/design/rules/schema-and-validation.md §9.2)', () => {
  const stored = storedPolygon(SQUARE);

  it('matches overlapping polygons', () => {
    expect(intersects(rectangleText(1, 1, 3, 3))(stored)).toBe(true);
  });

  it('does not match a polygon far away', () => {
    expect(intersects(rectangleText(10, 10, 11, 11))(stored)).toBe(false);
  });

  it('matches polygons that share an edge', () => {
    expect(intersects(rectangleText(0, 2, 2, 4))(stored)).toBe(true);
  });

  it('matches polygons that share a single vertex', () => {
    expect(intersects(rectangleText(2, 2, 4, 4))(stored)).toBe(true);
  });

  it('matches a polygon whose vertex touches the middle of an edge', () => {
    expect(intersects('(1,2,0,4,2,4,1,2)')(stored)).toBe(true);
  });

  it('matches a request polygon inside the stored polygon', () => {
    expect(intersects(rectangleText(0.5, 0.5, 1, 1))(stored)).toBe(true);
  });

  it('matches a stored polygon inside the request polygon', () => {
    expect(intersects(rectangleText(-1, -1, 3, 3))(stored)).toBe(true);
  });

  it('matches polygons whose edges cross with no vertex inside the other', () => {
    const tall = storedPolygon(rectangleText(0, 1, 3, 2));
    expect(intersects(rectangleText(1, 0, 2, 3))(tall)).toBe(true);
  });

  it('does not match disjoint polygons whose bounding boxes overlap', () => {
    const lowerTriangle = storedPolygon('(0,0,0,1.5,1.5,0,0,0)');
    expect(intersects('(2,2,2,0.5,0.5,2,2,2)')(lowerTriangle)).toBe(false);
  });

  it('treats the ring latitude first', () => {
    // lat 0..1, lon 10..20: read the other way round it would overlap lat 10..20, lon 0..1.
    const wide = storedPolygon(rectangleText(0, 10, 1, 20));
    expect(intersects(rectangleText(0, 15, 1, 16))(wide)).toBe(true);
    expect(intersects(rectangleText(15, 0, 16, 1))(wide)).toBe(false);
  });

  it('rejects a candidate whose stored box misses the request box, whatever its polygon', () => {
    const lying = notification({ [BBOX]: '10,10,11,11', [GEOMETRY]: SQUARE });
    expect(intersects(rectangleText(1, 1, 3, 3))(lying)).toBe(false);
  });

  it('rejects a candidate without spatial_bbox even when its polygon intersects', () => {
    expect(intersects(rectangleText(1, 1, 3, 3))(notification({ [GEOMETRY]: SQUARE }))).toBe(false);
  });

  it.each(['', 'garbage', '0,0,2', '0,0,2,2,4', 'a,0,2,2', '0;0;2;2', 'NaN,0,2,2'])(
    'rejects a candidate whose spatial_bbox is %j',
    (bbox) => {
      const candidate = notification({ [BBOX]: bbox, [GEOMETRY]: SQUARE });
      expect(intersects(rectangleText(1, 1, 3, 3))(candidate)).toBe(false);
    },
  );

  it('reads a spatial_bbox with spaces around its numbers', () => {
    const candidate = notification({ [BBOX]: ' 0 , 0 ,2 ,2 ', [GEOMETRY]: SQUARE });
    expect(intersects(rectangleText(1, 1, 3, 3))(candidate)).toBe(true);
  });

  it('rejects a candidate with a box but no polygon', () => {
    expect(intersects(rectangleText(1, 1, 3, 3))(notification({ [BBOX]: '0,0,2,2' }))).toBe(false);
  });

  it('reads a spatial_geometry written as a JSON array, as PolygonHandler reads such a string (D27)', () => {
    const candidate = notification({ [BBOX]: '0,0,2,2', [GEOMETRY]: '[[0,0],[0,2],[2,2],[0,0]]' });
    expect(intersects(rectangleText(1, 1, 3, 3))(candidate)).toBe(true);
  });

  it.each(['', '(0,0,0,2,2,2', '(0,0,0,2,2,2,0,0)x', '(0,0,0,2,2,2,2,0)', '(0,0,1,1,0,0)', '[[0,0],[0,2],[2,2]]', '[[0,0],'])(
    'rejects a candidate whose spatial_geometry is %j and whose payload has none',
    (geometry) => {
      const candidate = notification({ [BBOX]: '0,0,2,2', [GEOMETRY]: geometry });
      expect(intersects(rectangleText(1, 1, 3, 3))(candidate)).toBe(false);
    },
  );

  it('never matches a point-cloud notification', () => {
    expect(intersects(SQUARE)(storedCloud([[1, 1]]))).toBe(false);
  });
});

describe('point_in_polygon (docs/design/rules/schema-and-validation.md §9.3)', () => {
  const reference = storedPolygon('(52.5,13.4,52.6,13.5,52.5,13.6,52.4,13.5,52.5,13.4)');

  it('matches the reference example point inside the stored polygon', () => {
    expect(containsPoint([52.55, 13.5])(reference)).toBe(true);
  });

  it('does not match the reference example point 0,0', () => {
    expect(containsPoint([0, 0])(reference)).toBe(false);
  });

  it('does not match the reference example polygon far away', () => {
    const far = storedPolygon('(10.0,10.0,10.2,10.0,10.2,10.2,10.0,10.2,10.0,10.0)');
    expect(containsPoint([52.55, 13.5])(far)).toBe(false);
  });

  it('does not match a point on an edge', () => {
    expect(containsPoint([0, 1])(storedPolygon(SQUARE))).toBe(false);
  });

  it('does not match a point on a vertex', () => {
    expect(containsPoint([2, 2])(storedPolygon(SQUARE))).toBe(false);
  });

  it('does not match a point in the notch of a concave polygon', () => {
    const ell = storedPolygon('(0,0,0,2,1,2,1,1,2,1,2,0,0,0)');
    expect(containsPoint([1.5, 1.5])(ell)).toBe(false);
    expect(containsPoint([0.5, 1.5])(ell)).toBe(true);
  });

  it('treats the point latitude first', () => {
    const wide = storedPolygon(rectangleText(0, 10, 1, 20));
    expect(containsPoint([0.5, 15])(wide)).toBe(true);
    expect(containsPoint([15, 0.5])(wide)).toBe(false);
  });

  it('rejects a point inside the polygon but outside the stored box', () => {
    const lying = notification({ [BBOX]: '5,5,6,6', [GEOMETRY]: SQUARE });
    expect(containsPoint([1, 1])(lying)).toBe(false);
  });

  it('accepts a point on the stored box boundary (bounds inclusive)', () => {
    const smallBox = notification({ [BBOX]: '0,0,1,1', [GEOMETRY]: SQUARE });
    expect(containsPoint([1, 1])(smallBox)).toBe(true);
  });

  it('skips the box check when there is no spatial_bbox', () => {
    expect(containsPoint([1, 1])(notification({ [GEOMETRY]: SQUARE }))).toBe(true);
  });

  it('skips the box check when spatial_bbox cannot be read', () => {
    expect(containsPoint([1, 1])(notification({ [BBOX]: 'not,a,box', [GEOMETRY]: SQUARE }))).toBe(true);
  });

  it('rejects everything when the stored box has a NaN bound', () => {
    expect(containsPoint([1, 1])(notification({ [BBOX]: 'NaN,0,2,2', [GEOMETRY]: SQUARE }))).toBe(false);
  });

  it('rejects a candidate without a polygon', () => {
    expect(containsPoint([1, 1])(notification({ [BBOX]: '0,0,2,2' }))).toBe(false);
    expect(containsPoint([1, 1])(notification())).toBe(false);
  });

  it('rejects a candidate whose polygon cannot be read', () => {
    expect(containsPoint([1, 1])(notification({ [BBOX]: '0,0,2,2', [GEOMETRY]: '(0,0,0,2,2,2)' }))).toBe(false);
  });

  it('never matches a point-cloud notification', () => {
    expect(containsPoint([1, 1])(storedCloud([[1, 1]]))).toBe(false);
  });
});

describe('legacy payload polygon (docs/design/rules/schema-and-validation.md §9.2 step 3)', () => {
  const withPayload = (payload: unknown, metadata: Record<string, string> = { [BBOX]: '0,0,2,2' }): StoredNotification =>
    notification(metadata, typeof payload === 'string' ? payload : JSON.stringify(payload));
  const request = intersects(rectangleText(1, 1, 3, 3));

  it('reads polygon text from the payload', () => {
    expect(request(withPayload({ spatial_geometry: SQUARE }))).toBe(true);
  });

  it('reads a GeoJSON-style polygon with latitude-first pairs and closes the ring', () => {
    const payload = {
      spatial_geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [0, 10],
            [0, 12],
            [2, 12],
          ],
        ],
      },
    };
    const candidate = withPayload(payload, {});
    expect(containsPoint([0.5, 11.5])(candidate)).toBe(true);
    expect(containsPoint([11.5, 0.5])(candidate)).toBe(false);
  });

  it('reads a GeoJSON-style polygon that is already closed', () => {
    const ring = [
      [0, 0],
      [0, 2],
      [2, 2],
      [2, 0],
      [0, 0],
    ];
    expect(request(withPayload({ spatial_geometry: { type: 'Polygon', coordinates: [ring] } }))).toBe(true);
  });

  it('skips GeoJSON pairs that are not numbers', () => {
    const ring = [[0, 0], ['x', 1], [0, 2], null, [2, 2], [2, 0]];
    expect(request(withPayload({ spatial_geometry: { type: 'Polygon', coordinates: [ring] } }))).toBe(true);
  });

  it.each([
    [
      'another geometry type',
      {
        type: 'MultiPolygon',
        coordinates: [
          [
            [0, 0],
            [0, 2],
            [2, 2],
          ],
        ],
      },
    ],
    [
      'fewer than 3 usable pairs',
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [0, 2],
            ['a', 2],
          ],
        ],
      },
    ],
    [
      'three pairs that close on themselves',
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [2, 2],
            [0, 0],
          ],
        ],
      },
    ],
    ['no coordinates', { type: 'Polygon' }],
    ['an empty ring list', { type: 'Polygon', coordinates: [] }],
    ['a number', 5],
    ['invalid polygon text', '(0,0,0,2,2,2)'],
  ])('finds no polygon in a payload member with %s', (_case, geometry) => {
    expect(request(withPayload({ spatial_geometry: geometry }))).toBe(false);
  });

  it.each(['not json', '[1,2]', 'null', '"(0,0,0,2,2,2,2,0,0,0)"', '{"other":1}', ''])('finds no polygon in the payload %j', (payload) => {
    expect(request(withPayload(payload))).toBe(false);
  });

  it('falls back to the payload when spatial_geometry cannot be read', () => {
    const metadata = { [BBOX]: '0,0,2,2', [GEOMETRY]: '(garbled' };
    expect(request(withPayload({ spatial_geometry: SQUARE }, metadata))).toBe(true);
  });

  it('prefers spatial_geometry over the payload', () => {
    const metadata = { [BBOX]: '0,0,2,2', [GEOMETRY]: rectangleText(5, 5, 6, 6) };
    expect(request(withPayload({ spatial_geometry: SQUARE }, metadata))).toBe(false);
  });
});

describe('cloud_in_polygon (docs/design/rules/schema-and-validation.md §9.4)', () => {
  const request = cloudIn(SQUARE);

  it('matches when a later point is inside', () => {
    expect(
      request(
        storedCloud([
          [5, 5],
          [1, 1],
        ]),
      ),
    ).toBe(true);
  });

  it('matches a point on an edge', () => {
    expect(request(storedCloud([[0, 1]]))).toBe(true);
  });

  it('matches a point on a vertex, with boxes touching at that corner', () => {
    expect(
      request(
        storedCloud([
          [2, 2],
          [3, 3],
        ]),
      ),
    ).toBe(true);
  });

  it('does not match when every point is outside, even with overlapping boxes', () => {
    expect(
      request(
        storedCloud([
          [3, 3],
          [-1, 1],
          [1, 3],
        ]),
      ),
    ).toBe(false);
  });

  it('does not match a point in the notch of a concave request polygon', () => {
    expect(cloudIn('(0,0,0,2,1,2,1,1,2,1,2,0,0,0)')(storedCloud([[1.5, 1.5]]))).toBe(false);
  });

  it('treats cloud points latitude first', () => {
    const wide = cloudIn(rectangleText(0, 10, 1, 20));
    expect(wide(storedCloud([[0.5, 15]]))).toBe(true);
    expect(wide(storedCloud([[15, 0.5]]))).toBe(false);
  });

  it('rejects a cloud whose stored box misses the request box, whatever its points', () => {
    expect(request(notification({ [BBOX]: '10,10,11,11', [CLOUD]: '[[1,1]]' }))).toBe(false);
  });

  it('rejects a cloud without a readable stored box', () => {
    expect(request(notification({ [CLOUD]: '[[1,1]]' }))).toBe(false);
    expect(request(notification({ [BBOX]: '1,1', [CLOUD]: '[[1,1]]' }))).toBe(false);
  });

  it.each(['', '[[1,1]', '[]', '{}', '[[1,"1"]]', '[[1,1],[1]]', '[[91,1]]', '[1,1]'])('rejects a spatial_point_cloud of %j', (cloud) => {
    expect(request(notification({ [BBOX]: '0,0,2,2', [CLOUD]: cloud }))).toBe(false);
  });

  it('rejects a notification without a cloud', () => {
    expect(request(notification({ [BBOX]: '0,0,2,2' }))).toBe(false);
  });

  it('never matches a polygon notification', () => {
    expect(request(storedPolygon(SQUARE))).toBe(false);
  });
});

describe('per-notification geometry cache', () => {
  /** A notification that counts how often each header and the payload are read. */
  function countingNotification(metadata: Record<string, string>, payload: string) {
    const headerReads = new Map<string, number>();
    let payloadReads = 0;
    const counted = new Proxy(metadata, {
      get(target, key, receiver) {
        if (typeof key === 'string') headerReads.set(key, (headerReads.get(key) ?? 0) + 1);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const candidate: StoredNotification = {
      sequence: 1,
      topic: 'polygon.test',
      timestampNs: 0n,
      metadata: counted,
      get payload() {
        payloadReads += 1;
        return payload;
      },
    };
    return { candidate, headerReads, payloadReads: () => payloadReads };
  }

  it('reads a notification geometry once for many watchers', () => {
    const { candidate, headerReads } = countingNotification({ [BBOX]: '0,0,2,2', [GEOMETRY]: SQUARE }, 'null');
    const watchers = Array.from({ length: 50 }, (_, i) =>
      i % 2 === 0 ? intersects(rectangleText(1, 1, 3 + i, 3 + i)) : containsPoint([1, 1 + i / 100]),
    );
    for (const watcher of watchers) expect(watcher(candidate)).toBe(true);
    expect(headerReads.get(BBOX)).toBe(1);
    expect(headerReads.get(GEOMETRY)).toBe(1);
  });

  it('parses the legacy payload once for many watchers', () => {
    const { candidate, headerReads, payloadReads } = countingNotification(
      { [BBOX]: '0,0,2,2' },
      JSON.stringify({ spatial_geometry: SQUARE }),
    );
    for (let i = 0; i < 20; i++) expect(containsPoint([1, 1])(candidate)).toBe(true);
    expect(payloadReads()).toBe(1);
    expect(headerReads.get(GEOMETRY)).toBe(1);
  });

  it('reads a point cloud once and never reads the payload for it', () => {
    const { candidate, headerReads, payloadReads } = countingNotification({ [BBOX]: '1,1,5,5', [CLOUD]: '[[5,5],[1,1]]' }, 'null');
    for (let i = 0; i < 20; i++) expect(cloudIn(rectangleText(0, 0, 2 + i, 2 + i))(candidate)).toBe(true);
    expect(headerReads.get(CLOUD)).toBe(1);
    expect(headerReads.get(BBOX)).toBe(1);
    expect(payloadReads()).toBe(0);
  });

  it('keeps each notification object its own geometry', () => {
    const watcher = containsPoint([1, 1]);
    expect(watcher(storedPolygon(SQUARE))).toBe(true);
    expect(watcher(storedPolygon(rectangleText(5, 5, 6, 6)))).toBe(false);
    expect(watcher(storedPolygon(SQUARE))).toBe(true);
  });
});

describe('rectangles (property)', () => {
  const coordinate = fc.integer({ min: -6, max: 6 });
  const interval = fc
    .tuple(coordinate, coordinate)
    .filter(([a, b]) => a !== b)
    .map(([a, b]): [number, number] => [Math.min(a, b), Math.max(a, b)]);
  const rectangle = fc.record({ lat: interval, lon: interval });
  type Rectangle = { lat: [number, number]; lon: [number, number] };
  const text = (r: Rectangle): string => rectangleText(r.lat[0], r.lon[0], r.lat[1], r.lon[1]);
  const closedOverlap = (a: [number, number], b: [number, number]): boolean => a[0] <= b[1] && b[0] <= a[1];

  it('polygon_intersects is closed-rectangle overlap', () => {
    fc.assert(
      fc.property(rectangle, rectangle, (stored, request) => {
        const expected = closedOverlap(stored.lat, request.lat) && closedOverlap(stored.lon, request.lon);
        expect(intersects(text(request))(storedPolygon(text(stored)))).toBe(expected);
      }),
    );
  });

  it('point_in_polygon is strict containment', () => {
    fc.assert(
      fc.property(rectangle, coordinate, coordinate, (stored, lat, lon) => {
        const expected = lat > stored.lat[0] && lat < stored.lat[1] && lon > stored.lon[0] && lon < stored.lon[1];
        expect(containsPoint([lat, lon])(storedPolygon(text(stored)))).toBe(expected);
      }),
    );
  });

  it('cloud_in_polygon is inclusive containment of any point', () => {
    const point = fc.tuple(coordinate, coordinate);
    fc.assert(
      fc.property(rectangle, fc.array(point, { minLength: 1, maxLength: 4 }), (request, points) => {
        const inside = ([lat, lon]: [number, number]): boolean =>
          lat >= request.lat[0] && lat <= request.lat[1] && lon >= request.lon[0] && lon <= request.lon[1];
        expect(cloudIn(text(request))(storedCloud(points))).toBe(points.some(inside));
      }),
    );
  });
});

describe('polygon_intersects agrees with turf on star-shaped polygons (property)', () => {
  // Star-shaped rings (a radius per angle step) are simple but often concave, so edges can cross
  // with no vertex of either polygon inside the other: the case the vertex shortcut cannot answer.
  const star = fc.record({
    lat: fc.integer({ min: -4, max: 4 }),
    lon: fc.integer({ min: -4, max: 4 }),
    radii: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 3, maxLength: 9 }),
  });
  const ringOf = (s: { lat: number; lon: number; radii: number[] }): LatLon[] => {
    const ring = s.radii.map((radius, k): LatLon => {
      const angle = (2 * Math.PI * k) / s.radii.length;
      return [s.lat + radius * Math.sin(angle), s.lon + radius * Math.cos(angle)];
    });
    return [...ring, ring[0] as LatLon];
  };
  const textOf = (ring: readonly LatLon[]): string => `(${ring.map(([lat, lon]) => `${lat},${lon}`).join(',')})`;

  it('matches exactly when turf booleanIntersects says the polygons share a point', () => {
    fc.assert(
      fc.property(star, star, (stored, request) => {
        const storedRing = ringOf(stored);
        const requestRing = ringOf(request);
        const expected = booleanIntersects(toPlanarPolygon(storedRing), toPlanarPolygon(requestRing));
        expect(intersects(textOf(requestRing))(storedPolygon(textOf(storedRing)))).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});
