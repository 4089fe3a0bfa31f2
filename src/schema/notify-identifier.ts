import { METADATA_KEYS } from '../notification/stored-notification.js';
import { canonicalJson, compareCodePoints } from '../json/canonical-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/json-value.js';
import { encodeTopic } from '../topic/percent-codec.js';
import { MAX_TOPIC_BYTES, topicTooLongMessage } from '../topic/topic-limit.js';
import type { EventSchema, SchemaField } from './event-schema.js';
import type { BoundingBox, PolygonValue } from './handlers/field-handler.js';
import { assertUsableGenericEventType } from './generic-event-type.js';
import { IdentifierError } from './identifier-error.js';
import { canonicalFloatText } from './number-text.js';
import type { SchemaRegistry } from './schema-registry.js';
import { scalarText } from './scalar-text.js';
import { echo } from '../text/echo.js';

/** What notify stores for a validated request: the topic, the payload text and the identifier as metadata. */
export interface PreparedNotification {
  /** Wire topic. */
  readonly topic: string;
  readonly payload: string;
  readonly metadata: Record<string, string>;
}

export interface NotifyInput {
  readonly event_type: string;
  readonly identifier: JsonObject;
  readonly payload?: JsonValue;
}

const POINT_ON_NOTIFY = 'identifier.point is only supported for watch/replay endpoints, not /notification';

/** `identifier.point` filters streams only: refused on notify, for every event type, before authentication. */
export function assertNoPointOnNotify(identifier: JsonObject): void {
  if (Object.hasOwn(identifier, 'point')) throw new IdentifierError(POINT_ON_NOTIFY);
}

/**
 * Validates and canonicalises a notify request, then builds its topic, payload text and metadata.
 * Problems are reported in a fixed order, the reference's: unknown names, then declared fields, both
 * alphabetically, then the payload rule, then the topic length. Throws `IdentifierError`.
 */
export function prepareNotification(registry: SchemaRegistry, request: NotifyInput): PreparedNotification {
  const schema = registry.get(request.event_type);
  const prepared = schema ? prepareSchemaBacked(schema, request) : prepareGeneric(registry, request);
  const bytes = Buffer.byteLength(prepared.topic, 'utf8');
  if (bytes > MAX_TOPIC_BYTES) throw new IdentifierError(topicTooLongMessage(bytes));
  return prepared;
}

function prepareSchemaBacked(schema: EventSchema, request: NotifyInput): PreparedNotification {
  const { identifier } = request;
  // Sorted only when one is unknown: the first unknown name in code-point order is reported.
  const keys = Object.keys(identifier);
  if (!keys.every((key) => schema.fields.has(key))) {
    for (const key of keys.sort(compareCodePoints)) {
      if (!schema.fields.has(key)) throw new IdentifierError(`Unknown field '${echo(key)}' provided for notify operation`);
    }
  }

  const canonical: Record<string, JsonValue | readonly (readonly number[])[]> = {};
  const tokens: Record<string, string> = {};
  const metadata: Record<string, string> = {};
  for (const name of schema.fieldNames) {
    const field = schema.fields.get(name) as SchemaField;
    const value = identifier[name];
    if (value === undefined) throw new IdentifierError(`Required field '${name}' missing for notify operation`);
    if (isJsonObject(value)) {
      throw new IdentifierError(`Field '${name}' constraint object is not supported for notify operation`);
    }
    const canonicalValue = canonicalizeField(field, value, metadata);
    if (canonicalValue === undefined) continue;
    canonical[name] = canonicalValue;
    // A polygon listed in key_order puts its spatial_geometry text in the subject, as the reference does.
    tokens[name] = typeof canonicalValue === 'string' ? canonicalValue : (metadata[METADATA_KEYS.spatialGeometry] as string);
  }

  if (schema.payloadRequired && request.payload === undefined) {
    throw new IdentifierError('Payload is required for notify operation based on schema configuration');
  }

  // key_order names declared fields only (startup rule B1.3), and a point cloud is never in it.
  const topic = encodeTopic([schema.base, ...schema.keyOrder.map((key) => tokens[key] as string)]);
  metadata[METADATA_KEYS.identifier] = canonicalJson(canonical);
  return { topic, payload: payloadText(request.payload), metadata };
}

/**
 * Returns the value the D7 header carries: a canonical string, or for a polygon its canonical
 * array (D27). A point cloud returns nothing: it already travels in its own header, and repeating
 * up to 60 KiB there buys nothing.
 */
function canonicalizeField(
  field: SchemaField,
  value: JsonValue,
  metadata: Record<string, string>,
): string | PolygonValue['canonical'] | undefined {
  const { handler } = field;
  switch (handler.kind) {
    case 'scalar':
      return handler.canonicalize(scalarText(field.name, value));
    case 'polygon': {
      const polygon = handler.parse(value);
      metadata[METADATA_KEYS.spatialBbox] = bboxText(polygon.bbox);
      // Polygon text, the form reference readers understand; CloudEvents use the D7 header's array.
      metadata[METADATA_KEYS.spatialGeometry] = polygon.geometryText;
      return polygon.canonical;
    }
    case 'point_cloud': {
      const cloud = handler.parse(value);
      metadata[METADATA_KEYS.spatialBbox] = bboxText(cloud.bbox);
      metadata[METADATA_KEYS.spatialPointCloud] = cloud.canonicalJson;
      return undefined;
    }
  }
}

function bboxText(bbox: BoundingBox): string {
  return bbox.map(canonicalFloatText).join(',');
}

/** Generic (schema-less) event types, accepted when strict mode is off. */
function prepareGeneric(registry: SchemaRegistry, request: NotifyInput): PreparedNotification {
  const { event_type: eventType, identifier } = request;
  assertUsableGenericEventType(registry, eventType);
  // Keys are the caller's: a plain object would turn `__proto__` into a prototype write (a 500).
  const canonical = Object.create(null) as Record<string, string>;
  const keys = Object.keys(identifier).sort(compareCodePoints);
  for (const key of keys) {
    const value = identifier[key] as JsonValue;
    if (isJsonObject(value)) {
      throw new IdentifierError(`Field '${echo(key)}' constraint object is not supported for notify operation`);
    }
    const text = scalarText(key, value);
    if (text === '') throw new IdentifierError(`Field '${echo(key)}' cannot be empty`);
    canonical[key] = text;
  }
  const topic = encodeTopic([eventType, ...keys.map((key) => canonical[key] as string)]);
  return {
    topic,
    payload: payloadText(request.payload),
    metadata: { [METADATA_KEYS.identifier]: canonicalJson(canonical) },
  };
}

/** Compact JSON with sorted keys; an absent payload is stored as `null`, as the reference stores it. */
function payloadText(payload: JsonValue | undefined): string {
  return canonicalJson(payload ?? null);
}
