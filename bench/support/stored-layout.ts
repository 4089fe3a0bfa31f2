import type { StoredNotification } from '../../src/backend/backend.js';
import { loadConfig } from '../../src/config/load.js';
import { compileWatchFilter, type NotificationPredicate } from '../../src/filter/watch-filter.js';
import type { JsonObject } from '../../src/json/json-value.js';
import { parseJsonBody } from '../../src/json/lossless-parse.js';
import { prepareNotification, type NotifyInput, type PreparedNotification } from '../../src/schema/notify-identifier.js';
import { SchemaRegistry } from '../../src/schema/schema-registry.js';
import type { EventSchemaSource } from '../../src/schema/event-schema.js';
import type { StoredIdentityReader } from '../../src/schema/stored-identifier.js';
import { checkSpatialShape, prepareWatch } from '../../src/schema/watch-identifier.js';
import type { TopicPattern } from '../../src/topic/topic-pattern.js';
import { DEFAULT_CONFIG_FILE, ROOT } from './paths.js';

/**
 * What aviso's notify stores for a request — subject, payload text and headers
 * (`aviso_identifier`, spatial headers) — and what a watch request compiles to, computed with
 * aviso's own code, so raw JetStream publishes and consumers in the baselines handle exactly the
 * messages aviso does, and the in-process scenarios (match, dispatch) run the server's predicates
 * over the server's notifications.
 */
export interface StoredLayout {
  readonly subject: string;
  readonly payload: string;
  readonly headers: Readonly<Record<string, string>>;
}

function prepared(registry: SchemaRegistry, notifyBody: string): PreparedNotification {
  return prepareNotification(registry, parseJsonBody(notifyBody) as unknown as NotifyInput);
}

/** A function from a notify request body to what aviso stores for it, for these event types. */
export function storedLayouts(schemas: Readonly<Record<string, unknown>>): (notifyBody: string) => StoredLayout {
  const registry = new SchemaRegistry(schemas as Readonly<Record<string, EventSchemaSource>>, true);
  return (notifyBody) => {
    const { topic, payload, metadata } = prepared(registry, notifyBody);
    return { subject: topic, payload, headers: metadata };
  };
}

/** The event types of config/config.yaml, loaded as the server loads its configuration. */
export function configSchemaRegistry(): SchemaRegistry {
  const config = loadConfig({ env: { AVISOSERVER_CONFIG_FILE: DEFAULT_CONFIG_FILE }, cwd: ROOT, systemFile: '/nonexistent' });
  return new SchemaRegistry(config.notification_schema, true);
}

/** What notify stores for `count` request bodies (topic, payload text, headers); fresh StoredNotifications are made from them per round. */
export function storedTemplates(
  registry: SchemaRegistry,
  notifyBody: (index: number) => string,
  count: number,
): Omit<StoredNotification, 'sequence'>[] {
  const now = BigInt(Date.now()) * 1_000_000n;
  return Array.from({ length: count }, (_, index) => {
    const { topic, payload, metadata } = prepared(registry, notifyBody(index));
    return { topic, payload, timestampNs: now, metadata };
  });
}

export interface CompiledWatch {
  readonly pattern: TopicPattern;
  readonly predicate: NotificationPredicate;
}

/**
 * A watch request body as a watch request compiles it (`prepareWatch` + `compileWatchFilter`). The
 * server has one StoredIdentityReader (src/app.ts), shared by every predicate: pass the same one.
 */
export function compiledWatch(registry: SchemaRegistry, identities: StoredIdentityReader, watchBody: string): CompiledWatch {
  const request = parseJsonBody(watchBody) as { event_type: string; identifier: JsonObject };
  const selection = prepareWatch(registry, 'watch', request, checkSpatialShape(request.identifier));
  return { pattern: selection.pattern, predicate: compileWatchFilter(selection, identities) };
}
