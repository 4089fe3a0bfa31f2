import type { JsonObject, JsonValue } from '../../json/json-value.js';

/** A parsed watch/replay constraint object, such as `{"gte": 5}` on an Int field. */
export interface Constraint {
  readonly operator: string;
  /** Whether a candidate's canonical topic token satisfies the constraint; a token that does not parse never does. */
  matches(canonicalToken: string): boolean;
}

/** Bounding box in degrees: `[minLat, minLon, maxLat, maxLon]`. */
export type BoundingBox = readonly [number, number, number, number];

/** A latitude/longitude pair, latitude first as everywhere in the API. */
export type LatLon = readonly [number, number];

export interface PolygonValue {
  /** What the identifier header stores and CloudEvents carry (D27): `[[lat,lon],…]` of plain numbers. */
  readonly canonical: readonly (readonly number[])[];
  /** The `spatial_geometry` header: the producer's legacy text unchanged, else the ring as `(lat,lon,…)`. */
  readonly geometryText: string;
  /** Closed ring, latitude first, first pair equal to the last. */
  readonly ring: readonly LatLon[];
  readonly bbox: BoundingBox;
}

export interface PointCloudValue {
  /** Compact JSON text stored as `spatial_point_cloud`. */
  readonly canonicalJson: string;
  readonly points: readonly LatLon[];
  readonly bbox: BoundingBox;
}

/** Handlers of scalar text values (everything but the spatial ones). */
export interface ScalarFieldHandler {
  readonly kind: 'scalar';
  /** Validates the scalar text of docs/design/rules/schema-and-validation.md §4 and returns its canonical form; throws `IdentifierError`. */
  canonicalize(text: string): string;
  /** Present only for handlers with operators (Int, Float, Enum); throws `IdentifierError`. */
  readonly parseConstraint?: (constraint: JsonObject) => Constraint;
}

export interface PolygonFieldHandler {
  readonly kind: 'polygon';
  /** Accepts the array form, a string holding it, and the legacy text (other scalars as docs/design/rules/schema-and-validation.md §4 text). */
  parse(value: JsonValue): PolygonValue;
}

export interface PointCloudFieldHandler {
  readonly kind: 'point_cloud';
  parse(value: JsonValue): PointCloudValue;
}

export type FieldHandler = ScalarFieldHandler | PolygonFieldHandler | PointCloudFieldHandler;
