import { IdentifierError } from './identifier-error.js';
import type { SchemaRegistry } from './schema-registry.js';

/**
 * A schema-less event type becomes a topic base and, on JetStream, a stream name. These checks keep
 * it from writing into or reading from another event type's stream, and keep it a valid name on
 * both backends (the same inputs are accepted everywhere, D20).
 */
export function assertUsableGenericEventType(registry: SchemaRegistry, eventType: string): void {
  if (eventType === '') throw new IdentifierError('event_type cannot be empty');
  if (registry.isConfiguredBase(eventType)) {
    throw new IdentifierError(
      `Event type '${eventType}' cannot be used without a schema: it is the topic base of a configured event type`,
    );
  }
  if (/[/\\]/.test(eventType)) {
    throw new IdentifierError(`Event type '${eventType}' cannot contain '/' or '\\' without a schema`);
  }
}
