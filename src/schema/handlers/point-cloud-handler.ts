import type { JsonValue } from '../../json/json-value.js';
import { IdentifierError } from '../identifier-error.js';
import { MAX_POINT_CLOUD_POINTS, type PointCloudRule } from '../identifier-rule.js';
import { referenceFloatText } from '../number-text.js';
import { boundingBoxOf, readJsonCoordinatePair } from './coordinates.js';
import type { LatLon, PointCloudFieldHandler, PointCloudValue } from './field-handler.js';

/** Limit on the canonical JSON text, inclusive (60 KiB), so the metadata fits a message header. */
export const MAX_POINT_CLOUD_JSON_BYTES = 61_440;

/**
 * PointCloudHandler (docs/design/rules/schema-and-validation.md §5.9): a JSON array of `[lat, lon]` points, order
 * and duplicates kept. The canonical text writes numbers as the reference family does (`1.0`),
 * and the size limit is measured on that text.
 */
export function createPointCloudHandler(field: string, rule: PointCloudRule): PointCloudFieldHandler {
  const maxPoints = rule.max_points ?? MAX_POINT_CLOUD_POINTS;
  return {
    kind: 'point_cloud',
    parse(value: JsonValue): PointCloudValue {
      if (!Array.isArray(value)) throw new IdentifierError(`field '${field}' must be a JSON array of [lat,lon] points`);
      if (value.length === 0) throw new IdentifierError(`field '${field}' point cloud must contain at least one point`);
      if (value.length > maxPoints) {
        throw new IdentifierError(`field '${field}' point cloud contains ${value.length} points, maximum is ${maxPoints}`);
      }
      const points: LatLon[] = value.map((item, index) => {
        const result = readJsonCoordinatePair(item);
        if ('reason' in result) throw new IdentifierError(`field '${field}' point ${index} is invalid: ${result.reason}`);
        return result.point;
      });
      const canonicalJson = `[${points.map(([lat, lon]) => `[${referenceFloatText(lat)},${referenceFloatText(lon)}]`).join(',')}]`;
      // Every character of the canonical text is ASCII, so its length is its size in bytes.
      if (canonicalJson.length > MAX_POINT_CLOUD_JSON_BYTES) {
        throw new IdentifierError(
          `field '${field}' point cloud canonical JSON is ${canonicalJson.length} bytes, maximum is ${MAX_POINT_CLOUD_JSON_BYTES} bytes`,
        );
      }
      return { canonicalJson, points, bbox: boundingBoxOf(points) };
    },
  };
}
