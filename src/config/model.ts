import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';
import { IdentifierRule } from '../schema/identifier-rule.js';
import { IdempotencySchema } from './idempotency-model.js';

/**
 * The TypeBox model of the configuration file (operations.md §1.4): the single source of truth
 * for validation (src/config/load.ts), default values, the TypeScript types the rest of the code
 * uses, `docs/configuration.md` and `schemas/config.schema.json` (src/config/reference.ts).
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
 *   (operations.md §1.3); everywhere else unknown keys are ignored and dropped.
 * - Enumerations are unions of literals; identifier rules are a union discriminated by `type`.
 * - Unsigned integers are `minimum: 0`; zero is accepted here when it is a valid literal value
 *   and rejected by the semantic stage (src/config/validate.ts) where it makes no sense, so
 *   that each message can say why.
 */

const unsigned = (description: string, defaultValue?: number) =>
  Type.Integer(defaultValue === undefined ? { minimum: 0, description } : { minimum: 0, default: defaultValue, description });

const port = (description: string) => Type.Integer({ minimum: 0, maximum: 65535, description });

/** Realm name → role names (operations.md §2.6). `"*"` grants every role of that realm. */
const RoleMap = (description: string) => Type.Record(Type.String(), Type.Array(Type.String()), { description });

// ---------------------------------------------------------------------------------------------
// application (§1.4.1)

/**
 * The homepage's links (D29, reference-0.13.md §5). This project has no published documentation
 * site or repository URL of its own yet, so the server defaults point at a chosen repository
 * location and its `docs/` folder; operators override them.
 */
export const HOMEPAGE_DEFAULTS = {
  client_documentation_url: 'https://sites.ecmwf.int/docs/aviso-client/main/',
  client_repository_url: 'https://github.com/ecmwf/aviso-client',
  server_documentation_url: 'https://github.com/aviso-ts/aviso-ts/tree/main/docs',
  server_repository_url: 'https://github.com/aviso-ts/aviso-ts',
} as const;

const homepageUrl = (key: keyof typeof HOMEPAGE_DEFAULTS, description: string) =>
  Type.String({
    default: HOMEPAGE_DEFAULTS[key],
    description: `${description} An absolute \`http\`/\`https\` URL with a host and no user info (checked at startup).`,
  });

export const HomepageSchema = Type.Object(
  {
    client_documentation_url: homepageUrl('client_documentation_url', 'Client documentation, under "Use aviso".'),
    client_repository_url: homepageUrl('client_repository_url', 'Client source repository, under "Use aviso".'),
    server_documentation_url: homepageUrl('server_documentation_url', 'Server documentation, under "Operate the server".'),
    server_repository_url: homepageUrl('server_repository_url', 'Server source repository, under "Operate the server".'),
  },
  { default: {}, description: 'Links shown on the homepage (`GET /`). Each field has its own default.' },
);

/** §2 of browser.md: CORS for `/api/v1/*`, off unless origins are listed (src/http/cors.ts). */
export const CorsSchema = Type.Object(
  {
    allowed_origins: Type.Array(Type.String(), {
      default: [],
      description:
        'Origins (`scheme://host[:port]`, e.g. `https://console.example.org`) whose pages may call `/api/v1/*`. A listed origin may send credentials (cookies, `Authorization`); `"*"` lets any other origin read without credentials. Empty: no CORS headers at all (streams keep their `Access-Control-Allow-Origin: *`). A page on an origin not allowed here (nor the server\'s own) cannot change state: its POST/DELETE requests get `403 CROSS_ORIGIN_REQUEST_REFUSED` (docs/security.md, "Cross-site writes").',
    }),
  },
  { default: {}, description: 'Cross-origin access for browser pages on other origins. Off by default.' },
);

