import { isJsonObject, type JsonValue } from '../../json/json-value.js';
import { IdentifierError } from '../identifier-error.js';
import { canonicalFloatText } from '../number-text.js';
import { trimRust } from '../rust-whitespace.js';
import { scalarText } from '../scalar-text.js';
import { parsedCoordinate, readJsonCoordinatePair } from './coordinates.js';
import type { LatLon } from './field-handler.js';

const INVALID_PAIR = "identifier.point must be a valid 'lat,lon' coordinate pair: ";
const NOT_SCALAR = 'identifier.point must be a scalar value: ';

/**
 * The reserved watch/replay filter `identifier.point` (schema-and-validation.md §5.10): text
 * `lat,lon` (optionally in parentheses), or (seed) a `[lat, lon]` array.
 */
export function parsePointFilter(value: JsonValue): LatLon {
  if (isJsonObject(value)) {
    throw new IdentifierError(`${NOT_SCALAR}Field 'point' constraint object is not allowed in this operation`);
  }
  if (Array.isArray(value)) {
    const result = readJsonCoordinatePair(value);
    if ('reason' in result) throw new IdentifierError(INVALID_PAIR + result.reason);
    return result.point;
  }
  let text: string;
  try {
    text = scalarText('point', value);
  } catch (error) {
    if (error instanceof IdentifierError) throw new IdentifierError(NOT_SCALAR + error.message);
    throw error;
  }
  return parsePointText(text);
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
  if (lat === undefined) throw invalid(`Invalid latitude value: ${latToken}`);
  const lon = parsedCoordinate(lonToken);
  if (lon === undefined) throw invalid(`Invalid longitude value: ${lonToken}`);
  if (!(lat >= -90 && lat <= 90)) throw invalid(`Latitude out of range [-90, 90]: ${canonicalFloatText(lat)}`);
  if (!(lon >= -180 && lon <= 180)) throw invalid(`Longitude out of range [-180, 180]: ${canonicalFloatText(lon)}`);
  return [lat, lon];
}
