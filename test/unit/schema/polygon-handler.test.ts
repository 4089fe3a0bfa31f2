import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonNumber } from '../../../src/json/json-value.js';
import { canonicalJson } from '../../../src/json/canonical-json.js';
import { createPolygonHandler } from '../../../src/schema/handlers/polygon-handler.js';
import { expectIdentifierError, json } from './identifier-error-assertions.js';

const handler = createPolygonHandler('polygon');
const PREFIX = "field 'polygon' must be a valid polygon: ";
const SQUARE = '(52.5,13.4,52.6,13.5,52.5,13.6,52.4,13.5,52.5,13.4)';

describe('PolygonHandler', () => {
  describe('text form', () => {
    it('canonicalises to the array of numbers and keeps the original text for spatial_geometry (D27)', () => {
      const text = ' ( 50.0, 10.0 ,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0 ) ';
      const value = handler.parse(text);
      expect(canonicalJson(value.canonical)).toBe('[[50,10],[52,10],[52,12],[50,12],[50,10]]');
      expect(value.geometryText).toBe(text);
    });

    it('reads the ring latitude first', () => {
      expect(handler.parse(SQUARE).ring).toEqual([
        [52.5, 13.4],
        [52.6, 13.5],
        [52.5, 13.6],
        [52.4, 13.5],
        [52.5, 13.4],
      ]);
    });

    it('computes the bounding box as [minLat, minLon, maxLat, maxLon]', () => {
      expect(handler.parse(SQUARE).bbox).toEqual([52.4, 13.4, 52.6, 13.6]);
    });

    it('accepts text without parentheses', () => {
      expect(handler.parse('0,0,0,1,1,1,0,0').ring).toHaveLength(4);
    });

    it('accepts the inclusive coordinate bounds and the FloatHandler literal syntax', () => {
      expect(handler.parse('90,-180,-90,180,.5,5.,90,-180').bbox).toEqual([-90, -180, 90, 180]);
    });

    it.each([
      ['', 'polygon coordinate string is empty'],
      ['   ', 'polygon coordinate string is empty'],
      ['(0,0,0,1,1,1,0,0', "polygon coordinate string has opening '(' but is missing the closing ')'"],
      ['0,0,0,1,1,1,0,0)', "polygon coordinate string has closing ')' but is missing the opening '('"],
      [
        '((0,0,0,1,1,1,0,0))',
        "polygon coordinate string must have at most one outer pair of parentheses; nested '(' or ')' are not allowed",
      ],
      ['0,0,(0,1),1,1,0,0', "polygon coordinate string must have at most one outer pair of parentheses; nested '(' or ')' are not allowed"],
      [
        '(0,0,0,1)(1,1,0,0)',
        "polygon coordinate string must have at most one outer pair of parentheses; nested '(' or ')' are not allowed",
      ],
      ['()', 'polygon coordinate string is empty between parentheses'],
      ['(  )', 'polygon coordinate string is empty between parentheses'],
      ['0,0,0,1,1', 'polygon coordinates must be in lat,lon pairs (got an odd number of values)'],
      ['abc,0,0,1,1,1,abc,0', "could not parse latitude 'abc' as a number"],
      ['0, abc ,0,1,1,1,0,0', "could not parse longitude 'abc' as a number"],
      ['0,,0,1,1,1,0,0', "could not parse longitude '' as a number"],
      ['0x1,0,0,1,1,1,0,0', "could not parse latitude '0x1' as a number"],
      ['91,0,0,1,1,1,91,0', 'latitude 91 is outside the valid range [-90, 90]'],
      ['-90.5,0,0,1,1,1,0,0', 'latitude -90.5 is outside the valid range [-90, 90]'],
      ['nan,0,0,1,1,1,0,0', 'latitude NaN is outside the valid range [-90, 90]'],
      ['inf,0,0,1,1,1,0,0', 'latitude inf is outside the valid range [-90, 90]'],
      ['0,180.5,0,1,1,1,0,0', 'longitude 180.5 is outside the valid range [-180, 180]'],
      ['0,-1e3,0,1,1,1,0,0', 'longitude -1000 is outside the valid range [-180, 180]'],
      ['0,0,0,1,0,0', 'polygon must have at least 4 coordinate pairs (3 unique vertices plus a closing repeat of the first vertex)'],
      ['0,0,0,1,1,1,1,0', 'polygon must be closed (first and last coordinates must be identical)'],
    ])('rejects %j', (text, reason) => {
      expectIdentifierError(() => handler.parse(text), PREFIX + reason);
    });

    it('checks each pair completely before the next one', () => {
      expectIdentifierError(() => handler.parse('91,0,abc,0,1,1,91,0'), `${PREFIX}latitude 91 is outside the valid range [-90, 90]`);
    });

    it('parses the longitude before checking the latitude range', () => {
      expectIdentifierError(() => handler.parse('91,abc,0,1,1,1,91,abc'), `${PREFIX}could not parse longitude 'abc' as a number`);
    });

    it('checks coordinates before counting pairs', () => {
      expectIdentifierError(() => handler.parse('0,0,95,0'), `${PREFIX}latitude 95 is outside the valid range [-90, 90]`);
    });

    it('considers negative zero equal to zero when checking closure', () => {
      expect(handler.parse('0,0,0,1,1,1,-0,-0').ring).toHaveLength(4);
    });

    it('reads a number value through its section 4 text', () => {
      expectIdentifierError(
        () => handler.parse(json('5')),
        `${PREFIX}polygon coordinates must be in lat,lon pairs (got an odd number of values)`,
      );
    });

    it('rejects null with the section 4 message', () => {
      expectIdentifierError(() => handler.parse(null), "Field 'polygon' cannot be null");
    });
  });

  describe('array form (docs/design/rules/reference-0.13.md §3)', () => {
    const arrayText = '[[50.0,10],[52,10.0],[52,12],[50,12],[50.0,10]]';
    const CANONICAL = '[[50,10],[52,10],[52,12],[50,12],[50,10]]';

    it('canonicalises the producer numbers to plain numbers (50.0 is written 50)', () => {
      expect(canonicalJson(handler.parse(json(arrayText)).canonical)).toBe(CANONICAL);
    });

    it('writes the equivalent polygon text for spatial_geometry', () => {
      expect(handler.parse(json(arrayText)).geometryText).toBe('(50,10,52,10,52,12,50,12,50,10)');
    });

    it('reads the ring and bounding box', () => {
      const value = handler.parse(json(arrayText));
      expect(value.ring[1]).toEqual([52, 10]);
      expect(value.bbox).toEqual([50, 10, 52, 12]);
    });

    it.each([
      ['[[0,0],[0,1],[1,1],[0]]', 'polygon point 3 is invalid: coordinate must be a two-element array [lat,lon]'],
      ['[[0,0],[0,1],[1,1],[0,0,0]]', 'polygon point 3 is invalid: coordinate must be a two-element array [lat,lon]'],
      ['[[0,0],[0,1],[1,1],5]', 'polygon point 3 is invalid: coordinate must be a two-element array [lat,lon]'],
      ['[0,0,0,1,1,1,0,0]', 'polygon point 0 is invalid: coordinate must be a two-element array [lat,lon]'],
      ['[[0,0],["0",1],[1,1],[0,0]]', 'polygon point 1 is invalid: latitude must be a number'],
      ['[[0,0],[0,null],[1,1],[0,0]]', 'polygon point 1 is invalid: longitude must be a number'],
      ['[["a","b"],[0,1],[1,1],[0,0]]', 'polygon point 0 is invalid: latitude must be a number'],
      ['[[0,0],[0,1],[90.5,1],[0,0]]', 'polygon point 2 is invalid: latitude 90.5 is outside the valid range [-90, 90]'],
      ['[[0,0],[0,181],[1,1],[0,0]]', 'polygon point 1 is invalid: longitude 181 is outside the valid range [-180, 180]'],
      ['[[0,0],[0,1],[1,1],[0,-180.5]]', 'polygon point 3 is invalid: longitude -180.5 is outside the valid range [-180, 180]'],
      [
        '[[0,0],[0,1],[0,0]]',
        'polygon must have at least 4 coordinate pairs (3 unique vertices plus a closing repeat of the first vertex)',
      ],
      ['[]', 'polygon must have at least 4 coordinate pairs (3 unique vertices plus a closing repeat of the first vertex)'],
      ['[[0,0],[0,1],[1,1],[1,0]]', 'polygon must be closed (first and last coordinates must be identical)'],
    ])('rejects %s', (text, reason) => {
      expectIdentifierError(() => handler.parse(json(text)), PREFIX + reason);
    });

    it('checks every point before the ring', () => {
      expectIdentifierError(
        () => handler.parse(json('[[0,0],[0,1],[91,0]]')),
        `${PREFIX}polygon point 2 is invalid: latitude 91 is outside the valid range [-90, 90]`,
      );
    });

    it('rejects non-finite numbers', () => {
      const pair = (lat: string, lon: string) => [new JsonNumber(lat), new JsonNumber(lon)];
      const ring = (bad: ReturnType<typeof pair>) => [pair('0', '0'), bad, pair('1', '1'), pair('0', '0')];
      expectIdentifierError(() => handler.parse(ring(pair('1e400', '0'))), `${PREFIX}polygon point 1 is invalid: latitude must be finite`);
      expectIdentifierError(
        () => handler.parse(ring(pair('0', '-1e400'))),
        `${PREFIX}polygon point 1 is invalid: longitude must be finite`,
      );
    });
  });

  describe('a string that starts with [ is read as JSON (docs/design/rules/reference-0.13.md §3)', () => {
    it('accepts the array form in a string, leading whitespace allowed', () => {
      for (const text of ['[[50.0,10],[52,10],[52,12],[50,12],[50.0,10]]', ' \n[ [50,10], [52,10], [52,12], [50,12], [50,10] ] ']) {
        const value = handler.parse(text);
        expect(canonicalJson(value.canonical)).toBe('[[50,10],[52,10],[52,12],[50,12],[50,10]]');
        expect(value.geometryText).toBe('(50,10,52,10,52,12,50,12,50,10)');
      }
    });

    it.each(['[[0,0],[0,1],[1,1],[0,0]', '[(0,0)]', '[', '[[0,0],[0,1],[1,1],[1e999,0]]'])(
      'rejects %j, which is no JSON, as neither an array nor a compatible string',
      (text) => {
        expectIdentifierError(() => handler.parse(text), `${PREFIX}polygon must be an array of [lat,lon] points or a compatible string`);
      },
    );

    it('reports a bad point of the JSON with its index', () => {
      expectIdentifierError(
        () => handler.parse('[[0,0],[0,"1"],[1,1],[0,0]]'),
        `${PREFIX}polygon point 1 is invalid: longitude must be a number`,
      );
    });

    it('applies the ring checks to the JSON', () => {
      expectIdentifierError(
        () => handler.parse('[[0,0],[0,1],[1,1],[1,0]]'),
        `${PREFIX}polygon must be closed (first and last coordinates must be identical)`,
      );
    });
  });

  it('bounds every vertex of the ring with its bounding box', () => {
    const latitude = fc.double({ min: -90, max: 90, noNaN: true });
    const longitude = fc.double({ min: -180, max: 180, noNaN: true });
    fc.assert(
      fc.property(fc.array(fc.tuple(latitude, longitude), { minLength: 3, maxLength: 20 }), (vertices) => {
        const closed = [...vertices, vertices[0] ?? [0, 0]];
        const text = closed.map(([lat, lon]) => `${lat},${lon}`).join(',');
        const { ring, bbox } = handler.parse(text);
        const [minLat, minLon, maxLat, maxLon] = bbox;
        for (const [lat, lon] of ring) {
          expect(lat >= minLat && lat <= maxLat && lon >= minLon && lon <= maxLon).toBe(true);
        }
        expect(ring.some(([lat]) => lat === minLat) && ring.some(([lat]) => lat === maxLat)).toBe(true);
        expect(ring.some(([, lon]) => lon === minLon) && ring.some(([, lon]) => lon === maxLon)).toBe(true);
      }),
    );
  });
});
