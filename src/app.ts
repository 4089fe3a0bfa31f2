import { LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { NotificationBackend } from './backend/backend.js';
import type { Clock } from './time/clock.js';
import { Authenticator } from './auth/authenticator.js';
import type { ReadAuthorizationPlugin } from './auth/read-plugin.js';
import { StreamAccess } from './auth/stream-access.js';
import {
  HOMEPAGE_DEFAULTS,
  NOTIFICATION_ENDPOINT_DEFAULTS,
  type AuthConfig,
  type CorsConfig,
  type HomepageConfig,
  type NotificationEndpointConfig,
  type WatchEndpointConfig,
} from './config/model.js';
import { registerAdminRoutes } from './http/routes/admin-routes.js';
import { registerAuthHook } from './http/routes/auth-hook.js';
import { registerApiDocs } from './http/routes/api-docs.js';
import { registerConsoleRoutes } from './http/routes/console-routes.js';
import { registerCors } from './http/routes/cors.js';
import { registerCrossOriginWriteGuard } from './http/routes/cross-origin-writes.js';
import { registerReloadRoute, type ConfigurationReload } from './http/routes/reload-route.js';
import { indexRoutes } from './http/routes/route-index.js';
import { registerHomeRoutes } from './http/routes/home-routes.js';
import { streamsEnded } from './http/transport/http1-stream-sink.js';
import { frameworkErrorHandler, registerErrorHandling } from './http/routes/error-handling.js';
import { registerRawBodyReading } from './http/routes/raw-body.js';
import { registerHealthRoutes } from './http/routes/health-route.js';
import { registerNotificationRoute } from './http/routes/notification-route.js';
import { registerNotificationBatchRoute } from './http/routes/notification-batch-route.js';
import { generateRequestId, registerRequestIdHeader } from './http/transport/request-id.js';
import { registerSchemaRoutes } from './http/routes/schema-routes.js';
import { registerRequestTelemetry, type AccessLogLevel } from './http/routes/request-telemetry.js';
import { registerStreamRoutes } from './http/routes/stream-routes.js';
import { registerStreamAdminRoutes } from './http/routes/stream-admin-routes.js';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from './http/transport/server-limits.js';
import { createFastify } from './http/transport/server-transport.js';
import type { TlsMaterial } from './http/transport/tls-options.js';
import type { AvisoMetrics } from './metrics/aviso-metrics.js';
import { createDisabledMetrics } from './metrics/prometheus-metrics.js';
import { childLogger } from './logging/logger.js';
import type { SchemaRegistry } from './schema/schema-registry.js';
import { StoredIdentityReader } from './schema/stored-identifier.js';
import { BufferBudget } from './streaming/buffer-budget.js';
import { CloudEventRenderer } from './streaming/cloudevent.js';
import { StallWatchdog } from './streaming/stall-watchdog.js';
import { StreamSupervisor } from './streaming/stream-supervisor.js';
import { PROCESS_ID, thisProcessOnly, type OpenStreamDirectory, type StreamsOfDeployment } from './streaming/open-streams.js';

export interface AppDependencies {
  readonly registry: SchemaRegistry;
  readonly backend: NotificationBackend;
  readonly clock: Clock;
  readonly logger: Logger;
  /** `application.max_body_bytes`: a larger body is answered `413 PAYLOAD_TOO_LARGE` in the error shape. */
  readonly maxBodyBytes: number;
  /** `application.base_url`: CloudEvent `source` and `dataschema`, and the server's own origin for cross-site checks. */
  readonly baseUrl: string;
  /** `application.additional_origins`: further own origins whose pages may change state; none when absent. */
  readonly additionalOrigins?: readonly string[];
  /** `application.trusted_proxies`: the proxies whose `X-Forwarded-For` names the client; none when absent. */
  readonly trustedProxies?: readonly string[];
  readonly watchEndpoint: WatchEndpointConfig;
  /** `notification_endpoint`: batch notify's limits; the defaults when absent. */
  readonly notificationEndpoint?: NotificationEndpointConfig;
  /** The `auth` section; absent or disabled means every stream is public and no credential is read. */
  readonly auth?: AuthConfig;
  /** Read-authorization plugins by name, for schemas listing them in `auth.plugins`. */
  readonly readPlugins?: ReadonlyMap<string, ReadAuthorizationPlugin>;
  /** Prometheus metrics; absent means metrics are disabled and nothing is recorded. */
  readonly metrics?: AvisoMetrics;
  /** `application.static_files_path`: `index.html` for `/` and the files under `/static/`. */
  readonly staticFilesPath?: string;
  /** `application.homepage`: the homepage's documentation and repository links; defaults when absent. */
  readonly homepage?: HomepageConfig;
  /** `application` connection limits (header size, timeouts, connections); defaults when absent. */
  readonly limits?: ServerLimits;
  /** Live configuration reload behind `POST /api/v1/admin/reload`; no route without it. */
  readonly reloader?: ConfigurationReload;
  /** `application.cors`; absent or empty means no CORS headers, so pages on other origins cannot read answers. */
  readonly cors?: CorsConfig;
  /** `application.tls` read from its files: HTTPS with HTTP/2 and HTTP/1.1; absent means plain HTTP/1.1. */
  readonly tls?: TlsMaterial;
  /** `logging.access_log`: the level of business routes' access line; `debug` when absent: the reference writes none, and one doubled a notify's log volume. */
  readonly accessLog?: AccessLogLevel;
  /**
   * Whom the admin streams list asks, given this process's streams: every process of the
   * deployment on JetStream; this process alone when absent (the memory backend).
   */
  readonly streamsOfDeployment?: (directory: OpenStreamDirectory) => StreamsOfDeployment;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every open watch/replay stream; closed with `server_shutdown` when the app closes. */
    readonly streams: StreamSupervisor;
  }
}

