import { describe, expect, it } from 'vitest';
import { JsonNumber } from '../../../src/json/json-value.js';
import { parsePointFilter } from '../../../src/schema/handlers/point-filter.js';
import { expectIdentifierError, json } from './identifier-error-assertions.js';

const PREFIX = "identifier.point must be a valid 'lat,lon' coordinate pair: ";

describe('parsePointFilter', () => {
  describe('text form', () => {
    it('reads lat,lon latitude first', () => {
      expect(parsePointFilter('52.55,13.5')).toEqual([52.55, 13.5]);
    });

    it('strips one pair of parentheses', () => {
      expect(parsePointFilter('(52.55,13.5)')).toEqual([52.55, 13.5]);
    });

    it('allows whitespace around the numbers and the parentheses', () => {
      expect(parsePointFilter('  ( 52.55 ,  13.5 ) ')).toEqual([52.55, 13.5]);
    });

    it('accepts the inclusive bounds', () => {
      expect(parsePointFilter('-90,180')).toEqual([-90, 180]);
    });

    it.each([
      ['', 'Point coordinate string cannot be empty'],
      ['   ', 'Point coordinate string cannot be empty'],
      ['52.5', "Point must be in 'lat,lon' format"],
      ['()', "Point must be in 'lat,lon' format"],
      ['1,2,3', "Point must contain exactly two values: 'lat,lon'"],
      ['abc,13.5', 'Invalid latitude value: abc'],
      ['52.5, abc ', 'Invalid longitude value: abc'],
      ['52.5,', 'Invalid longitude value: '],
      ['(52.5,13.5', 'Invalid latitude value: (52.5'],
      ['52.5,13.5)', 'Invalid longitude value: 13.5)'],
      ['91,0', 'Latitude out of range [-90, 90]: 91'],
      ['nan,0', 'Latitude out of range [-90, 90]: NaN'],
      ['0,-180.5', 'Longitude out of range [-180, 180]: -180.5'],
      ['0,inf', 'Longitude out of range [-180, 180]: inf'],
    ])('rejects %j', (text, reason) => {
      expectIdentifierError(() => parsePointFilter(text), PREFIX + reason);
    });

    it('parses both numbers before checking ranges', () => {
      expectIdentifierError(() => parsePointFilter('91,abc'), `${PREFIX}Invalid longitude value: abc`);
    });

    it('converts a number through its section 4 text first', () => {
      expectIdentifierError(() => parsePointFilter(json('5')), `${PREFIX}Point must be in 'lat,lon' format`);
    });

    it('converts a boolean through its section 4 text first', () => {
      expectIdentifierError(() => parsePointFilter(true), `${PREFIX}Point must be in 'lat,lon' format`);
    });
  });

  describe('array form (docs/design/rules/reference-0.13.md §3)', () => {
    const ARRAY_PREFIX = 'identifier.point must be a valid [lat,lon] coordinate pair or compatible string: ';

    it('reads [lat, lon]', () => {
      expect(parsePointFilter(json('[52.55, 13.5]'))).toEqual([52.55, 13.5]);
    });

    it('reads a string that starts with [ as JSON', () => {
      expect(parsePointFilter('[52.55, 13.5]')).toEqual([52.55, 13.5]);
      expect(parsePointFilter('  [52.55,13.5]')).toEqual([52.55, 13.5]);
    });

    it.each([
      ['[52.55]', 'coordinate must be a two-element array [lat,lon]'],
      ['[1, 2, 3]', 'coordinate must be a two-element array [lat,lon]'],
      ['[[1, 2]]', 'coordinate must be a two-element array [lat,lon]'],
      ['["52.55", 13.5]', 'latitude must be a number'],
      ['[52.55, "13.5"]', 'longitude must be a number'],
      ['[95, 0]', 'latitude 95 is outside the valid range [-90, 90]'],
      ['[0, -181]', 'longitude -181 is outside the valid range [-180, 180]'],
    ])('rejects %s, as an array and as a string', (text, reason) => {
      expectIdentifierError(() => parsePointFilter(json(text)), ARRAY_PREFIX + reason);
      expectIdentifierError(() => parsePointFilter(text), ARRAY_PREFIX + reason);
    });

    it.each(['[52.55, 13.5', '[', '[1e999, 0]'])('rejects %j, which is no JSON, as not a pair', (text) => {
      expectIdentifierError(() => parsePointFilter(text), `${ARRAY_PREFIX}coordinate must be a two-element array [lat,lon]`);
    });

    it('rejects a non-finite number', () => {
      expectIdentifierError(
        () => parsePointFilter([new JsonNumber('1e999'), new JsonNumber('0')]),
        `${ARRAY_PREFIX}latitude must be finite`,
      );
      expectIdentifierError(
        () => parsePointFilter([new JsonNumber('0'), new JsonNumber('-1e999')]),
        `${ARRAY_PREFIX}longitude must be finite`,
      );
    });
  });

  it('rejects null as not a scalar', () => {
    expectIdentifierError(() => parsePointFilter(null), "identifier.point must be a scalar value: Field 'point' cannot be null");
  });

  it('rejects an object as not a scalar', () => {
    expectIdentifierError(
      () => parsePointFilter(json('{"eq": "1,2"}')),
      "identifier.point must be a scalar value: Field 'point' constraint object is not allowed in this operation",
    );
  });
});
