import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { NotificationBackend } from '../../backend/backend.js';
import { isJsonObject } from '../../json/json-value.js';
import { JsonSyntaxError, parseJsonBody } from '../../json/lossless-parse.js';
import type { SchemaRegistry } from '../../schema/schema-registry.js';
import { sendOrderedJson } from './json-reply.js';
import { ROUTE_DOCS } from './route-docs.js';
import { echo } from '../../text/echo.js';

export interface AdminRouteDeps {
  readonly registry: SchemaRegistry;
  readonly backend: NotificationBackend;
}

const U64_MAX = 18_446_744_073_709_551_615n;

/** Admin operations (docs/design/rules/api.md §8.3–§8.5, docs/design/rules/backends.md §8); bodies keep their fixed field order (D1). */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminRouteDeps): void {
  const { registry, backend } = deps;
  /** An event type (exact, then ASCII case-insensitive) stands for its topic base; anything else is a base. */
  const streamKey = (name: string): string => registry.resolveEventTypeAlias(name)?.base ?? name;

  app.delete<{ Params: { notification_id: string } }>(
    '/api/v1/admin/notification/:notification_id',
    { schema: ROUTE_DOCS.deleteNotification },
    async (request, reply) => {
      const rawId = request.params.notification_id;
      const answer = (status: number, success: boolean, message: string): FastifyReply =>
        sendOrderedJson(reply, status, { success, message, notification_id: rawId, request_id: request.id });

      const parsed = parseNotificationId(rawId);
      if ('problem' in parsed) {
        request.log.warn({ event_name: 'admin.notification.delete.invalid_id', notification_id: rawId }, parsed.problem);
        return answer(400, false, parsed.problem);
      }
      let outcome;
      try {
        outcome = await backend.deleteMessage(streamKey(parsed.stream), parsed.sequence);
      } catch (error) {
        const cause = error instanceof Error ? error.message : String(error);
        request.log.error({ event_name: 'admin.notification.delete.failed', error: cause }, 'Delete failed');
        return answer(500, false, `Failed to delete notification: ${cause}`);
      }
      if (outcome === 'not_found') {
        request.log.warn({ event_name: 'admin.notification.delete.not_found', notification_id: rawId }, 'Not found');
        return answer(404, false, 'Notification not found');
      }
      request.log.info({ event_name: 'admin.notification.delete.succeeded', notification_id: rawId }, 'Deleted');
      return answer(200, true, 'Notification deleted');
    },
  );

  app.delete('/api/v1/admin/wipe/stream', { schema: ROUTE_DOCS.wipeStream }, async (request, reply) => {
    const answer = (status: number, success: boolean, message: string): FastifyReply =>
      sendOrderedJson(reply, status, { success, message, request_id: request.id });
    const streamNotFound = (name: string): FastifyReply => {
      request.log.warn({ event_name: 'admin.stream.wipe.not_found', stream_name: echo(name) }, 'Stream not found');
      return answer(404, false, streamNotFoundMessage(registry, name));
    };
    const body = readWipeStreamBody(request);
    if ('problem' in body) return answer(400, false, body.problem);
    const name = body.streamName;
    request.log.info({ event_name: 'admin.stream.wipe.requested', stream_name: name }, 'Wipe stream requested');
    const configured = knownStreamBase(registry, name);
    // With a schema in strict mode nothing outside it can have been stored, so an unknown name
    // never reaches the backend (nor someone else's stream on a shared NATS account).
    if (configured === undefined && registry.configured && registry.strictMode) return streamNotFound(name);
    let outcome;
    try {
      outcome = await backend.wipeStream(configured ?? name);
    } catch (error) {
      const cause = error instanceof Error ? error.message : String(error);
      request.log.error({ event_name: 'admin.stream.wipe.failed', stream_name: name, error: cause }, 'Wipe failed');
      return answer(500, false, `Failed to wipe stream: ${cause}`);
    }
    // A configured event type whose stream was never created has simply nothing to wipe.
    if (outcome === 'not_found' && configured === undefined) return streamNotFound(name);
    request.log.info({ event_name: 'admin.stream.wipe.succeeded', stream_name: name }, 'Stream wiped');
    return answer(200, true, `Successfully wiped stream: ${name}`);
  });

  app.delete('/api/v1/admin/wipe/all', { schema: ROUTE_DOCS.wipeAll }, async (request, reply) => {
    const answer = (status: number, success: boolean, message: string): FastifyReply =>
      sendOrderedJson(reply, status, { success, message, request_id: request.id });
    request.log.warn({ event_name: 'admin.all.wipe.requested' }, 'Wipe of all data requested');
    try {
      await backend.wipeAll();
    } catch (error) {
      const cause = error instanceof Error ? error.message : String(error);
      request.log.error({ event_name: 'admin.all.wipe.failed', error: cause }, 'Wipe all failed');
      return answer(500, false, `Failed to wipe all data: ${cause}`);
    }
    request.log.warn({ event_name: 'admin.all.wipe.succeeded' }, 'All data wiped');
    return answer(200, true, 'Successfully wiped all data');
  });
}

