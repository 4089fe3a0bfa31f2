import type { JsonValue } from '../../json/json-value.js';
import { IdentifierError } from '../identifier-error.js';
import { trimRust } from '../rust-whitespace.js';
import { scalarText } from '../scalar-text.js';
import {
  boundingBoxOf,
  latitudeRangeProblem,
  longitudeRangeProblem,
  parsedCoordinate,
  readJsonCoordinatePair,
} from './coordinates.js';
import type { LatLon, PolygonFieldHandler, PolygonValue } from './field-handler.js';

/**
 * PolygonHandler (schema-and-validation.md §5.8): a closed ring, latitude first, as the
 * reference's text `lat,lon,…` (optionally in one pair of parentheses) or as a JSON array of
 * `[lat, lon]` pairs. The canonical value is the input in the form it was sent (D14).
 */
export function createPolygonHandler(field: string): PolygonFieldHandler {
  const invalid = (reason: string): IdentifierError =>
    new IdentifierError(`field '${field}' must be a valid polygon: ${reason}`);
  return {
    kind: 'polygon',
    parse(value: JsonValue): PolygonValue {
      if (Array.isArray(value)) return parseArrayForm(value, invalid);
      const text = scalarText(field, value);
      return { canonical: text, ...checkedRing(parseTextRing(text, invalid), invalid) };
    },
  };
}

type Invalid = (reason: string) => IdentifierError;

function parseArrayForm(pairs: JsonValue[], invalid: Invalid): PolygonValue {
  const ring: LatLon[] = [];
  const canonical: JsonValue[] = [];
  for (const pair of pairs) {
    const result = readJsonCoordinatePair(pair);
    if ('reason' in result) throw invalid(result.reason);
    ring.push(result.point);
    // The producer's own number literals, so the array comes back as sent (D14).
    canonical.push(Array.isArray(pair) ? [...pair] : pair);
  }
  return { canonical, ...checkedRing(ring, invalid) };
}

/** The text-form checks of §5.8 up to the coordinates, in the order the reference runs them. */
function parseTextRing(text: string, invalid: Invalid): LatLon[] {
  const trimmed = trimRust(text);
  if (trimmed.length === 0) throw invalid('polygon coordinate string is empty');
  const opens = trimmed.startsWith('(');
  const closes = trimmed.endsWith(')');
  if (opens && !closes) throw invalid("polygon coordinate string has opening '(' but is missing the closing ')'");
  if (closes && !opens) throw invalid("polygon coordinate string has closing ')' but is missing the opening '('");
  const inner = opens ? trimmed.slice(1, -1) : trimmed;
  if (inner.includes('(') || inner.includes(')')) {
    throw invalid(
      "polygon coordinate string must have at most one outer pair of parentheses; nested '(' or ')' are not allowed",
    );
  }
  if (trimRust(inner).length === 0) throw invalid('polygon coordinate string is empty between parentheses');
  const tokens = inner.split(',').map(trimRust);
  if (tokens.length % 2 !== 0) throw invalid('polygon coordinates must be in lat,lon pairs (got an odd number of values)');
  const ring: LatLon[] = [];
  for (let i = 0; i < tokens.length; i += 2) {
    const latToken = tokens[i] ?? '';
    const lonToken = tokens[i + 1] ?? '';
    const lat = parsedCoordinate(latToken);
    if (lat === undefined) throw invalid(`could not parse latitude '${latToken}' as a number`);
    const lon = parsedCoordinate(lonToken);
    if (lon === undefined) throw invalid(`could not parse longitude '${lonToken}' as a number`);
    const problem = latitudeRangeProblem(lat) ?? longitudeRangeProblem(lon);
    if (problem !== undefined) throw invalid(problem);
    ring.push([lat, lon]);
  }
  return ring;
}

/** Ring-level checks common to both forms: enough vertices, and closed. */
function checkedRing(ring: LatLon[], invalid: Invalid): Pick<PolygonValue, 'ring' | 'bbox'> {
  if (ring.length < 4) {
    throw invalid(
      'polygon must have at least 4 coordinate pairs (3 unique vertices plus a closing repeat of the first vertex)',
    );
  }
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (first === undefined || last === undefined || first[0] !== last[0] || first[1] !== last[1]) {
    throw invalid('polygon must be closed (first and last coordinates must be identical)');
  }
  return { ring, bbox: boundingBoxOf(ring) };
}
