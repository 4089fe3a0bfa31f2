import { polygon as turfPolygon } from '@turf/helpers';
import { METADATA_KEYS, type StoredNotification } from '../notification/stored-notification.js';
import { isJsonObject, JsonNumber, type JsonValue } from '../json/json-value.js';
import { JsonSyntaxError, parseJsonBody } from '../json/lossless-parse.js';
import { boundingBoxOf, parsedCoordinate } from '../schema/handlers/coordinates.js';
import type { BoundingBox, LatLon } from '../schema/handlers/field-handler.js';
import { createPolygonHandler } from '../schema/handlers/polygon-handler.js';
import { IdentifierError } from '../schema/identifier-error.js';
import { trimRust } from '../text/rust-whitespace.js';

/**
 * The geometry a stored notification carries, read from its metadata headers (and, for polygons,
 * the legacy payload member) as docs/design/rules/schema-and-validation.md §9.1–9.4 describe. A header that is
 * missing or cannot be read is `undefined`: the filters turn that into "no match", never an error.
 */

/** A planar position as turf wants it: longitude first (x), latitude second (y). */
export type PlanarPosition = [lon: number, lat: number];

export type PlanarPolygon = ReturnType<typeof turfPolygon>;

export interface CandidateGeometry {
  /** `spatial_bbox`, corners ordered; undefined when absent or unparseable. */
  readonly bbox: BoundingBox | undefined;
  /** From `spatial_geometry`, else from the payload's legacy `spatial_geometry` member (docs/design/rules/schema-and-validation.md §9.2 step 3). */
  readonly polygon: PlanarPolygon | undefined;
  /** `spatial_point_cloud` in stored order; undefined when absent, unparseable or empty. */
  readonly cloud: readonly PlanarPosition[] | undefined;
}

/** A closed ring (latitude first, as the API has it) as a turf polygon in (lon, lat). */
export function toPlanarPolygon(ring: readonly LatLon[]): PlanarPolygon {
  const [minLat, minLon, maxLat, maxLon] = boundingBoxOf(ring);
  // The bbox lets turf's point-in-polygon reject far points before walking the ring.
  return turfPolygon([ring.map(([lat, lon]): PlanarPosition => [lon, lat])], null, {
    bbox: [minLon, minLat, maxLon, maxLat],
  });
}

/*
 * Thousands of watchers may test the same notification object, so each one is read at most once.
 * The parts are read lazily because each filter kind needs only some of them (a cloud filter never
 * parses the payload). The WeakMap value refers to its key, which does not keep the key alive:
 * WeakMap entries are ephemerons.
 */
const cache = new WeakMap<StoredNotification, CandidateGeometry>();

export function candidateGeometryOf(notification: StoredNotification): CandidateGeometry {
  let geometry = cache.get(notification);
  if (geometry === undefined) {
    geometry = new LazyCandidateGeometry(notification);
    cache.set(notification, geometry);
  }
  return geometry;
}

const UNREAD: unique symbol = Symbol('unread');
type Unread = typeof UNREAD;

class LazyCandidateGeometry implements CandidateGeometry {
  #bbox: BoundingBox | undefined | Unread = UNREAD;
  #polygon: PlanarPolygon | undefined | Unread = UNREAD;
  #cloud: readonly PlanarPosition[] | undefined | Unread = UNREAD;

  constructor(private readonly notification: StoredNotification) {}

