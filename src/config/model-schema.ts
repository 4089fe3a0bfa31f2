import Type from 'typebox';
import { IdentifierRule } from '../schema/identifier-rule.js';
import { RoleMap } from './model-fields.js';

/** The `notification_schema` section of the configuration model (model.ts). */

// ---------------------------------------------------------------------------------------------
// notification_schema (docs/design/rules/operations.md §1.4.7, docs/design/rules/schema-and-validation.md §2)

const TopicSchema = Type.Object(
  {
    base: Type.String({
      description: 'Stream / subject root: must match `[A-Za-z0-9][A-Za-z0-9_-]*` and be unique across schemas ignoring ASCII case.',
    }),
    key_order: Type.Array(Type.String(), {
      description: 'Identifier fields that form the topic, in order. Each must be declared in `identifier`. May be empty.',
    }),
  },
  { description: 'How notifications of this event type are routed. Required (startup error without it).' },
);

/** Legacy `endpoint` block: ignored, but parsed with the shape of `topic` like the reference does. */
const LegacyEndpointSchema = Type.Object(
  {
    base: Type.String({ description: 'Ignored.' }),
    key_order: Type.Array(Type.String(), { description: 'Ignored.' }),
  },
  { description: 'Legacy block, ignored; when present it still needs a string `base` and a list `key_order`.' },
);

const PayloadSchema = Type.Object(
  {
    required: Type.Boolean({ description: 'Whether notify requests must carry a `payload`.' }),
  },
  { additionalProperties: false, description: 'Payload rule. Absent behaves as `required: false`.' },
);

const StreamAuthSchema = Type.Object(
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
    retention_time: Type.Optional(Type.String({ description: 'Stream maximum age, a duration literal (`30m`, `1h`, `7d`, `1w`). > 0.' })),
    max_messages: Type.Optional(Type.Integer({ description: 'Stream message cap. > 0.' })),
    max_size: Type.Optional(Type.String({ description: 'Stream byte cap, a size literal (`100K`, `2M`, `64Mi`, `1G`, …).' })),
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
const IdentifierRuleSchema = IdentifierRule;
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
