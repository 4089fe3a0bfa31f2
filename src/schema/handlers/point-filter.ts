import { isJsonObject, type JsonValue } from '../../json/json-value.js';
import { IdentifierError } from '../identifier-error.js';
import { canonicalFloatText } from '../number-text.js';
import { trimRust } from '../../text/rust-whitespace.js';
import { scalarText } from '../scalar-text.js';
import { jsonArrayInString, parsedCoordinate, readJsonCoordinatePair } from './coordinates.js';
import type { LatLon } from './field-handler.js';
import { echo } from '../../text/echo.js';

/** The legacy text form's prefix (docs/design/rules/schema-and-validation.md §5.10), unchanged. */
const INVALID_PAIR = "identifier.point must be a valid 'lat,lon' coordinate pair: ";
/** The array form's prefix (docs/design/rules/reference-0.13.md §3), also for a string holding JSON. */
const INVALID_ARRAY = 'identifier.point must be a valid [lat,lon] coordinate pair or compatible string: ';
const NOT_SCALAR = 'identifier.point must be a scalar value: ';
const NOT_A_PAIR = 'coordinate must be a two-element array [lat,lon]';

/**
 * The reserved watch/replay filter `identifier.point` (docs/design/rules/schema-and-validation.md §5.10,
 * docs/design/rules/reference-0.13.md §3): a `[lat, lon]` array, a string holding one, or the legacy text `lat,lon`
 * (optionally in parentheses).
 */
export function parsePointFilter(value: JsonValue): LatLon {
  if (isJsonObject(value)) {
    throw new IdentifierError(`${NOT_SCALAR}Field 'point' constraint object is not allowed in this operation`);
  }
  if (Array.isArray(value)) return parsePointArray(value);
  let text: string;
  try {
    text = scalarText('point', value);
  } catch (error) {
    if (error instanceof IdentifierError) throw new IdentifierError(NOT_SCALAR + error.message);
    throw error;
  }
  const carried = jsonArrayInString(text);
  if (carried === undefined) return parsePointText(text);
  // Text that starts like an array but is no JSON is not a pair either.
  if (carried === null) throw new IdentifierError(INVALID_ARRAY + NOT_A_PAIR);
  return parsePointArray(carried);
}

function parsePointArray(value: JsonValue): LatLon {
  const result = readJsonCoordinatePair(value);
  if ('reason' in result) throw new IdentifierError(INVALID_ARRAY + result.reason);
  return result.point;
}

function parsePointText(text: string): LatLon {
  const invalid = (reason: string): IdentifierError => new IdentifierError(INVALID_PAIR + reason);
  const trimmed = trimRust(text);
  if (trimmed.length === 0) throw invalid('Point coordinate string cannot be empty');
  // Parentheses are stripped only as a pair; a lone one stays and fails as a number.
  const inner = trimmed.startsWith('(') && trimmed.endsWith(')') ? trimmed.slice(1, -1) : trimmed;
  const tokens = inner.split(',').map(trimRust);
  if (tokens.length < 2) throw invalid("Point must be in 'lat,lon' format");
  if (tokens.length > 2) throw invalid("Point must contain exactly two values: 'lat,lon'");
  const [latToken = '', lonToken = ''] = tokens;
  const lat = parsedCoordinate(latToken);
  if (lat === undefined) throw invalid(`Invalid latitude value: ${echo(latToken)}`);
  const lon = parsedCoordinate(lonToken);
  if (lon === undefined) throw invalid(`Invalid longitude value: ${echo(lonToken)}`);
  if (!(lat >= -90 && lat <= 90)) throw invalid(`Latitude out of range [-90, 90]: ${canonicalFloatText(lat)}`);
  if (!(lon >= -180 && lon <= 180)) throw invalid(`Longitude out of range [-180, 180]: ${canonicalFloatText(lon)}`);
  return [lat, lon];
}
