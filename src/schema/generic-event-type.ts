import { MAX_STREAM_NAME_BYTES, streamNameBytes } from '../topic/stream-name.js';
import { IdentifierError } from './identifier-error.js';
import type { SchemaRegistry } from './schema-registry.js';
import { echo } from '../text/echo.js';

/**
 * A schema-less event type becomes a topic base and, on JetStream, a stream name. These checks keep
 * it from writing into or reading from another event type's stream, and keep it a valid name on
 * both backends (the same inputs are accepted everywhere, D20).
 */
export function assertUsableGenericEventType(registry: SchemaRegistry, eventType: string): void {
  if (eventType === '') throw new IdentifierError('event_type cannot be empty');
  if (registry.isConfiguredBase(eventType)) {
    throw new IdentifierError(
      `Event type '${echo(eventType)}' cannot be used without a schema: it is the topic base of a configured event type`,
    );
  }
  if (/[/\\]/.test(eventType)) {
    throw new IdentifierError(`Event type '${echo(eventType)}' cannot contain '/' or '\\' without a schema`);
  }
  // JetStream cannot create a longer stream name; refusing it here keeps the answer a 400 (D33).
  const bytes = streamNameBytes(eventType);
  if (bytes > MAX_STREAM_NAME_BYTES) {
    throw new IdentifierError(
      `Event type is too long to be used without a schema: its stream name would be ${bytes} bytes, the limit is ${MAX_STREAM_NAME_BYTES}`,
    );
  }
}
