import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';
import { IdempotencySchema } from './idempotency-model.js';
import { NotificationEndpointSchema } from './notification-endpoint-model.js';
import { AuthSchema, EcpdsSchema, MetricsSchema } from './model-access.js';
import { ApplicationSchema, LoggingSchema, type CorsSchema, type HomepageSchema, type TlsSchema } from './model-application.js';
import { BackendSchema, type JetStreamSchema } from './model-backend.js';
import { unsigned } from './model-fields.js';
import { NotificationSchemaSchema, type EventSchemaSchema, type StoragePolicySchema } from './model-schema.js';

export * from './model-access.js';
export * from './model-application.js';
export * from './model-backend.js';
export * from './model-schema.js';
export { NOTIFICATION_ENDPOINT_DEFAULTS, type NotificationEndpointConfig } from './notification-endpoint-model.js';

/**
 * The TypeBox model of the configuration file (docs/design/rules/operations.md §1.4): the single source of truth
 * for validation (src/config/conform.ts), default values, the TypeScript types the rest of the code
 * uses, `docs/configuration.md` and `schemas/config.schema.json` (scripts/config-reference/reference.ts).
 *
 * Conventions of this model, relied on by the loader and the reference generator:
 *
 * - A field with a default is written WITHOUT `Type.Optional` and carries `default`: the static
 *   type then describes the configuration *after* defaults are filled (no `| undefined` for the
 *   code to handle), while the loader and the generated JSON Schema treat any field with a
 *   `default` as optional in the file.
 * - `Type.Optional` without a default marks a field whose absence means something (a token that
 *   is not set, a cap that is not set).
 * - `additionalProperties: false` marks the sections where an unknown key is a load error
 *   (docs/design/rules/operations.md §1.3); everywhere else unknown keys are ignored and dropped.
 * - Enumerations are unions of literals; identifier rules are a union discriminated by `type`.
 * - Unsigned integers are `minimum: 0`; zero is accepted here when it is a valid literal value
 *   and rejected by the semantic stage (src/config/validate.ts) where it makes no sense, so
 *   that each message can say why.
 *
 * The sections are built in `model-application.ts`, `model-access.ts`, `model-backend.ts` and
 * `model-schema.ts`; this file puts them together and names the types.
 */

// ---------------------------------------------------------------------------------------------
// watch_endpoint: each field has its own default, so a file that sets one field of the section
// keeps the defaults of the others (the reference needed the whole section once it was present).

const WatchEndpointSchema = Type.Object(
  {
    sse_heartbeat_interval_sec: unsigned('Period of `heartbeat` SSE events, in seconds. > 0.', 30),
    connection_max_duration_sec: unsigned(
      'Lifetime of a watch in seconds before `connection-closing` with reason `max_duration_reached`. > 0.',
      3600,
    ),
    replay_batch_size: unsigned('Messages fetched per historical batch. > 0.', 100),
    max_historical_notifications: unsigned(
      'Cap on historical notifications delivered by one request (per-schema values override it). > 0.',
      10000,
    ),
    replay_batch_delay_ms: unsigned('Pause between historical batches in milliseconds; `0` means no pause.', 100),
    concurrent_notification_processing: unsigned(
      'Accepted for compatibility (> 0). CloudEvents are rendered once per notification, in order, and shared by every stream, so there is nothing to run in parallel.',
      15,
    ),
    max_buffered_events: unsigned(
      'Outgoing events buffered per stream; a stream that overflows it ends with `connection-closing` reason `end_of_stream`, cause `slow_consumer` (D9, D32). > 0.',
      10000,
    ),
    max_buffered_bytes: unsigned(
      'Bytes one stream may hold for a client that is not reading (its queue and what Node has not yet handed to the kernel); passing it is the slow-consumer close, as for `max_buffered_events`. At least 4 × `application.max_body_bytes`, so one stream can always take the largest notification. Default 8 MiB.',
      8 * 1024 * 1024,
    ),
    max_total_buffered_bytes: unsigned(
      'Bytes all streams of the process together may hold for their clients; past it, the streams holding the most are closed as slow consumers. At least `max_buffered_bytes`. Default 256 MiB.',
      256 * 1024 * 1024,
    ),
    stall_timeout_sec: unsigned(
      'No silent stall (D37): a stream holding bytes whose socket takes none for this long is closed as a slow consumer, and a closed stream whose client has not read its end this long after the close is reset (HTTP/1.1: the TCP connection; HTTP/2: the stream), so the client reconnects from its cursor. > 0.',
      30,
    ),
  },
  { default: {}, description: 'Watch and replay streams. Each field has its own default.' },
);

// ---------------------------------------------------------------------------------------------
// the whole file

export const AppConfigSchema = Type.Object(
  {
    application: ApplicationSchema,
    logging: LoggingSchema,
    auth: AuthSchema,
    ecpds: Type.Optional(EcpdsSchema),
    metrics: MetricsSchema,
    notification_backend: BackendSchema,
    notification_schema: Type.Optional(NotificationSchemaSchema),
    notification_schema_strict: Type.Optional(
      Type.Boolean({
        description: 'Reject event types that have no schema. Unset: `true` when `notification_schema` has an entry, else `false`.',
      }),
    ),
    watch_endpoint: WatchEndpointSchema,
    notification_endpoint: NotificationEndpointSchema,
    idempotency: IdempotencySchema,
  },
  { description: 'aviso-ts configuration file. Unknown top-level keys are ignored.' },
);

export type AppConfig = Static<typeof AppConfigSchema>;
export type ApplicationConfig = Static<typeof ApplicationSchema>;
export type HomepageConfig = Static<typeof HomepageSchema>;
export type CorsConfig = Static<typeof CorsSchema>;
export type TlsConfig = Static<typeof TlsSchema>;
export type AuthConfig = Static<typeof AuthSchema>;
export type EcpdsConfig = Static<typeof EcpdsSchema>;
export type JetStreamConfig = Static<typeof JetStreamSchema>;
export type WatchEndpointConfig = Static<typeof WatchEndpointSchema>;
/** Every `watch_endpoint` default, for code that builds an app without a configuration file. */
export const WATCH_ENDPOINT_DEFAULTS: WatchEndpointConfig = Value.Default(WatchEndpointSchema, {}) as WatchEndpointConfig;
export type EventSchemaConfig = Static<typeof EventSchemaSchema>;
export type StoragePolicyConfig = Static<typeof StoragePolicySchema>;

/** The backend kinds the server can build: in memory (one process) and JetStream. */
export const BACKEND_KINDS = ['in_memory', 'jetstream'] as const;

/** `storage_policy` fields in the order they are checked and reported. */
export const STORAGE_POLICY_FIELDS = [
  'retention_time',
  'max_messages',
  'max_size',
  'allow_duplicates',
  'compression',
] as const satisfies readonly (keyof StoragePolicyConfig)[];
