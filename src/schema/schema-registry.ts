import { createHash } from 'node:crypto';
import { canonicalJson, compareCodePoints } from '../json/canonical-json.js';
import { EventSchema, type EventSchemaSource } from './event-schema.js';

/** What one configuration's schemas answer; replaced as a whole on reload. */
interface RegistryState {
  readonly byEventType: ReadonlyMap<string, EventSchema>;
  readonly byBaseToken: ReadonlyMap<string, EventSchema>;
  readonly lowerCaseBases: ReadonlySet<string>;
  readonly eventTypes: readonly string[];
  readonly configured: boolean;
  readonly strictMode: boolean;
  readonly version: string;
}

/**
 * The configured event types. Built from validated config;
 * answers which schema an event type or a topic base belongs to and whether strict mode rejects
 * unknown event types. A configuration reload swaps everything it answers in one assignment
 * (`replaceWith`), so the routes keep this object and every request sees one configuration.
 */
export class SchemaRegistry {
  private state: RegistryState;
  private readonly replaceListeners: (() => void)[] = [];

  constructor(schemas: Readonly<Record<string, EventSchemaSource>> | undefined, strictMode: boolean) {
    const byEventType = new Map<string, EventSchema>();
    const byBaseToken = new Map<string, EventSchema>();
    const lowerCaseBases = new Set<string>();
    for (const [eventType, source] of Object.entries(schemas ?? {})) {
      const schema = new EventSchema(eventType, source);
      byEventType.set(eventType, schema);
      byBaseToken.set(schema.base, schema);
      lowerCaseBases.add(asciiLowerCase(schema.base));
    }
    this.state = {
      byEventType,
      byBaseToken,
      lowerCaseBases,
      eventTypes: [...byEventType.keys()].sort(compareCodePoints),
      configured: schemas !== undefined,
      strictMode,
      version: schemaVersionOf(schemas, strictMode),
    };
  }

  /**
   * A version of the schema configuration (D43): the first 16 hex digits of the SHA-256 of the
   * configured schemas and strict mode as canonical JSON. Any change a reload makes to them changes
   * it; a reload that leaves them as they were keeps it.
   */
  get version(): string {
    return this.state.version;
  }

  /** Byte-wise sorted, as `configured_event_types` and the schema API list them. */
  get eventTypes(): readonly string[] {
    return this.state.eventTypes;
  }

  /** False when the config has no `notification_schema` at all (the schema API says so). */
  get configured(): boolean {
    return this.state.configured;
  }

  get strictMode(): boolean {
    return this.state.strictMode;
  }

  /**
   * Takes over what `next` answers (a configuration reload). One assignment: the event loop never
   * sees half of one configuration and half of the other. Listeners (caches derived from the
   * schemas) are told afterwards.
   */
  replaceWith(next: SchemaRegistry): void {
    this.state = next.state;
    for (const listener of this.replaceListeners) listener();
  }

  /** Called after every `replaceWith`, for whoever caches what the schemas answered. */
  onReplace(listener: () => void): void {
    this.replaceListeners.push(listener);
  }

  get(eventType: string): EventSchema | undefined {
    return this.state.byEventType.get(eventType);
  }

  /** The schema whose `topic.base` equals a decoded first topic token exactly (docs/design/rules/schema-and-validation.md §9.5). */
  forBase(baseToken: string): EventSchema | undefined {
    return this.state.byBaseToken.get(baseToken);
  }

  /** Alias resolution of admin ids (docs/design/rules/backends.md §8.1): exact event type, then ASCII case-insensitive. */
  resolveEventTypeAlias(name: string): EventSchema | undefined {
    const exact = this.state.byEventType.get(name);
    if (exact) return exact;
    const lower = asciiLowerCase(name);
    for (const [eventType, schema] of this.state.byEventType) {
      if (asciiLowerCase(eventType) === lower) return schema;
    }
    return undefined;
  }

  /** Whether a generic event type would write into a configured schema's stream. */
  isConfiguredBase(token: string): boolean {
    return this.state.lowerCaseBases.has(asciiLowerCase(token));
  }

  /**
   * The `event_type` label of metrics and logs: a configured name, else
   * `generic`, so caller-chosen text never becomes a label value.
   */
  eventTypeLabel(eventType: string): string {
    return this.state.byEventType.has(eventType) ? eventType : 'generic';
  }

  /** Strict mode: true when the event type is not configured and the request must be rejected with UNKNOWN_EVENT_TYPE. */
  rejectsEventType(eventType: string): boolean {
    return this.state.strictMode && !this.state.byEventType.has(eventType);
  }
}

/** Bases and admin aliases compare ASCII case-insensitively, as the reference's do; other letters compare exactly. */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function schemaVersionOf(schemas: Readonly<Record<string, EventSchemaSource>> | undefined, strictMode: boolean): string {
  const text = canonicalJson({ notification_schema: schemas ?? null, notification_schema_strict: strictMode });
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
