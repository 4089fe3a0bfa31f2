import { booleanIntersects } from '@turf/boolean-intersects';
import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import type { StoredNotification } from '../notification/stored-notification.js';
import type { BoundingBox, LatLon, PolygonValue } from '../schema/handlers/field-handler.js';
import { candidateGeometryOf, toPlanarPolygon, type PlanarPolygon, type PlanarPosition } from './candidate-geometry.js';

/**
 * The last stage of watch/replay selection, after the topic pattern and the field filters: the
 * request's polygon or point against each stored notification's geometry, its bounding box
 * checked first. Geometry is planar in (lon, lat) degrees with no antimeridian handling, as in the
 * reference; turf does the geometric predicates (docs/design/rules/schema-and-validation.md §9).
 */
export type SpatialFilter =
  /** `identifier.polygon` on a polygon schema: the stored polygon intersects the requested one. */
  | { readonly kind: 'polygon_intersects'; readonly polygon: PolygonValue }
  /** `identifier.point` on a polygon schema: the point lies strictly inside the stored polygon. */
  | { readonly kind: 'point_in_polygon'; readonly point: LatLon }
  /** `identifier.polygon` on a point-cloud schema: a stored point lies in the requested polygon or on its edge. */
  | { readonly kind: 'cloud_in_polygon'; readonly polygon: PolygonValue };

export type SpatialPredicate = (candidate: StoredNotification) => boolean;

/**
 * Builds the request geometry once; the predicate then runs per candidate, reading the
 * candidate's geometry through the per-notification cache so watchers share the parsing.
 */
export function compileSpatialFilter(filter: SpatialFilter): SpatialPredicate {
  switch (filter.kind) {
    case 'polygon_intersects':
      return polygonIntersects(filter.polygon);
    case 'point_in_polygon':
      return pointInPolygon(filter.point);
    case 'cloud_in_polygon':
      return cloudInPolygon(filter.polygon);
  }
}

function polygonIntersects(request: PolygonValue): SpatialPredicate {
  const requestPolygon = toPlanarPolygon(request.ring);
  return (candidate) => {
    const geometry = candidateGeometryOf(candidate);
    // Without a stored box the candidate fails outright, unlike the point filter, which skips the box check.
    const box = geometry.bbox;
    if (box === undefined || !boxesIntersect(box, request.bbox)) return false;
    const polygon = geometry.polygon;
    // Any shared point counts: overlap, containment either way, a shared edge or vertex (S4).
    return polygon !== undefined && polygonsShareAPoint(polygon, requestPolygon);
  };
}

/**
 * A vertex of either polygon inside (or on) the other is a shared point, and a point-in-polygon
 * test is several times cheaper than turf's general intersection; overlapping areas, the common
 * case for a watcher's region, are answered by it. Otherwise turf decides (crossing edges only).
 */
function polygonsShareAPoint(candidate: PlanarPolygon, request: PlanarPolygon): boolean {
  const candidateStart = candidate.geometry.coordinates[0]?.[0];
  if (candidateStart !== undefined && booleanPointInPolygon(candidateStart, request)) return true;
  const requestStart = request.geometry.coordinates[0]?.[0];
  if (requestStart !== undefined && booleanPointInPolygon(requestStart, candidate)) return true;
  return booleanIntersects(candidate, request);
}

function pointInPolygon(point: LatLon): SpatialPredicate {
  const [lat, lon] = point;
  const position: PlanarPosition = [lon, lat];
  return (candidate) => {
    const geometry = candidateGeometryOf(candidate);
    // The box check is skipped, not failed, when there is no readable box; the polygon alone decides.
    const box = geometry.bbox;
    if (box !== undefined && !boxContains(box, lat, lon)) return false;
    const polygon = geometry.polygon;
    // Strictly inside: the reference's `contains` excludes the boundary (S4).
    return polygon !== undefined && booleanPointInPolygon(position, polygon, { ignoreBoundary: true });
  };
}

function cloudInPolygon(request: PolygonValue): SpatialPredicate {
  const requestPolygon = toPlanarPolygon(request.ring);
  return (candidate) => {
    const geometry = candidateGeometryOf(candidate);
    // A cloud without a readable stored box fails: the box check comes first.
    const box = geometry.bbox;
    if (box === undefined || !boxesIntersect(box, request.bbox)) return false;
    // Boundary included for clouds (S4); `some` stops at the first point inside, in stored order.
    return geometry.cloud?.some((position) => booleanPointInPolygon(position, requestPolygon)) ?? false;
  };
}

/** Closed boxes: sharing an edge or a corner counts. NaN bounds intersect nothing. */
function boxesIntersect(a: BoundingBox, b: BoundingBox): boolean {
  const [aMinLat, aMinLon, aMaxLat, aMaxLon] = a;
  const [bMinLat, bMinLon, bMaxLat, bMaxLon] = b;
  return aMinLat <= bMaxLat && bMinLat <= aMaxLat && aMinLon <= bMaxLon && bMinLon <= aMaxLon;
}

/** Bounds inclusive. */
function boxContains(box: BoundingBox, lat: number, lon: number): boolean {
  const [minLat, minLon, maxLat, maxLon] = box;
  return lat >= minLat && lat <= maxLat && lon >= minLon && lon <= maxLon;
}