/**
 * D30: the base a wipe name stands for when it names a configured event type or topic base,
 * compared ASCII case-insensitively; `undefined` for any other name.
 */
function knownStreamBase(registry: SchemaRegistry, name: string): string | undefined {
  const schema = registry.resolveEventTypeAlias(name);
  if (schema) return schema.base;
  return registry.isConfiguredBase(name) ? name : undefined;
}

/** The known event types are listed, sorted, when a schema is configured, so the caller sees the names it may use (D30). */
function streamNotFoundMessage(registry: SchemaRegistry, name: string): string {
  const known = registry.configured && registry.eventTypes.length > 0 ? `. Known event types: ${registry.eventTypes.join(', ')}` : '';
  return `Stream not found: ${echo(name)}${known}`;
}

/** `<stream>@<sequence>`, after trimming: a stream name, then a sequence from 1 to 2^64 − 1 with an optional `+`. */
function parseNotificationId(raw: string): { stream: string; sequence: number } | { problem: string } {
  const id = raw.trim();
  const at = id.indexOf('@');
  if (at <= 0 || at === id.length - 1) return { problem: "notification_id must be in '<stream>@<sequence>' format" };
  const digits = id.slice(at + 1);
  if (!/^\+?[0-9]+$/.test(digits) || BigInt(digits) > U64_MAX) {
    return { problem: 'notification_id sequence must be a positive integer' };
  }
  const sequence = BigInt(digits);
  if (sequence === 0n) return { problem: 'notification_id sequence must be greater than zero' };
  // Sequences beyond 2^53 are never assigned; clamping keeps them "not found" rather than wrong.
  return { stream: id.slice(0, at), sequence: Number(sequence > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : sequence) };
}

/**
 * The wipe body is JSON with a JSON media type, the one body whose media type is checked; unknown
 * fields are ignored. Problems are answered in the admin shape (`success: false` and a message).
 */
function readWipeStreamBody(request: FastifyRequest): { streamName: string } | { problem: string } {
  const mediaType = (request.rawContentType ?? request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json' && !/^[a-z0-9.+-]+\/[a-z0-9.+-]*\+json$/.test(mediaType)) {
    return { problem: 'Content type error: expected application/json' };
  }
  let value;
  try {
    value = parseJsonBody((request.body as Buffer | undefined) ?? '');
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { problem: `Json deserialize error: ${error.message}` };
    throw error;
  }
  if (!isJsonObject(value)) return { problem: 'Json deserialize error: expected an object with stream_name' };
  const streamName = value.stream_name;
  if (streamName === undefined) return { problem: 'Json deserialize error: missing field `stream_name`' };
  if (typeof streamName !== 'string') return { problem: 'Json deserialize error: stream_name must be a string' };
  return { streamName };
}
