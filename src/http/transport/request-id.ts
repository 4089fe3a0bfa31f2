import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/** D4: a fresh lower-case v4 UUID per request; an incoming `X-Request-ID` is ignored. */
export const generateRequestId = (): string => randomUUID();

/**
 * Sets the header in `onRequest`, so every response carries it: errors, 404/405, 413 and SSE
 * replies that bypass fastify's send path (docs/design/rules/operations.md §3.2).
 */
export function registerRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
