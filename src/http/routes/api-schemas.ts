import Type from 'typebox';
import { STREAM_ADMIN_COMPONENTS } from './stream-admin-schemas.js';

/**
 * TypeBox models of the HTTP API for the OpenAPI document (docs/design/rules/operations.md §4.4). Request bodies are
 * parsed by `request-body.ts`, which produces the protocol's exact error texts; these models
 * describe the same shapes for clients and tools.
 */

export const HealthResponse = Type.Object({ status: Type.Literal('ok') }, { $id: 'HealthResponse' });

export const ReadyResponse = Type.Object(
  { backend_connected: Type.Literal(true), status: Type.Literal('ready') },
  { $id: 'ReadyResponse' },
);

export const NotReadyResponse = Type.Object(
  { backend_connected: Type.Literal(false), status: Type.Literal('not_ready') },
  { $id: 'NotReadyResponse' },
);

export const NotificationRequest = Type.Object(
  {
    event_type: Type.String({ description: 'A configured event type (or any name when strict mode is off).' }),
    identifier: Type.Record(
      Type.String(),
      // The shapes a client may send (docs/design/rules/reference-0.13.md §3, §9); the handlers judge the values.
      Type.Union([
        Type.String({ description: 'Any value as text; a polygon or point string that starts with [ is read as JSON.' }),
        Type.Number({ description: 'A typed JSON number, read through its literal text (4 and 4.0 differ).' }),
        Type.Boolean(),
        Type.Array(Type.Number(), {
          minItems: 2,
          maxItems: 2,
          description: 'watch/replay point: [lat, lon].',
        }),
        Type.Array(Type.Array(Type.Number(), { minItems: 2, maxItems: 2 }), {
          description: 'polygon: closed [[lat, lon], …] ring of at least 4 pairs; point_cloud on notify: [[lat, lon], …].',
        }),
        Type.Record(Type.String(), Type.Unknown(), {
          description: 'watch/replay: a constraint object such as {"gte": 5}.',
        }),
      ]),
      {
        description:
          'Identifier values validated by the event type schema: strings, typed JSON numbers for IntHandler/FloatHandler fields, and arrays for geometry (polygon as [[lat,lon],…] or "(lat,lon,…)" text; a CloudEvent always carries the polygon as the array). watch/replay also accept constraint objects ({"gte": 5}), "*", and the spatial filters polygon/point (point as [lat,lon] or "lat,lon").',
      },
    ),
    from_id: Type.Optional(
      Type.Union([Type.String({ pattern: '^\\+?[0-9]+$' }), Type.Null()], {
        description: 'watch/replay: inclusive start sequence, a decimal string. Ignored by notify.',
      }),
    ),
    from_date: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'watch/replay: inclusive start time (RFC 3339, naive UTC, or unix seconds/milliseconds). Ignored by notify.',
      }),
    ),
    to_id: Type.Optional(
      Type.Union([Type.String({ pattern: '^\\+?[0-9]+$' }), Type.Null()], {
        description: 'replay only: inclusive end sequence, a decimal string; at most one of to_id/to_date. watch and notify refuse it.',
      }),
    ),
    to_date: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'replay only: inclusive end time, in the from_date formats; at most one of to_id/to_date. watch and notify refuse it.',
      }),
    ),
    payload: Type.Optional(Type.Unknown({ description: 'notify: any JSON value, stored unchanged. Ignored by watch/replay.' })),
  },
  { $id: 'NotificationRequest', additionalProperties: false },
);

export const NotificationResponse = Type.Object(
  {
    status: Type.Literal('success'),
    request_id: Type.String({ format: 'uuid' }),
    processed_at: Type.String({ description: 'UTC, whole seconds: YYYY-MM-DDTHH:MM:SSZ' }),
  },
  { $id: 'NotificationResponse' },
);

/** Batch notify (D48): one item's outcome, the single endpoint's answer for it with its index first. */
export const NotificationBatchResult = Type.Union(
  [
    Type.Object({
      index: Type.Integer({ minimum: 0, description: 'Position of the notification in the batch, from 0.' }),
      status: Type.Literal('success'),
      request_id: Type.String({ format: 'uuid' }),
      processed_at: Type.String({ description: 'UTC, whole seconds: YYYY-MM-DDTHH:MM:SSZ' }),
    }),
    Type.Object({
      index: Type.Integer({ minimum: 0, description: 'Position of the notification in the batch, from 0.' }),
      code: Type.String(),
      details: Type.Optional(Type.String()),
      error: Type.String(),
      message: Type.String(),
      request_id: Type.String({ format: 'uuid' }),
      configured_event_types: Type.Optional(Type.Array(Type.String())),
    }),
  ],
  {
    $id: 'NotificationBatchResult',
    description:
      "Stored: notify's success body; not stored: notify's error body for that notification (code, error, message, ...). `index` first.",
  },
);