/** §3 of browser.md: HTTPS with HTTP/2 and HTTP/1.1 on one port (src/http/tls-options.ts). */
export const TlsSchema = Type.Object(
  {
    cert_file: Type.String({ description: 'PEM file with the server certificate (and its chain). Read at startup.' }),
    key_file: Type.String({ description: 'PEM file with the private key of `cert_file`. Read at startup.' }),
    ca_file: Type.Optional(
      Type.String({ description: 'PEM file with the CA certificates that complete the chain of `cert_file` (intermediates it does not hold itself). Optional; client certificates are not requested.' }),
    ),
  },
  {
    description:
      'Serve HTTPS with HTTP/2 (ALPN `h2`) and HTTP/1.1 fallback on `port`. Unset: plain HTTP/1.1.',
  },
);

export const ApplicationSchema = Type.Object(
  {
    host: Type.String({ description: 'Bind address of the public HTTP server.' }),
    port: port(
      'Bind port of the public HTTP server. `0` picks an ephemeral port (the actual port is logged in `startup.server.started`).',
    ),
    base_url: Type.String({
      default: 'http://localhost',
      description: 'Prefix used when building CloudEvent `source` values.',
    }),
    static_files_path: Type.String({
      default: '/app/static',
      description: 'Directory served under `/static/` and holding `index.html` for `/`.',
    }),
    max_body_bytes: Type.Integer({
      minimum: 1,
      default: 262144,
      description: 'Largest accepted request body in bytes; a larger body is answered `413 PAYLOAD_TOO_LARGE` (D15).',
    }),
    max_header_bytes: Type.Integer({
      minimum: 1024,
      maximum: 1048576,
      default: 16384,
      description:
        'Largest accepted request head (request line and all headers together) in bytes; a larger one is answered `431` and the connection is closed.',
    }),
    headers_timeout_ms: Type.Integer({
      minimum: 1,
      default: 30000,
      description:
        'Time a client has to send the complete request head, in milliseconds; a slower one (slow-loris) is answered `408 REQUEST_TIMEOUT` and disconnected. Checked at least every 1 s: the effective bound is up to one check interval longer.',
    }),
    request_timeout_ms: Type.Integer({
      minimum: 1,
      default: 60000,
      description:
        'Time a client has to send the complete request (head and body), in milliseconds; must be ≥ `headers_timeout_ms`. It bounds receiving the request only: a watch/replay stream may then stay open for its whole lifetime.',
    }),
    keep_alive_timeout_ms: Type.Integer({
      minimum: 1,
      default: 72000,
      description: 'How long an idle keep-alive connection is kept open between requests, in milliseconds.',
    }),
    max_connections: Type.Integer({
      minimum: 1,
      default: 10000,
      description:
        'Most simultaneous client connections; further connections are closed at once by the server, without an answer. Over HTTP/1.1 each watch/replay stream holds one; an HTTP/2 connection carries up to 256. The default bounds what connections that never send a request can cost: a TLS handshake left unfinished keeps about 55 KB of native memory until `headers_timeout_ms`, so 10,000 of them take about 540 MiB (see the security docs). Raise it for more streams per process, with the memory to match.',
    }),
    homepage: HomepageSchema,
    cors: CorsSchema,
    tls: Type.Optional(TlsSchema),
    workers: Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('auto')], {
      default: 1,
      description:
        'Server processes sharing `port` (D36): `1` is one process as always; `N` runs a primary process that serves the metrics port and N worker processes that each serve the public port; `auto` is the number of CPUs this process may use (its CPU affinity, `os.availableParallelism()`). Above 1 needs `notification_backend.kind: jetstream` (checked at startup). See the deployment docs for sizing.',
    }),
  },
  { description: 'The public HTTP server.' },
);

// ---------------------------------------------------------------------------------------------
// logging (§1.4.2; per-field defaults are deviation §7 item 3)

/** OTLP log export (reference-0.13.md §7): a second sink beside stdout, off unless enabled. */
export const OtlpSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      description: 'Also export every log record to an OpenTelemetry collector. stdout logging continues unchanged.',
    }),
    endpoint: Type.Optional(
      Type.String({
        description:
          'Collector address, required (non-blank) when `enabled`. Without a scheme `http://` is assumed; with `protocol: http`, `/v1/logs` is appended unless already there.',
      }),
    ),
    protocol: Type.Union([Type.Literal('grpc'), Type.Literal('http')], {
      default: 'grpc',
      description: '`grpc` (OTLP/gRPC, usually port 4317) or `http` (OTLP/HTTP with JSON bodies, usually port 4318).',
    }),
  },
  { default: {}, description: 'OTLP log export. Optional; disabled by default.' },
);

