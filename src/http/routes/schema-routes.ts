import type { FastifyInstance } from 'fastify';
import type { SchemaRegistry } from '../../schema/schema-registry.js';
import { notFoundError } from './error-bodies.js';
import { sendSortedJson } from './json-reply.js';
import { ROUTE_DOCS } from './route-docs.js';
import { echo } from '../../text/echo.js';

const NO_SCHEMA = 'No notification schema configured';

/** `GET /api/v1/schema` and `GET /api/v1/schema/{event_type}` (docs/design/rules/api.md §8.1–§8.2): public views only. */
export function registerSchemaRoutes(app: FastifyInstance, registry: SchemaRegistry): void {
  app.get('/api/v1/schema', { schema: ROUTE_DOCS.schemaList }, async (request, reply) => {
    const schema: Record<string, unknown> = {};
    for (const eventType of registry.eventTypes) schema[eventType] = registry.get(eventType)?.publicView();
    request.log.info({ event_name: 'api.schema.list.succeeded', total_schemas: registry.eventTypes.length }, 'Schemas listed');
    return sendSortedJson(reply, 200, {
      event_types: registry.eventTypes,
      ...(registry.configured ? {} : { message: NO_SCHEMA }),
      schema,
      schema_version: registry.version,
      status: 'success',
      total_schemas: registry.eventTypes.length,
    });
  });

  app.get<{ Params: { event_type: string } }>('/api/v1/schema/:event_type', { schema: ROUTE_DOCS.schemaOne }, async (request, reply) => {
    const eventType = request.params.event_type;
    // `/api/v1/schema/` reaches this route with an empty segment; the reference does not route it.
    if (eventType === '') throw notFoundError(request.method, request.url);
    if (!registry.configured) {
      return sendSortedJson(reply, 404, { message: NO_SCHEMA, request_id: request.id, status: 'error' });
    }
    const found = registry.get(eventType);
    if (!found) {
      request.log.info({ event_name: 'api.schema.get.not_found', event_type: 'unknown' }, 'Schema not found');
      return sendSortedJson(reply, 404, {
        available_types: registry.eventTypes,
        message: `Event type '${echo(eventType)}' not found`,
        request_id: request.id,
        status: 'error',
      });
    }
    request.log.info({ event_name: 'api.schema.get.succeeded', event_type: eventType }, 'Schema served');
    return sendSortedJson(reply, 200, {
      event_type: eventType,
      schema: found.publicView(),
      schema_version: registry.version,
      status: 'success',
    });
  });
}
