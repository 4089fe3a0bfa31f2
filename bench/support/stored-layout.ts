import { prepareNotification, type NotifyInput } from '../../src/schema/notify-identifier.js';
import { SchemaRegistry } from '../../src/schema/schema-registry.js';
import type { EventSchemaSource } from '../../src/schema/event-schema.js';
import { parseJsonBody } from '../../src/json/lossless-parse.js';

/**
 * What aviso's notify stores for a request — subject, payload text and headers
 * (`aviso_identifier`, spatial headers) — computed with aviso's own code, so raw JetStream
 * publishes and consumers in the baselines handle exactly the messages aviso does.
 */
export interface StoredLayout {
  readonly subject: string;
  readonly payload: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** A function from a notify request body to what aviso stores for it, for these event types. */
export function storedLayouts(schemas: Readonly<Record<string, unknown>>): (notifyBody: string) => StoredLayout {
  const registry = new SchemaRegistry(schemas as Readonly<Record<string, EventSchemaSource>>, true);
  return (notifyBody) => {
    const prepared = prepareNotification(registry, parseJsonBody(notifyBody) as unknown as NotifyInput);
    return { subject: prepared.topic, payload: prepared.payload, headers: prepared.metadata };
  };
}