export const LoggingSchema = Type.Object(
  {
    level: Type.String({
      default: 'info',
      description:
        '`trace`, `debug`, `info`, `warn` or `error`, case-insensitive. Any other value means `info` (never a startup error). Overridden by `RUST_LOG` (see the logging docs).',
    }),
    format: Type.Optional(
      Type.String({ description: 'Accepted for compatibility and ignored: logs are always pino JSON lines.' }),
    ),
    access_log: Type.Union([Type.Literal('debug'), Type.Literal('info')], {
      default: 'debug',
      description:
        'Level of the per-request access line `http.request.completed` (D34; the reference writes none). `debug` (default): written only when `level` is `debug` or `trace`, so a notify writes its one `api.notification.processed` line. `info`: business routes write it at `info` again; infrastructure paths (`/health`, `/ready`, `/metrics`, static files, docs) stay at `debug`.',
    }),
    otlp: OtlpSchema,
  },
  { default: {}, description: 'Log output. Optional; each field has its own default.' },
);

// ---------------------------------------------------------------------------------------------
// auth (§1.4.3)

export const AuthModeSchema = Type.Union([Type.Literal('direct'), Type.Literal('trusted_proxy')], {
  default: 'direct',
  description:
    '`direct`: credentials are verified by auth-o-tron, which returns a JWT. `trusted_proxy`: a fronting proxy forwards a JWT.',
});

export const AuthSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      description: 'Master switch. When false every endpoint, admin included, is reachable anonymously (startup warning).',
    }),
    mode: AuthModeSchema,
    auth_o_tron_url: Type.String({
      default: '',
      description: 'Base URL of auth-o-tron. Required (non-blank) when `enabled` and `mode` is `direct`.',
    }),
    jwt_secret: Type.String({
      default: '',
      description: 'HMAC secret used to verify JWTs in both modes. Required (non-blank) when `enabled`. Never logged.',
    }),
    admin_roles: Type.Record(Type.String(), Type.Array(Type.String()), {
      default: {},
      description: 'Realm → roles that grant admin. Needs at least one realm with a non-empty list when `enabled`.',
    }),
    timeout_ms: unsigned('Whole-exchange timeout of an auth-o-tron call, in milliseconds. Must be > 0 when `enabled`.', 5000),
    browser_cookie: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Name of a cookie that also carries the bearer token, read on `GET /api/v1/watch` and `GET /api/v1/replay` only (for `EventSource`, which cannot send headers; an `Authorization` header wins). Absent: off. Tokens in URLs are never accepted.',
      }),
    ),
  },
  {
    additionalProperties: false,
    default: {},
    description: 'Global authentication. Optional; absent means disabled. Unknown keys are a load error.',
  },
);

// ---------------------------------------------------------------------------------------------
// ecpds (§1.4.4)

export const EcpdsSchema = Type.Object(
  {
    username: Type.String({ description: 'Service account for HTTP Basic auth against ECPDS.' }),
    password: Type.String({ description: 'Service-account password. Redacted in every log and dump.' }),
    servers: Type.Array(Type.String(), {
      description:
        'ECPDS base URLs (path prefixes allowed; no query, no fragment). `https://` for any host; `http://` only for `127.0.0.1`, `[::1]`, `localhost`.',
    }),
    match_key: Type.String({ description: 'Identifier field whose canonical value is the destination to check.' }),
    target_field: Type.String({
      default: 'name',
      description: 'Field of each ECPDS destination record whose string value is compared.',
    }),
    cache_ttl_seconds: unsigned('Lifetime of a cached per-user destination list. > 0.', 300),
    max_entries: unsigned('Maximum number of cached usernames. > 0.', 10000),
    request_timeout_seconds: unsigned(
      'Total budget of one ECPDS HTTP exchange (DNS, connect, TLS, send, full body read). > 0.',
      30,
    ),
    connect_timeout_seconds: unsigned('Budget for DNS + TCP + TLS only, within the total. > 0.', 5),
    partial_outage_policy: Type.Union([Type.Literal('strict'), Type.Literal('any_success')], {
      default: 'strict',
      description: 'Failure tolerance when several servers are configured.',
    }),
  },
  {
    additionalProperties: false,
    description:
      'ECPDS destination plugin. Optional; parsed strictly even when no stream uses it, validated only when a stream lists `ecpds` in `auth.plugins`.',
  },
);

