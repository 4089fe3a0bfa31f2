import { JsonNumber, type JsonValue } from '../../json/json-value.js';
import { canonicalFloatText, NumberParseError, parseRustF64 } from '../number-text.js';
import type { BoundingBox, LatLon } from './field-handler.js';

/**
 * Coordinate checks shared by the spatial inputs (schema-and-validation.md §5.8–5.10): the `[lat,
 * lon]` array form with its reason texts, the coordinate ranges and bounding boxes.
 */

/** A valid pair, or the reason text of §5.9 saying why not. */
export type CoordinatePairResult = { readonly point: LatLon } | { readonly reason: string };

/** Checks one `[lat, lon]` JSON array, in the order the reason table of §5.9 lists them. */
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
  return latitude >= -90 && latitude <= 90
    ? undefined
    : `latitude ${canonicalFloatText(latitude)} is outside the valid range [-90, 90]`;
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
