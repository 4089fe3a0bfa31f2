import { compareCodePoints } from '../json/canonical-json.js';
import { EventSchema, type EventSchemaSource } from './event-schema.js';

/**
 * The configured event types (schema-and-validation.md §2–§3). Built once from validated config;
 * answers which schema an event type or a topic base belongs to and whether strict mode rejects
 * unknown event types.
 */
export class SchemaRegistry {
  private readonly byEventType = new Map<string, EventSchema>();
  private readonly byBaseToken = new Map<string, EventSchema>();
  private readonly lowerCaseBases = new Set<string>();
  /** Byte-wise sorted, as `configured_event_types` and the schema API list them. */
  readonly eventTypes: readonly string[];
  /** False when the config has no `notification_schema` at all (the schema API says so). */
  readonly configured: boolean;

  constructor(
    schemas: Readonly<Record<string, EventSchemaSource>> | undefined,
    readonly strictMode: boolean,
  ) {
    this.configured = schemas !== undefined;
    for (const [eventType, source] of Object.entries(schemas ?? {})) {
      const schema = new EventSchema(eventType, source);
      this.byEventType.set(eventType, schema);
      this.byBaseToken.set(schema.base, schema);
      this.lowerCaseBases.add(asciiLowerCase(schema.base));
    }
    this.eventTypes = [...this.byEventType.keys()].sort(compareCodePoints);
  }

  get(eventType: string): EventSchema | undefined {
    return this.byEventType.get(eventType);
  }

  /** The schema whose `topic.base` equals a decoded first topic token exactly (§9.5). */
  forBase(baseToken: string): EventSchema | undefined {
    return this.byBaseToken.get(baseToken);
  }

  /** Alias resolution of admin ids (backends.md §8.1): exact event type, then ASCII case-insensitive. */
  resolveEventTypeAlias(name: string): EventSchema | undefined {
    const exact = this.byEventType.get(name);
    if (exact) return exact;
    const lower = asciiLowerCase(name);
    for (const [eventType, schema] of this.byEventType) {
      if (asciiLowerCase(eventType) === lower) return schema;
    }
    return undefined;
  }

  /** Whether a generic event type would write into a configured schema's stream. */
  isConfiguredBase(token: string): boolean {
    return this.lowerCaseBases.has(asciiLowerCase(token));
  }

  /**
   * The `event_type` label of metrics and logs (operations.md §3.3.4): a configured name, else
   * `generic`, so caller-chosen text never becomes a label value.
   */
  eventTypeLabel(eventType: string): string {
    return this.byEventType.has(eventType) ? eventType : 'generic';
  }

  /** Strict-mode gate (api.md §4): true when the request must be rejected with UNKNOWN_EVENT_TYPE. */
  rejectsEventType(eventType: string): boolean {
    return this.strictMode && !this.byEventType.has(eventType);
  }
}

/** Bases and admin aliases compare ASCII case-insensitively (schema-and-validation.md §2.1). */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}