// ---------------------------------------------------------------------------------------------
// metrics (§1.4.5)

export const MetricsSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      description: 'When false no metrics are collected and no metrics server is started.',
    }),
    host: Type.String({
      default: '127.0.0.1',
      description: 'Bind address of the separate metrics server (loopback by default so it is not public).',
    }),
    port: Type.Optional(
      port('Port of the metrics server. Required when `enabled`; must be non-zero and differ from `application.port`.'),
    ),
  },
  { default: {}, description: 'Prometheus metrics on a separate listener.' },
);

// ---------------------------------------------------------------------------------------------
// notification_backend (§1.4.6, backends.md §6.1, §7.1)

export const InMemorySchema = Type.Object(
  {
    max_history_per_topic: unsigned('Notifications kept per exact topic. > 0.', 1),
    max_topics: unsigned('Distinct topics kept before the least recently used one is evicted. > 0.', 10000),
    max_total_size: Type.String({
      default: '256Mi',
      description:
        'Bytes all stored notifications may hold together, a size literal (`64Mi`, `1G`, …): a notification that would pass it first evicts the oldest ones, by storage order over every topic and base. Each counts its topic, payload and metadata at 1 byte a character (2 when one is beyond U+00FF) plus 1 KiB. At least 4 × `application.max_body_bytes` + 8 KiB.',
    }),
    enable_metrics: Type.Boolean({ default: false, description: 'Extra debug logging of queue sizes.' }),
  },
  { default: {}, description: 'Settings of the in-memory backend, read only when `kind` is `in_memory`.' },
);

export const JetStreamSchema = Type.Object(
  {
    nats_url: Type.String({ default: 'nats://localhost:4222', description: 'NATS server URL, or several separated by commas (the servers of a cluster). Must not be blank.' }),
    token: Type.Optional(
      Type.String({
        description:
          'NATS token authentication. When absent, the `NATS_TOKEN` environment variable is used (filled in at load). Never logged.',
      }),
    ),
    timeout_seconds: unsigned('Timeout of each startup connect attempt. > 0.', 30),
    retry_attempts: unsigned('Startup connect attempts before backend start fails. > 0.', 3),
    max_messages: Type.Optional(Type.Integer({ description: 'Default per-stream message cap (signed 64-bit).' })),
    max_bytes: Type.Optional(Type.Integer({ description: 'Default per-stream byte cap (signed 64-bit).' })),
    retention_time: Type.Optional(
      Type.String({
        description: 'Default per-stream maximum age, a duration literal (`50s`, `10m`, `1h`, `30d`, `1w`). > 0.',
      }),
    ),
    storage_type: Type.Union([Type.Literal('file'), Type.Literal('memory')], {
      default: 'file',
      description: 'Stream storage.',
    }),
    replicas: Type.Optional(unsigned('Stream replicas.')),
    retention_policy: Type.Union([Type.Literal('limits'), Type.Literal('interest'), Type.Literal('workqueue')], {
      default: 'limits',
      description:
        'Stream retention policy. Only `limits` is accepted at startup: `interest` and `workqueue` would delete notifications that replay needs (D22).',
    }),
    discard_policy: Type.Union([Type.Literal('old'), Type.Literal('new')], {
      default: 'old',
      description: 'Stream discard policy.',
    }),
    enable_auto_reconnect: Type.Optional(
      Type.Boolean({
        description:
          'Deprecated and ignored (removed in aviso-server 0.13): the client always reconnects, bounded by `max_reconnect_attempts`. Setting it logs a startup warning.',
      }),
    ),
    max_reconnect_attempts: unsigned(
      'Reconnect attempts after the connection is lost; `0` means unlimited. A positive value gives up for good once used up: every request then fails and `/ready` answers 503 until the process is restarted.',
      0,
    ),
    reconnect_delay_ms: unsigned('Wait between reconnect attempts and between startup connect attempts. > 0.', 2000),
    publish_retry_attempts: unsigned('Total attempts of a publish failing with a transient transport error. > 0.', 5),
    publish_retry_base_delay_ms: unsigned('Base of the exponential publish-retry backoff. > 0.', 150),
    idempotency_bucket: Type.String({
      default: 'AVISO_IDEMPOTENCY',
      description:
        'Key-value bucket (stream `KV_<name>`, subjects `$KV.<name>.>`) holding the records of `Idempotency-Key`s, shared by every server process on this NATS. Letters, digits, `_` and `-`. Created at startup with file storage, `replicas` and a TTL of `idempotency.window`.',
    }),
  },
  { default: {}, description: 'Settings of the JetStream backend, read only when `kind` is `jetstream`.' },
);

