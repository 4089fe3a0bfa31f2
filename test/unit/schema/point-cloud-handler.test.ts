import { describe, expect, it } from 'vitest';
import { JsonNumber, type JsonValue } from '../../../src/json/json-value.js';
import { createPointCloudHandler, MAX_POINT_CLOUD_JSON_BYTES } from '../../../src/schema/handlers/point-cloud-handler.js';
import { expectIdentifierError, json } from './identifier-error-assertions.js';

const handler = createPointCloudHandler('point_cloud', { type: 'PointCloudHandler', required: true });
const small = createPointCloudHandler('point_cloud', { type: 'PointCloudHandler', required: true, max_points: 2 });

/**
 * `count` points written `[1.0,2.0]` (9 bytes each) except the first, whose latitude has `ones`
 * extra fractional digits: `count` points take 10·count + 1 bytes, plus `ones` - 1 when `ones` > 0.
 */
function cloudOf(count: number, ones = 0): JsonValue[] {
  const first = [new JsonNumber(ones > 0 ? `1.${'1'.repeat(ones)}` : '1'), new JsonNumber('2')];
  return Array.from({ length: count }, (_, i) => (i === 0 ? first : [new JsonNumber('1'), new JsonNumber('2')]));
}

describe('PointCloudHandler', () => {
  it('writes the canonical JSON with integral values as floats', () => {
    expect(handler.parse(json('[[52.52,13.4],[48.14,11.58],[1,-2]]')).canonicalJson).toBe('[[52.52,13.4],[48.14,11.58],[1.0,-2.0]]');
  });

  it('keeps the order of points and their duplicates', () => {
    expect(handler.parse(json('[[2,2],[1,1],[2,2]]')).points).toEqual([
      [2, 2],
      [1, 1],
      [2, 2],
    ]);
  });

  it('computes the bounding box over all points', () => {
    expect(handler.parse(json('[[52.52,13.4],[48.14,11.58]]')).bbox).toEqual([48.14, 11.58, 52.52, 13.4]);
  });

  it('accepts a single point', () => {
    expect(handler.parse(json('[[0,0]]')).bbox).toEqual([0, 0, 0, 0]);
  });

  it('writes exotic magnitudes in the reference float style', () => {
    expect(handler.parse(json('[[1.5e-7,-0.0]]')).canonicalJson).toBe('[[1.5e-7,-0.0]]');
  });

  it.each([['"[[0,0]]"'], ['5'], ['true'], ['null']])('rejects the non-array %s', (text) => {
    expectIdentifierError(() => handler.parse(json(text)), "field 'point_cloud' must be a JSON array of [lat,lon] points");
  });

  it('rejects an empty array', () => {
    expectIdentifierError(() => handler.parse(json('[]')), "field 'point_cloud' point cloud must contain at least one point");
  });

  it('accepts exactly max_points points', () => {
    expect(small.parse(json('[[0,0],[1,1]]')).points).toHaveLength(2);
  });

  it('rejects more than max_points points before looking at them', () => {
    expectIdentifierError(
      () => small.parse(json('[[0,0],[1,1],"bad"]')),
      "field 'point_cloud' point cloud contains 3 points, maximum is 2",
    );
  });

  it('defaults max_points to 10000', () => {
    expectIdentifierError(() => handler.parse(cloudOf(10_001)), "field 'point_cloud' point cloud contains 10001 points, maximum is 10000");
  });

  it.each([
    ['[[0,0],[1]]', 1, 'coordinate must be a two-element array [lat,lon]'],
    ['[[0,0],[1,2,3]]', 1, 'coordinate must be a two-element array [lat,lon]'],
    ['["0,0"]', 0, 'coordinate must be a two-element array [lat,lon]'],
    ['[[0,0],[0,0],["1",2]]', 2, 'latitude must be a number'],
    ['[[0,false]]', 0, 'longitude must be a number'],
    ['[[-90.5,0]]', 0, 'latitude -90.5 is outside the valid range [-90, 90]'],
    ['[[0,0],[0,200]]', 1, 'longitude 200 is outside the valid range [-180, 180]'],
  ])('rejects %s at point %i', (text, index, reason) => {
    expectIdentifierError(() => handler.parse(json(text)), `field 'point_cloud' point ${index} is invalid: ${reason}`);
  });

  it('rejects non-finite coordinates', () => {
    expectIdentifierError(
      () => handler.parse([[new JsonNumber('0'), new JsonNumber('1e999')]]),
      "field 'point_cloud' point 0 is invalid: longitude must be finite",
    );
  });

  describe('the 61,440-byte limit on the canonical JSON', () => {
    it('accepts a canonical text of exactly 61440 bytes', () => {
      const value = handler.parse(cloudOf(6143, 10));
      expect(value.canonicalJson.length).toBe(MAX_POINT_CLOUD_JSON_BYTES);
    });

    it('rejects a canonical text of 61441 bytes', () => {
      expectIdentifierError(
        () => handler.parse(cloudOf(6143, 11)),
        "field 'point_cloud' point cloud canonical JSON is 61441 bytes, maximum is 61440 bytes",
      );
    });

    it('measures the canonical text, not the text as sent', () => {
      // `[1,2]` is sent as 5 bytes but written as `[1.0,2.0]` (9 bytes).
      const points = cloudOf(6144);
      expectIdentifierError(
        () => handler.parse(points),
        "field 'point_cloud' point cloud canonical JSON is 61441 bytes, maximum is 61440 bytes",
      );
    });
  });
});
