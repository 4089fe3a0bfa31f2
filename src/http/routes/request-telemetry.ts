import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AvisoMetrics } from '../../metrics/aviso-metrics.js';
import { methodLabel, routeLabel } from '../../metrics/labels.js';
import { requestLog } from './request-log.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the 405 handler: the pattern of the path that exists with other methods. */
    matchedPathPattern: string | undefined;
  }
}

interface RequestTiming {
  readonly startedAt: bigint;
  readonly endInFlight: () => void;
  completed: boolean;
  readonly accessLog: AccessLogLevel;
}

const timings = new WeakMap<FastifyRequest, RequestTiming>();

/** docs/design/rules/operations.md §3.5: infrastructure paths log their access line at debug, business routes at info. */
function isInfrastructurePath(path: string): boolean {
  return (
    path === '/health' ||
    path === '/ready' ||
    path === '/metrics' ||
    path.startsWith('/static/') ||
    path === '/console' ||
    path.startsWith('/console/') ||
    path.startsWith('/swagger-ui/') ||
    path.startsWith('/api-docs/')
  );
}

/** `logging.access_log` (D34): the level of a business route's access line. */
export type AccessLogLevel = 'debug' | 'info';

/**
 * HTTP request metrics and the access log line (docs/design/rules/operations.md §3.3.2, §3.5), recorded when the
 * response head is produced: in `onSend` for ordinary replies, by `recordResponseHead` for streams,
 * whose replies fastify never sends itself. The access line is written at `accessLog` for business
 * routes and at `debug` for infrastructure paths (docs/logging.md, "The access line").
 */
export function registerRequestTelemetry(app: FastifyInstance, metrics: AvisoMetrics, accessLog: AccessLogLevel = 'debug'): void {
  app.decorateRequest('matchedPathPattern', undefined);
  app.addHook('onRequest', async (request) => {
    timings.set(request, {
      startedAt: process.hrtime.bigint(),
      endInFlight: metrics.httpRequestStarted(methodLabel(request.method)),
      completed: false,
      accessLog,
    });
  });
  app.addHook('onSend', async (request, reply) => {
    recordResponseHead(request, reply, metrics);
  });
  // An aborted or failed request still leaves the in-flight gauge (docs/design/rules/operations.md §3.3.2: never leaks).
  app.addHook('onResponse', async (request) => timings.get(request)?.endInFlight());
  app.addHook('onRequestAbort', async (request) => timings.get(request)?.endInFlight());
}

/**
 * The route a request is counted under: the matched route's pattern, else the path pattern the
 * 405 handler found. The CORS preflight route `*` is no route of the API: a preflight counts
 * under the pattern of the path it asks about (set by the 405 handler's lookup) or as unmatched.
 */
function routePattern(request: FastifyRequest): string | undefined {
  const url = request.routeOptions.url;
  return url === undefined || url === '*' ? request.matchedPathPattern : url;
}

export function recordResponseHead(request: FastifyRequest, reply: FastifyReply, metrics: AvisoMetrics): void {
  const timing = timings.get(request);
  if (!timing || timing.completed) return;
  timing.completed = true;
  timing.endInFlight();
  const seconds = Number(process.hrtime.bigint() - timing.startedAt) / 1e9;
  const route = routeLabel(routePattern(request));
  const method = methodLabel(request.method);
  metrics.httpRequestCompleted(route, method, reply.statusCode, seconds);
  const path = request.url.split('?')[0] ?? '/';
  const level = timing.accessLog === 'info' && !isInfrastructurePath(path) ? 'info' : 'debug';
  // The line is not even built when its level is off: with D34's default that is every request.
  if (!requestLog(request).isLevelEnabled(level)) return;
  request.log[level](
    {
      event_name: 'http.request.completed',
      method: request.method,
      route,
      status_code: reply.statusCode,
      duration_ms: Math.round(seconds * 1e6) / 1e3,
    },
    'Request completed',
  );
}
