import type { FastifyInstance } from 'fastify';
import { sendOrderedJson } from './json-reply.js';
import { ROUTE_DOCS } from './route-docs.js';

/** `GET /health` (api.md §8.6): liveness only, no dependency checks. */
export function registerHealthRoute(app: FastifyInstance): void {
  app.get('/health', { schema: ROUTE_DOCS.health }, async (_request, reply) => sendOrderedJson(reply, 200, { status: 'ok' }));
}