/** Builds the public HTTP application; no listening, no globals (docs/design/architecture.md "Wiring"). */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const limits = deps.limits ?? DEFAULT_SERVER_LIMITS;
  const metrics = deps.metrics ?? createDisabledMetrics();
  const app = createFastify(
    {
      loggerInstance: deps.logger,
      // Fastify's per-request lines are off: handlers log their own events, with the names operators search for.
      logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
      childLoggerFactory: (logger, bindings) => childLogger(logger as Logger, bindings),
      genReqId: generateRequestId,
      requestIdHeader: false,
      bodyLimit: deps.maxBodyBytes,
      // During shutdown a request that reaches a busy keep-alive socket is served (node answers it
      // with `Connection: close`) instead of fastify's bare 503, which had neither X-Request-ID nor
      // the error shape of api.md: an in-flight notify is stored and acknowledged before the backend
      // closes. New connections are refused once the server stops listening.
      return503OnClosing: false,
      frameworkErrors: frameworkErrorHandler,
      // `request.ip`, which the admin streams list shows: the forwarded client behind a listed proxy.
      trustProxy: deps.trustedProxies && deps.trustedProxies.length > 0 ? [...deps.trustedProxies] : false,
    },
    // Head/request receipt timeouts, header size, the client-error answer (docs/security.md), TLS,
    // and the connection limit, which keeps room beside the streams for health checks and notify.
    { tls: deps.tls, limits, logger: deps.logger, connectionRefused: () => metrics.connectionRefused() },
  );

  registerRequestIdHeader(app);
  registerRequestTelemetry(app, metrics, deps.accessLog);
  const routes = indexRoutes(app);
  // Before authentication: a preflight carries no credentials, and a 401 needs CORS headers to be readable.
  const cors = deps.cors ?? { allowed_origins: [] };
  await registerCors(app, cors, routes);
  registerErrorHandling(app, { routes });
  // Before authentication and body reading: a refused cross-site write runs nothing (docs/security.md).
  registerCrossOriginWriteGuard(app, cors, {
    baseUrl: deps.baseUrl,
    additionalOrigins: deps.additionalOrigins ?? [],
    tls: deps.tls !== undefined,
  });
  const authenticator = deps.auth?.enabled ? new Authenticator(deps.auth, () => deps.clock.now(), deps.logger) : undefined;
  registerAuthHook(app, authenticator, metrics, deps.auth?.browser_cookie);
  const access = new StreamAccess(authenticator);
  deps.reloader?.attachAuthenticator(authenticator);

  // notify/watch/replay read the raw body whatever the Content-Type says, as the reference does.
  registerRawBodyReading(app);

  const identities = new StoredIdentityReader(deps.registry);
  const watch = deps.watchEndpoint;
  const guards = {
    budget: new BufferBudget(watch.max_total_buffered_bytes),
    watchdog: new StallWatchdog(deps.clock, watch.stall_timeout_sec * 1000),
  };
  metrics.observeStreamBuffers(() => guards.budget.totalBytes);
  const streams = new StreamSupervisor({
    backend: deps.backend,
    identities,
    renderer: new CloudEventRenderer(identities, deps.baseUrl),
    clock: deps.clock,
    logger: deps.logger,
    settings: {
      heartbeatIntervalSec: watch.sse_heartbeat_interval_sec,
      connectionMaxDurationSec: watch.connection_max_duration_sec,
      replayBatchSize: watch.replay_batch_size,
      replayBatchDelayMs: watch.replay_batch_delay_ms,
      maxBufferedEvents: watch.max_buffered_events,
      maxBufferedBytes: watch.max_buffered_bytes,
    },
    guards,
    deliveryLag: metrics.deliveryLag,
    maxStreams: limits.max_streams,
  });
  app.decorate('streams', streams);
  // Streams end with their final frame (`server_shutdown`) before the server stops accepting;
  // the server's close then destroys the connections it takes for idle, so it waits until the
  // plain HTTP/1.1 streams, which write their socket themselves, wrote their last frames.
  app.addHook('preClose', async () => {
    streams.closeAll('server_shutdown');
    await streamsEnded();
  });

  await registerApiDocs(app);
  await registerHomeRoutes(app, {
    staticFilesPath: deps.staticFilesPath ?? '/app/static',
    registry: deps.registry,
    logger: deps.logger,
    homepage: deps.homepage ?? HOMEPAGE_DEFAULTS,
  });
  registerConsoleRoutes(app, deps.logger);
  registerHealthRoutes(app, deps.backend);
  registerSchemaRoutes(app, deps.registry);
  registerNotificationRoute(app, { ...deps, access, metrics });
  registerNotificationBatchRoute(app, { ...deps, access, metrics, limits: deps.notificationEndpoint ?? NOTIFICATION_ENDPOINT_DEFAULTS });
  registerStreamRoutes(app, {
    registry: deps.registry,
    streams,
    access,
    readPlugins: deps.readPlugins ?? new Map(),
    defaultReplayCap: watch.max_historical_notifications,
    metrics,
  });
  registerAdminRoutes(app, deps);
  registerStreamAdminRoutes(app, deps.streamsOfDeployment?.(streams) ?? thisProcessOnly(streams, PROCESS_ID));
  if (deps.reloader) registerReloadRoute(app, deps.reloader);

  await app.ready();
  return app;
}
