import Type from 'typebox';
import { unsigned } from './model-fields.js';

/** The `notification_backend` section of the configuration model (model.ts). */

// ---------------------------------------------------------------------------------------------
// notification_backend (docs/design/rules/operations.md §1.4.6, docs/design/rules/backends.md §6.1, §7.1)

const InMemorySchema = Type.Object(
  {
    max_history_per_topic: unsigned('Notifications kept per exact topic. > 0.', 1),
    max_topics: unsigned('Distinct topics kept before the least recently used one is evicted. > 0.', 10000),
    max_total_size: Type.String({
      default: '256Mi',
      description:
        'Bytes all stored notifications may hold together, a size literal (`64Mi`, `1G`, …): a notification that would pass it first evicts the oldest ones, by storage order over every topic and base. Each counts its topic, payload and metadata at 1 byte a character (2 when one is beyond U+00FF) plus 1 KiB. At least 4 × `application.max_body_bytes` + 8 KiB.',
    }),
    enable_metrics: Type.Boolean({ default: false, description: 'Extra debug logging of queue sizes.' }),
    persist_sequences: Type.Boolean({
      default: true,
      description:
        "Write each stream base's last issued sequence through to `state_directory`, so that the next process continues the numbering after a restart, a SIGKILL or a crash (D40). `false` starts every base at 1 again after a restart, with a startup warning: clients resuming from an earlier position are then told that the numbering was reset (D41).",
    }),
    state_directory: Type.String({
      default: './state',
      description:
        'Where `persist_sequences` keeps its files (created when missing; relative to the working directory). One server process per directory. A directory that cannot be created or written fails startup. The container image declares `/app/state` a volume; the Kubernetes overlays mount an emptyDir there, which outlives container restarts.',
    }),
  },
  { default: {}, description: 'Settings of the in-memory backend, read only when `kind` is `in_memory`.' },
);

export const JetStreamSchema = Type.Object(
  {
    nats_url: Type.String({
      default: 'nats://localhost:4222',
      description: 'NATS server URL, or several separated by commas (the servers of a cluster). Must not be blank.',
    }),
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
    live_gap_wait_ms: unsigned(
      'How long a live feed holds a notification back, in milliseconds, while a sequence below it is missing from both the stream and the announcements of the accepting processes; then the missing one is skipped for live delivery (it was deleted, or announced by a process that died) and the held ones go out. > 0. Raise it only when `backend.jetstream.live.announcement.late` warnings show announcements arriving later than this (see the backends docs, "Live delivery on JetStream").',
      2000,
    ),
    idempotency_bucket: Type.String({
      default: 'AVISO_IDEMPOTENCY',
      description:
        'Key-value bucket (stream `KV_<name>`, subjects `$KV.<name>.>`) holding the records of `Idempotency-Key`s, shared by every server process on this NATS. Letters, digits, `_` and `-`. Created at startup with file storage, `replicas` and a TTL of `idempotency.window`.',
    }),
    history_ledger_bucket: Type.String({
      default: 'AVISO_HISTORY_LEDGER',
      description:
        'Key-value bucket (stream `KV_<name>`) recording the history that admin deletes and wipes removed, one key per stream, shared by every server process on this NATS, so that a replay over it is told (D42). Letters, digits, `_` and `-`. Created at startup with file storage and `replicas`, without a TTL.',
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