export const BackendSchema = Type.Object(
  {
    kind: Type.String({
      description: '`in_memory` or `jetstream`, case-sensitive (checked by the semantic stage, not while parsing).',
    }),
    in_memory: InMemorySchema,
    jetstream: JetStreamSchema,
  },
  { description: 'Where notifications are stored. Unknown keys are ignored.' },
);

// ---------------------------------------------------------------------------------------------
// notification_schema (§1.4.7, schema-and-validation.md §2)

export const TopicSchema = Type.Object(
  {
    base: Type.String({
      description:
        'Stream / subject root: must match `[A-Za-z0-9][A-Za-z0-9_-]*` and be unique across schemas ignoring ASCII case.',
    }),
    key_order: Type.Array(Type.String(), {
      description: 'Identifier fields that form the topic, in order. Each must be declared in `identifier`. May be empty.',
    }),
  },
  { description: 'How notifications of this event type are routed. Required (startup error without it).' },
);

/** Legacy `endpoint` block: ignored, but parsed with the shape of `topic` like the reference does. */
export const LegacyEndpointSchema = Type.Object(
  {
    base: Type.String({ description: 'Ignored.' }),
    key_order: Type.Array(Type.String(), { description: 'Ignored.' }),
  },
  { description: 'Legacy block, ignored; when present it still needs a string `base` and a list `key_order`.' },
);

export const PayloadSchema = Type.Object(
  {
    required: Type.Boolean({ description: 'Whether notify requests must carry a `payload`.' }),
  },
  { additionalProperties: false, description: 'Payload rule. Absent behaves as `required: false`.' },
);

export const StreamAuthSchema = Type.Object(
  {
    required: Type.Boolean({
      description: 'Whether the stream needs authentication. `true` needs global auth enabled.',
    }),
    read_roles: Type.Optional(RoleMap('Realm → roles allowed to watch/replay. Omitted: any authenticated user.')),
    write_roles: Type.Optional(RoleMap('Realm → roles allowed to notify. Omitted: only admins.')),
    plugins: Type.Optional(
      Type.Array(Type.String(), { description: 'Authorisation plugins; only `ecpds` exists. Needs `required: true`.' }),
    ),
  },
  { additionalProperties: false, description: 'Per-stream access rules. Absent: the stream is public.' },
);

export const StoragePolicySchema = Type.Object(
  {
    retention_time: Type.Optional(
      Type.String({ description: 'Stream maximum age, a duration literal (`30m`, `1h`, `7d`, `1w`). > 0.' }),
    ),
    max_messages: Type.Optional(Type.Integer({ description: 'Stream message cap. > 0.' })),
    max_size: Type.Optional(
      Type.String({ description: 'Stream byte cap, a size literal (`100K`, `2M`, `64Mi`, `1G`, …).' }),
    ),
    allow_duplicates: Type.Optional(
      Type.Boolean({ description: 'Keep every notification of an exact topic (`true`) or only the latest (`false`).' }),
    ),
    compression: Type.Optional(Type.Boolean({ description: 'S2-compress the stream (needs NATS ≥ 2.10).' })),
  },
  {
    additionalProperties: false,
    description:
      'Per-stream storage overrides, JetStream only (every field is a startup error with `in_memory`). Requires `topic`. Unknown keys are a load error.',
  },
);

