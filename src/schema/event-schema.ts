import type { FieldHandler } from './handlers/field-handler.js';
import { createFieldHandler } from './handlers/create-field-handler.js';
import type { IdentifierRule } from './identifier-rule.js';

/** What the registry needs from one `notification_schema` entry (validated at startup). */
export interface EventSchemaSource {
  readonly topic?: { readonly base: string; readonly key_order: readonly string[] };
  readonly identifier: Readonly<Record<string, IdentifierRule>>;
  readonly payload?: { readonly required: boolean };
  readonly max_historical_notifications?: number;
  readonly auth?: StreamAuthRule;
}

/** A schema's `auth` block (docs/design/rules/operations.md §2.7). */
export interface StreamAuthRule {
  readonly required: boolean;
  readonly read_roles?: Readonly<Record<string, readonly string[]>>;
  readonly write_roles?: Readonly<Record<string, readonly string[]>>;
  readonly plugins?: readonly string[];
}

export interface SchemaField {
  readonly name: string;
  readonly rule: IdentifierRule;
  readonly handler: FieldHandler;
}

/** One configured event type, compiled once at startup. */
export class EventSchema {
  readonly base: string;
  readonly keyOrder: readonly string[];
  readonly fields: ReadonlyMap<string, SchemaField>;
  /** Declared field names in code-point order: the order validation reports problems in (docs/design/rules/api.md §9.4). */
  readonly fieldNames: readonly string[];
  /** `undefined` when the schema has no `payload` block (behaves as not required). */
  readonly payloadRule: { readonly required: boolean } | undefined;
  readonly maxHistoricalNotifications: number | undefined;
  /** The spatial identifier, if any: `polygon` (PolygonHandler) or `point_cloud` (PointCloudHandler). */
  readonly spatialField: SchemaField | undefined;
  readonly auth: StreamAuthRule | undefined;

  constructor(
    readonly eventType: string,
    source: EventSchemaSource,
  ) {
    if (!source.topic) throw new Error(`schema '${eventType}' has no topic (rejected at startup)`);
    this.base = source.topic.base;
    this.keyOrder = source.topic.key_order;
    const fields = new Map<string, SchemaField>();
    for (const [name, rule] of Object.entries(source.identifier)) {
      fields.set(name, { name, rule, handler: createFieldHandler(name, rule) });
    }
    this.fields = fields;
    this.fieldNames = [...fields.keys()].sort();
    this.payloadRule = source.payload;
    this.maxHistoricalNotifications = source.max_historical_notifications;
    this.spatialField = [...fields.values()].find((f) => f.handler.kind !== 'scalar');
    this.auth = source.auth;
  }

  get payloadRequired(): boolean {
    return this.payloadRule?.required ?? false;
  }

  /** The public view of docs/design/rules/schema-and-validation.md §10: handler settings only, nothing internal. */
  publicView(): Record<string, unknown> {
    const identifier: Record<string, unknown> = {};
    for (const [name, { rule }] of this.fields) identifier[name] = fieldView(rule);
    return { identifier, payload: this.payloadRule ? { required: this.payloadRule.required } : null };
  }
}

function fieldView(rule: IdentifierRule): Record<string, unknown> {
  const view: Record<string, unknown> = { type: rule.type, required: rule.required };
  switch (rule.type) {
    case 'StringHandler':
      view.max_length = rule.max_length ?? null;
      break;
    case 'DateHandler':
      view.canonical_format = rule.canonical_format ?? '%Y%m%d';
      break;
    case 'EnumHandler':
      view.values = rule.values;
      break;
    case 'ExpverHandler':
      view.default = rule.default ?? null;
      break;
    case 'IntHandler':
    case 'FloatHandler':
      view.range = rule.range ?? null;
      break;
    case 'PointCloudHandler':
      view.max_points = rule.max_points ?? null;
      break;
    default:
      break;
  }
  if (rule.description !== undefined) view.description = rule.description;
  return view;
}
