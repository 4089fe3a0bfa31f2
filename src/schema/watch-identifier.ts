import type { SpatialFilter } from '../filter/spatial-filter.js';
import type { FieldFilter, WatchSelection } from '../filter/watch-filter.js';
import { canonicalJson, compareCodePoints } from '../json/canonical-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/json-value.js';
import { TopicPattern, WILDCARD } from '../topic/topic-pattern.js';
import type { EventSchema, SchemaField } from './event-schema.js';
import type { LatLon } from './handlers/field-handler.js';
import { parsePointFilter } from './handlers/point-filter.js';
import { createPolygonHandler } from './handlers/polygon-handler.js';
import { assertUsableGenericEventType } from './generic-event-type.js';
import { IdentifierError } from './identifier-error.js';
import type { SchemaRegistry } from './schema-registry.js';
import { scalarText } from './scalar-text.js';
import { echo } from '../text/echo.js';

export type StreamEndpoint = 'watch' | 'replay';

const POLYGON = 'polygon';
const POINT = 'point';
const polygonFilter = createPolygonHandler(POLYGON);

/**
 * The first validation step of a stream request, run for every event type before the start cursor is looked at:
 * `point` and `polygon` together are refused, and a `point` must be a valid coordinate.
 */
export function checkSpatialShape(identifier: JsonObject): LatLon | undefined {
  const point = identifier[POINT];
  if (point !== undefined && identifier[POLYGON] !== undefined) {
    throw new IdentifierError('Cannot specify both identifier.polygon and identifier.point. Provide only one spatial filter.');
  }
  return point === undefined ? undefined : parsePointFilter(point);
}

/**
 * Validates a watch/replay identifier and turns it into what the request selects
 * (docs/design/rules/schema-and-validation.md §6.2, §7.2, §8; D6, D18, D19, D21). Problems are reported in a fixed
 * order: unknown names, then declared fields, both alphabetically. Throws `IdentifierError`.
 */
export function prepareWatch(
  registry: SchemaRegistry,
  endpoint: StreamEndpoint,
  request: { readonly event_type: string; readonly identifier: JsonObject },
  point: LatLon | undefined,
): WatchSelection {
  const schema = registry.get(request.event_type);
  return schema
    ? prepareSchemaBacked(schema, endpoint, request.identifier, point)
    : prepareGeneric(registry, request.event_type, request.identifier, point);
}

function prepareSchemaBacked(
  schema: EventSchema,
  endpoint: StreamEndpoint,
  identifier: JsonObject,
  point: LatLon | undefined,
): WatchSelection {
  const spatialKind = schema.spatialField?.handler.kind;
  for (const key of Object.keys(identifier).sort(compareCodePoints)) {
    if (schema.fields.has(key)) continue;
    const isSpatialFilterName = (key === POINT && spatialKind === 'polygon') || (key === POLYGON && spatialKind === 'point_cloud');
    if (!isSpatialFilterName) throw new IdentifierError(`Unknown field '${echo(key)}' provided for ${endpoint} operation`);
  }

  const tokens: string[] = schema.keyOrder.map(() => WILDCARD);
  const fieldFilters: FieldFilter[] = [];
  let spatial: SpatialFilter | undefined = point ? { kind: 'point_in_polygon', point } : undefined;

  for (const name of schema.fieldNames) {
    const field = schema.fields.get(name) as SchemaField;
    const value = identifier[name];
    const handler = field.handler;
    if (handler.kind === 'point_cloud') {
      if (value !== undefined) {
        throw new IdentifierError(`Field '${name}' cannot be used as a ${endpoint} filter; select point clouds with identifier.polygon`);
      }
      if (field.rule.required && identifier[POLYGON] === undefined) throw missing(name, endpoint);
      continue;
    }
    if (value === undefined) {
      // A `point` stands in for a required polygon (docs/design/rules/schema-and-validation.md §5.10).
      if (field.rule.required && !(handler.kind === 'polygon' && point)) throw missing(name, endpoint);
      continue;
    }
    if (isJsonObject(value)) {
      if (handler.kind !== 'scalar' || !handler.parseConstraint) {
        throw new IdentifierError(`Field '${name}' does not support constraint filters; expected scalar value`);
      }
      fieldFilters.push({ field: name, kind: 'constraint', constraint: handler.parseConstraint(value), source: canonicalJson(value) });
      continue;
    }
    if (handler.kind === 'polygon') {
      // The polygon's topic position stays open: geometry decides, not text (D19).
      if (value !== WILDCARD) spatial = { kind: 'polygon_intersects', polygon: handler.parse(value) };
      continue;
    }
    const text = scalarText(name, value);
    if (text === WILDCARD) continue; // D18: a scalar "*" means any value
    const canonical = handler.canonicalize(text);
    fieldFilters.push({ field: name, kind: 'exact', value: canonical });
    const position = schema.keyOrder.indexOf(name);
    if (position >= 0) tokens[position] = canonical;
  }

  const cloudPolygon = identifier[POLYGON];
  if (spatialKind === 'point_cloud' && cloudPolygon !== undefined) {
    spatial = cloudPolygonFilter(cloudPolygon);
  }

  return { eventType: schema.eventType, pattern: new TopicPattern([schema.base, ...tokens]), fieldFilters, spatial };
}

function cloudPolygonFilter(value: JsonValue): SpatialFilter | undefined {
  if (isJsonObject(value)) {
    throw new IdentifierError(`Field '${POLYGON}' does not support constraint filters; expected scalar value`);
  }
  return value === WILDCARD ? undefined : { kind: 'cloud_in_polygon', polygon: polygonFilter.parse(value) };
}

function missing(field: string, endpoint: StreamEndpoint): IdentifierError {
  return new IdentifierError(`Required field '${field}' missing for ${endpoint} operation`);
}

/**
 * Schema-less event types (accepted when strict mode is off): values are topic tokens in the order of their sorted keys, `*`
 * is a wildcard, and `point`/`polygon` still filter geometrically as in the reference.
 */
function prepareGeneric(registry: SchemaRegistry, eventType: string, identifier: JsonObject, point: LatLon | undefined): WatchSelection {
  assertUsableGenericEventType(registry, eventType);
  const tokens: string[] = [];
  let spatial: SpatialFilter | undefined = point ? { kind: 'point_in_polygon', point } : undefined;
  for (const key of Object.keys(identifier).sort(compareCodePoints)) {
    const value = identifier[key] as JsonValue;
    if (isJsonObject(value)) {
      throw new IdentifierError(`Field '${echo(key)}' constraint object is not supported without schema`);
    }
    // Spatial arrays (D27) still become a token; such requests match nothing here (docs/design/rules/schema-and-validation.md §3.3).
    const text = Array.isArray(value) && (key === POLYGON || key === POINT) ? canonicalJson(value) : scalarText(key, value);
    tokens.push(text);
    if (key === POLYGON && text !== WILDCARD) {
      spatial = { kind: 'polygon_intersects', polygon: polygonFilter.parse(value) };
    }
  }
  return { eventType, pattern: new TopicPattern([eventType, ...tokens]), fieldFilters: [], spatial };
}