/** The identifier rules, a union discriminated by `type` (src/schema/identifier-rule.ts). */
export const IdentifierRuleSchema = IdentifierRule;
export type IdentifierRuleConfig = IdentifierRule;

export const EventSchemaSchema = Type.Object(
  {
    topic: Type.Optional(TopicSchema),
    identifier: Type.Record(Type.String(), IdentifierRuleSchema, {
      description: 'Identifier field name → rule (see the identifier rule tables). May be `{}`.',
    }),
    payload: Type.Optional(PayloadSchema),
    auth: Type.Optional(StreamAuthSchema),
    storage_policy: Type.Optional(StoragePolicySchema),
    max_historical_notifications: Type.Optional(
      Type.Integer({
        description:
          'Per-schema cap on historical notifications delivered by one request; inherits `watch_endpoint.max_historical_notifications`. A positive integer.',
      }),
    ),
    endpoint: Type.Optional(LegacyEndpointSchema),
  },
  { description: 'One event type. Values are strictly typed (no coercion) except those set through the environment.' },
);

export const NotificationSchemaSchema = Type.Record(Type.String(), EventSchemaSchema, {
  description:
    'Event type → event schema. Absent or empty: generic mode unless `notification_schema_strict` is `true`. Absent (rather than empty) also makes the schema API say `No notification schema configured`.',
});

// ---------------------------------------------------------------------------------------------
// watch_endpoint (§1.4.9; per-field defaults are deviation §7 item 3; max_buffered_events is D9)

export const WatchEndpointSchema = Type.Object(
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
        description:
          'Reject event types that have no schema. Unset: `true` when `notification_schema` has an entry, else `false`.',
      }),
    ),
    watch_endpoint: WatchEndpointSchema,
    idempotency: IdempotencySchema,
  },
  { description: 'aviso-ts configuration file. Unknown top-level keys are ignored.' },
);

export type AppConfig = Static<typeof AppConfigSchema>;
export type ApplicationConfig = Static<typeof ApplicationSchema>;
export type HomepageConfig = Static<typeof HomepageSchema>;
export type CorsConfig = Static<typeof CorsSchema>;
export type TlsConfig = Static<typeof TlsSchema>;
export type LoggingConfig = Static<typeof LoggingSchema>;
export type OtlpConfig = Static<typeof OtlpSchema>;
export type AuthConfig = Static<typeof AuthSchema>;
export type AuthMode = Static<typeof AuthModeSchema>;
export type EcpdsConfig = Static<typeof EcpdsSchema>;
export type MetricsConfig = Static<typeof MetricsSchema>;
export type BackendConfig = Static<typeof BackendSchema>;
export type InMemoryConfig = Static<typeof InMemorySchema>;
export type JetStreamConfig = Static<typeof JetStreamSchema>;
export type WatchEndpointConfig = Static<typeof WatchEndpointSchema>;
export type { IdempotencyConfig } from './idempotency-model.js';
/** Every `watch_endpoint` default, for code that builds an app without a configuration file. */
export const WATCH_ENDPOINT_DEFAULTS: WatchEndpointConfig = Value.Default(WatchEndpointSchema, {}) as WatchEndpointConfig;
export type EventSchemaConfig = Static<typeof EventSchemaSchema>;
export type TopicConfig = Static<typeof TopicSchema>;
export type PayloadConfig = Static<typeof PayloadSchema>;
export type StoragePolicyConfig = Static<typeof StoragePolicySchema>;
export type StreamAuthConfig = Static<typeof StreamAuthSchema>;

/** The backend kinds the server can build (backends.md §3.1). */
export const BACKEND_KINDS = ['in_memory', 'jetstream'] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

/** `storage_policy` fields in the order they are checked and reported. */
export const STORAGE_POLICY_FIELDS = [
  'retention_time',
  'max_messages',
  'max_size',
  'allow_duplicates',
  'compression',
] as const satisfies readonly (keyof StoragePolicyConfig)[];
