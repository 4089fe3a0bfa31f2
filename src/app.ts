import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { NotificationBackend } from './backend/backend.js';
import type { Clock } from './clock.js';
import { registerErrorHandling } from './http/error-handling.js';
import { registerHealthRoute } from './http/health-route.js';
import { registerNotificationRoute } from './http/notification-route.js';
import { generateRequestId, registerRequestIdHeader } from './http/request-id.js';
import { registerSchemaRoutes } from './http/schema-routes.js';
import type { SchemaRegistry } from './schema/schema-registry.js';
import { childLogger } from './logging/logger.js';

export interface AppDependencies {
  readonly registry: SchemaRegistry;
  readonly backend: NotificationBackend;
  readonly clock: Clock;
  readonly logger: Logger;
  /** `application.max_body_bytes` (D15). */
  readonly maxBodyBytes: number;
}

/** Builds the public HTTP application; no listening, no globals (design.md). */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Fastify's per-request lines are off (operations.md §3.5); handlers log their own events.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    childLoggerFactory: (logger, bindings) => childLogger(logger as Logger, bindings) as FastifyBaseLogger,
    genReqId: generateRequestId,
    requestIdHeader: false,
    bodyLimit: deps.maxBodyBytes,
    // SSE responses live for hours; only idle keep-alive sockets should time out.
    requestTimeout: 0,
  });

  registerRequestIdHeader(app);
  registerErrorHandling(app, { maxBodyBytes: deps.maxBodyBytes });

  // notify/watch/replay read the raw body whatever the Content-Type says (api.md §2.2).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  registerHealthRoute(app);
  registerSchemaRoutes(app, deps.registry);
  registerNotificationRoute(app, deps);

  await app.ready();
  return app;
}
