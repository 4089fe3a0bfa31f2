import { JsonNumber, type JsonValue } from '../../json/json-value.js';
import { JsonSyntaxError, parseJsonBody } from '../../json/lossless-parse.js';
import { canonicalFloatText, NumberParseError, parseRustF64 } from '../number-text.js';
import { trimRust } from '../../text/rust-whitespace.js';
import type { BoundingBox, LatLon } from './field-handler.js';

/**
 * Coordinate checks shared by the spatial inputs (docs/design/rules/schema-and-validation.md §5.8–5.10,
 * docs/design/rules/reference-0.13.md §3): the `[lat, lon]` array form with its reason texts, JSON carried in a
 * string, the coordinate ranges, bounding boxes and the canonical array of a ring (D27).
 */

/**
 * The JSON a string carries when it is written as an array (D27: "a string that starts with `[`
 * is read as JSON"), leading whitespace allowed; `undefined` for every other string. `null` when
 * it starts like an array but is no valid JSON, so callers can say so with their own message.
 */
export function jsonArrayInString(text: string): JsonValue | null | undefined {
  const trimmed = trimRust(text);
  if (!trimmed.startsWith('[')) return undefined;
  try {
    // The lossless parser, so `[50.0, 10]` keeps the number texts a request body would keep.
    return parseJsonBody(trimmed);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return null;
    throw error;
  }
}

/** The canonical `[[lat,lon],…]` of D27: plain numbers, so `50.0` is written `50`. */
export function canonicalPairs(points: readonly LatLon[]): number[][] {
  return points.map(([lat, lon]) => [lat, lon]);
}

/** A valid pair, or the reason text of docs/design/rules/schema-and-validation.md §5.9 saying why not. */
export type CoordinatePairResult = { readonly point: LatLon } | { readonly reason: string };

/** Checks one `[lat, lon]` JSON array, in the order the reason table of docs/design/rules/schema-and-validation.md §5.9 lists them. */
export function readJsonCoordinatePair(value: JsonValue | undefined): CoordinatePairResult {
  if (!Array.isArray(value) || value.length !== 2) return { reason: 'coordinate must be a two-element array [lat,lon]' };
  const [lat, lon] = value;
  if (!(lat instanceof JsonNumber)) return { reason: 'latitude must be a number' };
  if (!(lon instanceof JsonNumber)) return { reason: 'longitude must be a number' };
  const latitude = lat.toNumber();
  const longitude = lon.toNumber();
  if (!Number.isFinite(latitude)) return { reason: 'latitude must be finite' };
  if (!Number.isFinite(longitude)) return { reason: 'longitude must be finite' };
  const problem = latitudeRangeProblem(latitude) ?? longitudeRangeProblem(longitude);
  return problem === undefined ? { point: [latitude, longitude] } : { reason: problem };
}

/** Written so that NaN is out of range too. */
export function latitudeRangeProblem(latitude: number): string | undefined {
  return latitude >= -90 && latitude <= 90 ? undefined : `latitude ${canonicalFloatText(latitude)} is outside the valid range [-90, 90]`;
}

export function longitudeRangeProblem(longitude: number): string | undefined {
  return longitude >= -180 && longitude <= 180
    ? undefined
    : `longitude ${canonicalFloatText(longitude)} is outside the valid range [-180, 180]`;
}

/** `[minLat, minLon, maxLat, maxLon]` of a non-empty list of points. */
export function boundingBoxOf(points: readonly LatLon[]): BoundingBox {
  let minLat = Number.POSITIVE_INFINITY;
  let minLon = Number.POSITIVE_INFINITY;
  let maxLat = Number.NEGATIVE_INFINITY;
  let maxLon = Number.NEGATIVE_INFINITY;
  for (const [lat, lon] of points) {
    minLat = Math.min(minLat, lat);
    minLon = Math.min(minLon, lon);
    maxLat = Math.max(maxLat, lat);
    maxLon = Math.max(maxLon, lon);
  }
  return [minLat, minLon, maxLat, maxLon];
}

/** A coordinate token of the text forms, read with the FloatHandler literal syntax. */
export function parsedCoordinate(token: string): number | undefined {
  try {
    return parseRustF64(token);
  } catch (error) {
    if (error instanceof NumberParseError) return undefined;
    throw error;
  }
}
