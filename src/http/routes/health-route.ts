import type { FastifyInstance } from 'fastify';
import type { NotificationBackend } from '../../backend/backend.js';
import { sendOrderedJson } from './json-reply.js';
import { ROUTE_DOCS } from './route-docs.js';

/**
 * `GET /health` (docs/design/rules/api.md §8.6): liveness only, no dependency checks. `GET /ready` (D26,
 * docs/design/rules/reference-0.13.md §2): readiness from the backend's connection state, so an orchestrator stops
 * routing to a process that cannot store or stream while NATS is away, without restarting it.
 */
export function registerHealthRoutes(app: FastifyInstance, backend: NotificationBackend): void {
  app.get('/health', { schema: ROUTE_DOCS.health }, async (_request, reply) => sendOrderedJson(reply, 200, { status: 'ok' }));
  app.get('/ready', { schema: ROUTE_DOCS.ready }, async (_request, reply) =>
    backend.isConnected()
      ? sendOrderedJson(reply, 200, { backend_connected: true, status: 'ready' })
      : sendOrderedJson(reply, 503, { backend_connected: false, status: 'not_ready' }),
  );
}