export const NotificationBatchResponse = Type.Object(
  {
    request_id: Type.String({ format: 'uuid' }),
    status: Type.Union([Type.Literal('success'), Type.Literal('partial'), Type.Literal('error')], {
      description: "success: every notification stored (200); partial: some (207); error: none (400, or the storage failure's 5xx).",
    }),
    stored: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    results: Type.Array(Type.Ref('NotificationBatchResult'), { description: 'One per notification, in request order.' }),
  },
  { $id: 'NotificationBatchResponse' },
);

export const PayloadConfig = Type.Object({ required: Type.Boolean() }, { $id: 'PayloadConfig' });

export const ApiEventSchema = Type.Object(
  {
    identifier: Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), {
      description: 'Field name → handler type, required flag, handler parameters (null when unset) and description.',
    }),
    payload: Type.Union([Type.Ref('PayloadConfig'), Type.Null()]),
  },
  { $id: 'ApiEventSchema' },
);

/** D43: changes whenever a reload changes the schemas; the opening frame of every stream carries it too. */
const SCHEMA_VERSION = Type.String({
  pattern: '^[0-9a-f]{16}$',
  description:
    'Version of the schema configuration (notification_schema and strict mode): 16 hex digits of its SHA-256, changed by a reload that changes the schemas. Streams carry it in their opening frame.',
});

export const SchemaListResponse = Type.Object(
  {
    event_types: Type.Array(Type.String()),
    message: Type.Optional(Type.String()),
    schema: Type.Record(Type.String(), Type.Ref('ApiEventSchema')),
    schema_version: SCHEMA_VERSION,
    status: Type.Literal('success'),
    total_schemas: Type.Integer(),
  },
  { $id: 'SchemaListResponse' },
);

export const SchemaResponse = Type.Object(
  { event_type: Type.String(), schema: Type.Ref('ApiEventSchema'), schema_version: SCHEMA_VERSION, status: Type.Literal('success') },
  { $id: 'SchemaResponse' },
);

export const SchemaNotFoundResponse = Type.Object(
  {
    available_types: Type.Optional(Type.Array(Type.String())),
    message: Type.String(),
    request_id: Type.String({ format: 'uuid' }),
    status: Type.Literal('error'),
  },
  { $id: 'SchemaNotFoundResponse' },
);

export const ErrorResponse = Type.Object(
  {
    code: Type.String(),
    details: Type.Optional(Type.String()),
    error: Type.String(),
    message: Type.String(),
    request_id: Type.String({ format: 'uuid' }),
    configured_event_types: Type.Optional(Type.Array(Type.String())),
    topic: Type.Optional(Type.String()),
  },
  { $id: 'ErrorResponse', description: 'Every error: code, error, message and request_id, plus details where the API defines them.' },
);

export const WipeStreamRequest = Type.Object(
  { stream_name: Type.String({ description: 'A topic base in any case, or an event type.' }) },
  { $id: 'WipeStreamRequest' },
);

export const WipeResponse = Type.Object(
  { success: Type.Boolean(), message: Type.String(), request_id: Type.String({ format: 'uuid' }) },
  { $id: 'WipeResponse' },
);

export const ReloadResponse = Type.Object(
  {
    success: Type.Boolean(),
    message: Type.String(),
    event_types_added: Type.Array(Type.String()),
    event_types_removed: Type.Array(Type.String()),
    event_types_changed: Type.Array(Type.String()),
    restart_required: Type.Array(Type.String(), { description: 'Changed settings that take effect at the next restart' }),
    request_id: Type.String({ format: 'uuid' }),
  },
  { $id: 'ReloadResponse' },
);

export const DeleteNotificationResponse = Type.Object(
  {
    success: Type.Boolean(),
    message: Type.String(),
    notification_id: Type.String(),
    request_id: Type.String({ format: 'uuid' }),
  },
  { $id: 'DeleteNotificationResponse' },
);

/** Component schemas, registered once so routes can refer to them by name. */
export const API_COMPONENTS = [
  HealthResponse,
  ReadyResponse,
  NotReadyResponse,
  NotificationRequest,
  NotificationResponse,
  NotificationBatchResult,
  NotificationBatchResponse,
  PayloadConfig,
  ApiEventSchema,
  SchemaListResponse,
  SchemaResponse,
  SchemaNotFoundResponse,
  ErrorResponse,
  WipeStreamRequest,
  WipeResponse,
  DeleteNotificationResponse,
  ReloadResponse,
  ...STREAM_ADMIN_COMPONENTS,
];

export const ref = (id: string) => Type.Ref(id);

/** The `security` of notify/watch/replay (anonymous allowed) and of admin routes. */
type SecurityRequirement = Readonly<Record<string, readonly string[]>>;
export const OPTIONAL_AUTH: readonly SecurityRequirement[] = [{}, { bearer_jwt: [] }, { basic: [] }];
export const REQUIRED_AUTH: readonly SecurityRequirement[] = [{ bearer_jwt: [] }, { basic: [] }];

export const SSE_RESPONSE = {
  description: 'text/event-stream of aviso frames (see the streaming documentation).',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
};
