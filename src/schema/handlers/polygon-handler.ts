import type { JsonValue } from '../../json/json-value.js';
import { IdentifierError } from '../identifier-error.js';
import { canonicalFloatText } from '../number-text.js';
import { trimRust } from '../../text/rust-whitespace.js';
import { scalarText } from '../scalar-text.js';
import {
  boundingBoxOf,
  canonicalPairs,
  jsonArrayInString,
  latitudeRangeProblem,
  longitudeRangeProblem,
  parsedCoordinate,
  readJsonCoordinatePair,
} from './coordinates.js';
import type { LatLon, PolygonFieldHandler, PolygonValue } from './field-handler.js';
import { echo } from '../../text/echo.js';

/** A string that looks like JSON (it starts with `[`) but is not a JSON array (docs/design/rules/reference-0.13.md §3). */
const NOT_AN_ARRAY = 'polygon must be an array of [lat,lon] points or a compatible string';

/**
 * PolygonHandler (docs/design/rules/schema-and-validation.md §5.8, docs/design/rules/reference-0.13.md §3): a closed ring, latitude
 * first, as a JSON array of `[lat, lon]` pairs, as a string holding such an array, or as the
 * legacy text `lat,lon,…` (optionally in one pair of parentheses). Whatever the form, the
 * canonical value is the array of numbers (D27); the legacy text is kept only for the
 * `spatial_geometry` header.
 */
export function createPolygonHandler(field: string): PolygonFieldHandler {
  const invalid = (reason: string): IdentifierError => new IdentifierError(`field '${field}' must be a valid polygon: ${reason}`);
  return {
    kind: 'polygon',
    parse(value: JsonValue): PolygonValue {
      if (Array.isArray(value)) return fromRing(parseArrayForm(value, invalid), invalid);
      // Non-string scalars become their section 4 text first, so `5` keeps its text-form message.
      const text = scalarText(field, value);
      const carried = jsonArrayInString(text);
      if (carried !== undefined) {
        if (!Array.isArray(carried)) throw invalid(NOT_AN_ARRAY);
        return fromRing(parseArrayForm(carried, invalid), invalid);
      }
      return fromRing(parseTextRing(text, invalid), invalid, text);
    },
  };
}

type Invalid = (reason: string) => IdentifierError;

/** Each pair checked in order; the index in the message counts from 0, as for point clouds (docs/design/rules/schema-and-validation.md §5.9). */
function parseArrayForm(pairs: readonly JsonValue[], invalid: Invalid): LatLon[] {
  return pairs.map((pair, index) => {
    const result = readJsonCoordinatePair(pair);
    if ('reason' in result) throw invalid(`polygon point ${index} is invalid: ${result.reason}`);
    return result.point;
  });
}

/**
 * The ring checks, then the stored forms. `text` is the producer's legacy text, which
 * `spatial_geometry` keeps unchanged for reference readers; an array is written as the
 * equivalent text there.
 */
function fromRing(ring: LatLon[], invalid: Invalid, text?: string): PolygonValue {
  checkRing(ring, invalid);
  return {
    canonical: canonicalPairs(ring),
    geometryText: text ?? ringText(ring),
    ring,
    bbox: boundingBoxOf(ring),
  };
}

function ringText(ring: readonly LatLon[]): string {
  return `(${ring.map(([lat, lon]) => `${canonicalFloatText(lat)},${canonicalFloatText(lon)}`).join(',')})`;
}

/** The text-form checks of docs/design/rules/schema-and-validation.md §5.8 up to the coordinates, in the order the reference runs them. */
function parseTextRing(text: string, invalid: Invalid): LatLon[] {
  const trimmed = trimRust(text);
  if (trimmed.length === 0) throw invalid('polygon coordinate string is empty');
  const opens = trimmed.startsWith('(');
  const closes = trimmed.endsWith(')');
  if (opens && !closes) throw invalid("polygon coordinate string has opening '(' but is missing the closing ')'");
  if (closes && !opens) throw invalid("polygon coordinate string has closing ')' but is missing the opening '('");
  const inner = opens ? trimmed.slice(1, -1) : trimmed;
  if (inner.includes('(') || inner.includes(')')) {
    throw invalid("polygon coordinate string must have at most one outer pair of parentheses; nested '(' or ')' are not allowed");
  }
  if (trimRust(inner).length === 0) throw invalid('polygon coordinate string is empty between parentheses');
  const tokens = inner.split(',').map(trimRust);
  if (tokens.length % 2 !== 0) throw invalid('polygon coordinates must be in lat,lon pairs (got an odd number of values)');
  const ring: LatLon[] = [];
  for (let i = 0; i < tokens.length; i += 2) {
    const latToken = tokens[i] ?? '';
    const lonToken = tokens[i + 1] ?? '';
    const lat = parsedCoordinate(latToken);
    if (lat === undefined) throw invalid(`could not parse latitude '${echo(latToken)}' as a number`);
    const lon = parsedCoordinate(lonToken);
    if (lon === undefined) throw invalid(`could not parse longitude '${echo(lonToken)}' as a number`);
    const problem = latitudeRangeProblem(lat) ?? longitudeRangeProblem(lon);
    if (problem !== undefined) throw invalid(problem);
    ring.push([lat, lon]);
  }
  return ring;
}

/** Ring-level checks common to every form: enough vertices, and closed. */
function checkRing(ring: readonly LatLon[], invalid: Invalid): void {
  if (ring.length < 4) {
    throw invalid('polygon must have at least 4 coordinate pairs (3 unique vertices plus a closing repeat of the first vertex)');
  }
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (first === undefined || last === undefined || first[0] !== last[0] || first[1] !== last[1]) {
    throw invalid('polygon must be closed (first and last coordinates must be identical)');
  }
}