  get bbox(): BoundingBox | undefined {
    if (this.#bbox === UNREAD) this.#bbox = readBoundingBox(this.header(METADATA_KEYS.spatialBbox));
    return this.#bbox;
  }

  get polygon(): PlanarPolygon | undefined {
    if (this.#polygon === UNREAD) {
      // A garbled header falls back to the payload too, as in the reference.
      this.#polygon = readPolygonText(this.header(METADATA_KEYS.spatialGeometry)) ?? readLegacyPayloadPolygon(this.notification.payload);
    }
    return this.#polygon;
  }

  get cloud(): readonly PlanarPosition[] | undefined {
    if (this.#cloud === UNREAD) this.#cloud = readPointCloud(this.header(METADATA_KEYS.spatialPointCloud));
    return this.#cloud;
  }

  private header(key: string): string | undefined {
    return this.notification.metadata?.[key];
  }
}

/**
 * `min_lat,min_lon,max_lat,max_lon`, each part trimmed and read as a Rust `f64` like the
 * reference does. The corners are ordered because the reference builds a rectangle from them,
 * which orders them too. A NaN part stays NaN and fails every comparison, so such a box matches
 * nothing, as in the reference.
 */
export function readBoundingBox(text: string | undefined): BoundingBox | undefined {
  if (text === undefined) return undefined;
  const parts = text.split(',');
  if (parts.length !== 4) return undefined;
  const values: number[] = [];
  for (const part of parts) {
    const value = PLAIN_DECIMAL.test(part) ? Number(part) : parsedCoordinate(trimRust(part));
    if (value === undefined) return undefined;
    values.push(value);
  }
  const [lat1 = 0, lon1 = 0, lat2 = 0, lon2 = 0] = values;
  return [Math.min(lat1, lat2), Math.min(lon1, lon2), Math.max(lat1, lat2), Math.max(lon1, lon2)];
}

/**
 * The decimal spelling notify writes (canonical floats, the producer's plain text), which `Number`
 * reads exactly like the Rust parser; anything else goes through the full parser.
 */
const PLAIN_DECIMAL = /^-?\d+(?:\.\d+)?$/;

// The field name only appears in error messages, which are discarded here.
const polygonText = createPolygonHandler('spatial_geometry');

/**
 * Polygon text `(lat,lon,…)`, or a JSON array in text (D27), validated as PolygonHandler does;
 * anything it refuses is no polygon.
 */
function readPolygonText(text: string | undefined): PlanarPolygon | undefined {
  if (text === undefined) return undefined;
  const ring = plainRing(text);
  if (ring) return toPlanarPolygon(ring);
  try {
    return toPlanarPolygon(polygonText.parse(text).ring);
  } catch (error) {
    if (error instanceof IdentifierError) return undefined;
    throw error;
  }
}

/**
 * The common case read fast: `(lat,lon,…)` of plain decimals, closed, at least 4 pairs, in range.
 * Anything else returns `undefined` and is left to the full PolygonHandler rules.
 */
function plainRing(text: string): LatLon[] | undefined {
  const inner = text.startsWith('(') && text.endsWith(')') ? text.slice(1, -1) : text;
  const tokens = inner.split(',');
  if (tokens.length < 8 || tokens.length % 2 !== 0) return undefined;
  const ring: LatLon[] = [];
  for (let i = 0; i < tokens.length; i += 2) {
    const latText = tokens[i] as string;
    const lonText = tokens[i + 1] as string;
    if (!PLAIN_DECIMAL.test(latText) || !PLAIN_DECIMAL.test(lonText)) return undefined;
    const lat = Number(latText);
    const lon = Number(lonText);
    if (lat < -90 || lat > 90 || lon < -180 || lon > 180) return undefined;
    ring.push([lat, lon]);
  }
  const first = ring[0] as LatLon;
  const last = ring[ring.length - 1] as LatLon;
  return first[0] === last[0] && first[1] === last[1] ? ring : undefined;
}

/**
 * docs/design/rules/schema-and-validation.md §9.2 step 3, legacy fallback: a JSON-object payload whose `spatial_geometry` member is polygon
 * text or `{"type": "Polygon", "coordinates": [[[lat, lon], …]]}`.
 */
export function readLegacyPayloadPolygon(payload: string): PlanarPolygon | undefined {
  const document = parseJson(payload);
  if (!isJsonObject(document)) return undefined;
  const geometry = document['spatial_geometry'];
  if (typeof geometry === 'string') return readPolygonText(geometry);
  if (isJsonObject(geometry)) return readGeoJsonPolygon(geometry);
  return undefined;
}

/**
 * The reference reads only the outer ring, pairs latitude first (not GeoJSON's order), skips
 * pairs whose first two elements are not numbers, needs at least 3 pairs and closes the ring
 * itself; it checks no coordinate ranges.
 */
function readGeoJsonPolygon(geometry: { [key: string]: JsonValue }): PlanarPolygon | undefined {
  if (geometry['type'] !== 'Polygon') return undefined;
  const rings = geometry['coordinates'];
  if (!Array.isArray(rings)) return undefined;
  const outer = rings[0];
  if (!Array.isArray(outer)) return undefined;
  const ring: LatLon[] = [];
  for (const pair of outer) {
    if (!Array.isArray(pair)) continue;
    const [lat, lon] = pair;
    if (lat instanceof JsonNumber && lon instanceof JsonNumber) ring.push([lat.toNumber(), lon.toNumber()]);
  }
  if (ring.length < 3) return undefined;
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (first !== undefined && last !== undefined && (first[0] !== last[0] || first[1] !== last[1])) ring.push(first);
  // Three pairs that were already closed describe a line, which turf cannot take as a polygon.
  if (ring.length < 4) return undefined;
  return toPlanarPolygon(ring);
}

/** `[[lat,lon],…]` as notify writes it; a cloud with any unreadable point is no cloud at all. */
export function readPointCloud(text: string | undefined): readonly PlanarPosition[] | undefined {
  if (text === undefined) return undefined;
  // The native parser: coordinates need no lossless numbers, and clouds have up to 10,000 points.
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(document) || document.length === 0) return undefined;
  const positions: PlanarPosition[] = [];
  for (const item of document as unknown[]) {
    if (!Array.isArray(item) || item.length !== 2) return undefined;
    const [lat, lon] = item as unknown[];
    if (typeof lat !== 'number' || typeof lon !== 'number') return undefined;
    if (!(lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180)) return undefined;
    positions.push([lon, lat]);
  }
  return positions;
}

function parseJson(text: string): JsonValue | undefined {
  try {
    return parseJsonBody(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return undefined;
    throw error;
  }
}
