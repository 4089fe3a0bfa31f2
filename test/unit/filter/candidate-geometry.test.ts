import { describe, expect, it } from 'vitest';
import { METADATA_KEYS } from '../../../src/backend/backend.js';
import {
  candidateGeometryOf,
  readBoundingBox,
  readLegacyPayloadPolygon,
  readPointCloud,
  toPlanarPolygon,
} from '../../../src/filter/candidate-geometry.js';
import { notification } from './spatial-fixtures.js';

describe('readBoundingBox', () => {
  it('reads min_lat,min_lon,max_lat,max_lon', () => {
    expect(readBoundingBox('52.4,13.4,52.6,13.6')).toEqual([52.4, 13.4, 52.6, 13.6]);
  });

  it('trims each part with Rust whitespace rules', () => {
    expect(readBoundingBox(' 0 ,\t0,\u00a01 ,1\n')).toEqual([0, 0, 1, 1]);
  });

  it('reads the Rust float syntax, exponents and infinities included', () => {
    expect(readBoundingBox('1e1,-2,20.,+5')).toEqual([10, -2, 20, 5]);
    expect(readBoundingBox('-inf,-inf,inf,inf')).toEqual([-Infinity, -Infinity, Infinity, Infinity]);
  });

  it('orders the corners', () => {
    expect(readBoundingBox('3,4,1,2')).toEqual([1, 2, 3, 4]);
  });

  it.each([undefined, '', '1,2,3', '1,2,3,4,5', 'a,2,3,4', '1,,3,4', '0x1,2,3,4', '1 2,3,4,5'])('reads %j as no box', (text) => {
    expect(readBoundingBox(text)).toBeUndefined();
  });
});

describe('readLegacyPayloadPolygon', () => {
  it('converts latitude-first GeoJSON-style pairs to (lon, lat) and closes the ring', () => {
    const payload = JSON.stringify({
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
    });
    expect(readLegacyPayloadPolygon(payload)?.geometry.coordinates).toEqual([
      [
        [10, 0],
        [12, 0],
        [12, 2],
        [10, 0],
      ],
    ]);
  });

  it('ignores elements after the first two of a pair and checks no ranges', () => {
    const payload = '{"spatial_geometry":{"type":"Polygon","coordinates":[[[0,200,9],[0,202],[95,202]]]}}';
    expect(readLegacyPayloadPolygon(payload)?.geometry.coordinates[0]?.[0]).toEqual([200, 0]);
  });

  it('reads polygon text', () => {
    const payload = JSON.stringify({ spatial_geometry: '(0,0,0,2,2,2,0,0)' });
    expect(readLegacyPayloadPolygon(payload)?.geometry.coordinates[0]).toHaveLength(4);
  });
});

describe('readPointCloud', () => {
  it('keeps the stored order, as (lon, lat)', () => {
    expect(readPointCloud('[[52.5,13.4],[48.1,11.6],[52.5,13.4]]')).toEqual([
      [13.4, 52.5],
      [11.6, 48.1],
      [13.4, 52.5],
    ]);
  });
});

describe('toPlanarPolygon', () => {
  it('swaps to (lon, lat) and records the bbox in that order', () => {
    const polygon = toPlanarPolygon([
      [0, 10],
      [0, 12],
      [2, 12],
      [0, 10],
    ]);
    expect(polygon.geometry.coordinates[0]?.[2]).toEqual([12, 2]);
    expect(polygon.bbox).toEqual([10, 0, 12, 2]);
  });
});

describe('candidateGeometryOf', () => {
  it('returns the same geometry for the same notification object', () => {
    const stored = notification({ [METADATA_KEYS.spatialBbox]: '0,0,1,1' });
    expect(candidateGeometryOf(stored)).toBe(candidateGeometryOf(stored));
    expect(candidateGeometryOf(stored).bbox).toEqual([0, 0, 1, 1]);
  });

  it('gives a notification without metadata no geometry', () => {
    const geometry = candidateGeometryOf(notification());
    expect(geometry.bbox).toBeUndefined();
    expect(geometry.polygon).toBeUndefined();
    expect(geometry.cloud).toBeUndefined();
  });
});
