import { METADATA_KEYS, type Metadata, type StoredNotification } from '../../../src/backend/backend.js';
import type { LatLon, PolygonValue } from '../../../src/schema/handlers/field-handler.js';
import { createPolygonHandler } from '../../../src/schema/handlers/polygon-handler.js';

let sequence = 0;

export function notification(metadata?: Metadata, payload = 'null'): StoredNotification {
  sequence += 1;
  return { sequence, topic: 'polygon.test', payload, timestampNs: 0n, ...(metadata ? { metadata } : {}) };
}

const handler = createPolygonHandler('polygon');

export function polygon(text: string): PolygonValue {
  return handler.parse(text);
}

/** Polygon text of an axis-aligned rectangle, latitude first. */
export function rectangleText(minLat: number, minLon: number, maxLat: number, maxLon: number): string {
  const ring: LatLon[] = [
    [minLat, minLon],
    [minLat, maxLon],
    [maxLat, maxLon],
    [maxLat, minLon],
    [minLat, minLon],
  ];
  return `(${ring.map(([lat, lon]) => `${lat},${lon}`).join(',')})`;
}

/** What notify stores for a polygon identifier: its bounding box and its text. */
export function storedPolygon(text: string): StoredNotification {
  return notification({
    [METADATA_KEYS.spatialBbox]: polygon(text).bbox.join(','),
    [METADATA_KEYS.spatialGeometry]: text,
  });
}

/** What notify stores for a point-cloud identifier. */
export function storedCloud(points: readonly LatLon[]): StoredNotification {
  const lats = points.map(([lat]) => lat);
  const lons = points.map(([, lon]) => lon);
  const bbox = [Math.min(...lats), Math.min(...lons), Math.max(...lats), Math.max(...lons)];
  return notification({
    [METADATA_KEYS.spatialBbox]: bbox.join(','),
    [METADATA_KEYS.spatialPointCloud]: JSON.stringify(points),
  });
}
