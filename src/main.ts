import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { createEcpdsPlugin, type EcpdsPlugin } from './auth/ecpds/ecpds-plugin.js';
import type { NotificationBackend } from './backend/backend.js';
import { createBackend } from './backend/create-backend.js';
import { systemClock } from './clock.js';
import { ConfigLoadError, loadConfig } from './config/load.js';
import type { AppConfig } from './config/model.js';
import { ConfigurationReloader, installReloadSignal } from './config/reload.js';
import { ConfigValidationError, schemasListingEcpds, validateConfig } from './config/validate.js';
import { closeAllConnections } from './http/server-transport.js';
import { loadTlsMaterial, TlsFileError, type TlsMaterial } from './http/tls-options.js';
import { effectiveLevel } from './logging/log-level.js';
import { createLogger, endLogger, logResource } from './logging/logger.js';
import { createOtlpExporter, createOtlpLogExport, type OtlpLogExport } from './logging/otlp/otlp-export.js';
import { otlpTarget, type OtlpTarget } from './logging/otlp/otlp-target.js';
import type { AvisoMetrics } from './metrics/aviso-metrics.js';
import { startMetricsServer } from './metrics/metrics-server.js';
import { createDisabledMetrics, createPrometheusMetrics } from './metrics/prometheus-metrics.js';
import { SchemaRegistry } from './schema/schema-registry.js';
import { SERVER_VERSION } from './version.js';

/** In-flight requests get this long to finish on shutdown before sockets are closed (operations.md §4.2). */
const SHUTDOWN_GRACE_MS = 30_000;
const METRICS_SHUTDOWN_GRACE_MS = 5_000;
const LOG_FLUSH_GRACE_MS = 2_000;
/** Flushing queued OTLP records on shutdown; a dead collector must not hold the exit longer. */
const OTLP_FLUSH_GRACE_MS = 2_000;
/** A NATS drain that hangs (a server gone mid-drain) must not keep the process from exiting. */
const BACKEND_SHUTDOWN_GRACE_MS = 5_000;

/** One plain line on stderr, the contract for failures before anything listens (D17). */
function fatal(reason: string): never {
  process.stderr.write(`aviso-server: ${reason}\n`);
  process.exit(1);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The startup sequence of operations.md §4.1. */
async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigLoadError) fatal(`configuration error: ${error.message}`);
    throw error;
  }

  const level = effectiveLevel(config.logging.level, process.env.RUST_LOG);
  if (level.warning) process.stderr.write(`${level.warning}\n`);
  const otlp = createOtlpExport(config);
  const logger = createLogger({ level: level.level, serviceVersion: SERVER_VERSION, ...(otlp ? { tee: otlp.sink } : {}) });
  logger.info(
    {
      event_name: 'configuration.load.succeeded',
      host: config.application.host,
      port: config.application.port,
      backend_kind: config.notification_backend.kind,
      has_notification_schema: config.notification_schema !== undefined,
    },
    'Configuration loaded',
  );
  if (otlp) reportOtlp(logger, otlp);

  let strictMode: boolean;
  try {
    const validated = validateConfig(config);
    strictMode = validated.strictMode;
    logger.info(
      {
        event_name: 'configuration.global.initialized',
        notification_schema_strict: strictMode,
        base_url: config.application.base_url,
      },
      'Global configuration initialized',
    );
    for (const warning of validated.warnings) logger.warn({ event_name: warning.event }, warning.message);
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    logger.error({ event_name: error.eventName, error: error.message }, 'Configuration validation failed');
    fatal(`configuration error: ${error.message}`);
  }
  // Secrets in the dump are redacted by key (jwt_secret, password, token) like every log attribute.
  logger.info({ event_name: 'startup.configuration.dumped', config }, 'Effective configuration');
  logger.info(
    {
      event_name: 'startup.configuration.loaded',
      bind_host: config.application.host,
      bind_port: config.application.port,
      backend_kind: config.notification_backend.kind,
      has_notification_schema: config.notification_schema !== undefined,
    },
    'Configuration ready',
  );

  let tls: TlsMaterial | undefined;
  if (config.application.tls) {
    try {
      tls = loadTlsMaterial(config.application.tls);
    } catch (error) {
      if (!(error instanceof TlsFileError)) throw error;
      logger.error({ event_name: 'startup.tls.load.failed', error: error.message }, 'TLS files cannot be used');
      fatal(`configuration error: ${error.message}`);
    }
  }

  const registry = new SchemaRegistry(config.notification_schema, strictMode);
  const metrics = config.metrics.enabled
    ? createPrometheusMetrics({
        version: SERVER_VERSION,
        backendKind: config.notification_backend.kind as 'in_memory' | 'jetstream',
        eventTypes: registry.eventTypes,
        limits: {
          maxConnections: config.application.max_connections,
          maxTotalBufferedBytes: config.watch_endpoint.max_total_buffered_bytes,
        },
        ...(otlp ? { otlpStats: () => otlp.sink.stats() } : {}),
      })
    : createDisabledMetrics();
  const readPlugins = createReadPlugins(config, logger, metrics);

  let backend: NotificationBackend;
  try {
    backend = metrics.instrumentBackend(await createBackend(config, systemClock, logger, metrics.memoryHistory));
  } catch (error) {
    logger.error({ event_name: 'startup.backend.initialization.failed', error: reasonOf(error) }, 'Backend initialization failed');
    fatal(`backend initialization failed: ${reasonOf(error)}`);
  }

  let metricsServer: { close(): Promise<void> } | undefined;
  if (config.metrics.enabled) {
    const { host, port } = config.metrics;
    try {
      metricsServer = await startMetricsServer({ host, port: port as number, metrics, logger });
    } catch (error) {
      logger.error({ event_name: 'startup.metrics.server.bind.failed', error: reasonOf(error) }, 'Metrics server cannot listen');
      fatal(`cannot listen for metrics on ${host}:${port}: ${reasonOf(error)}`);
    }
  }

  const reloader = new ConfigurationReloader({ startup: config, registry, backend, readPlugins, metrics, logger });
  const app = await buildApp({
    registry,
    backend,
    clock: systemClock,
    logger,
    maxBodyBytes: config.application.max_body_bytes,
    baseUrl: config.application.base_url,
    watchEndpoint: config.watch_endpoint,
    auth: config.auth,
    readPlugins,
    metrics,
    staticFilesPath: config.application.static_files_path,
    homepage: config.application.homepage,
    limits: config.application,
    reloader,
    cors: config.application.cors,
    accessLog: config.logging.access_log,
    ...(tls ? { tls } : {}),
  });

  try {
    await app.listen({ host: config.application.host, port: config.application.port });
  } catch (error) {
    logger.error({ event_name: 'startup.server.bind.failed', error: reasonOf(error) }, 'Cannot listen');
    fatal(`cannot listen on ${config.application.host}:${config.application.port}: ${reasonOf(error)}`);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.application.port;
  logger.info(
    {
      event_name: 'startup.server.started',
      port,
      swagger_url: `${config.application.host}:${port}/swagger-ui/`,
      protocols: tls ? 'h2,http/1.1' : 'http/1.1',
    },
    `aviso-server ${SERVER_VERSION} listening on ${config.application.host}:${port}`,
  );

  const shuttingDown = installShutdown({ app, backend, logger, plugins: readPlugins, metricsServer, otlp: otlp?.sink });
  if (tls) reloader.attachTlsServer(app.server);
  installReloadSignal(reloader, logger, shuttingDown);
}

/**
 * Built before the logger so the OTLP sink sees every record, the first included. An enabled
 * section without an endpoint builds nothing here: validateConfig reports it right after, on stdout.
 */
function createOtlpExport(config: AppConfig): { sink: OtlpLogExport; target: OtlpTarget } | undefined {
  let target: OtlpTarget | undefined;
  try {
    target = otlpTarget(config.logging.otlp);
  } catch {
    return undefined;
  }
  if (!target) return undefined;
  const sink = createOtlpLogExport({
    exporter: createOtlpExporter(target),
    resource: logResource(SERVER_VERSION),
    serviceVersion: SERVER_VERSION,
  });
  return { sink, target };
}

/** Export trouble shows on stdout (which always has every record), once per change rather than per batch. */
function reportOtlp(logger: Logger, { sink, target }: { sink: OtlpLogExport; target: OtlpTarget }): void {
  logger.info(
    { event_name: 'logging.otlp.export.enabled', protocol: target.protocol, endpoint: target.url },
    'OTLP log export enabled',
  );
  sink.onHealthChange(({ healthy, reason }) => {
    if (healthy) logger.info({ event_name: 'logging.otlp.export.recovered' }, 'OTLP log export recovered');
    else logger.warn({ event_name: 'logging.otlp.export.failed', error: reason }, 'OTLP log export failing; records are dropped from the export until it recovers');
  });
}

/** The ECPDS checker exists only when a section is configured and some stream opts in (§2.10.1). */
function createReadPlugins(config: AppConfig, logger: Logger, metrics: AvisoMetrics): Map<string, EcpdsPlugin> {
  const plugins = new Map<string, EcpdsPlugin>();
  const anyStreamEnablesEcpds = schemasListingEcpds(config).length > 0;
  if (config.ecpds && anyStreamEnablesEcpds) {
    try {
      plugins.set('ecpds', createEcpdsPlugin(config.ecpds, { clock: systemClock, telemetry: metrics.ecpds }));
    } catch (error) {
      logger.error({ event_name: 'startup.ecpds.checker_init.failed', error: reasonOf(error) }, 'ECPDS checker could not be built');
      fatal(`ECPDS checker could not be built: ${reasonOf(error)}`);
    }
  }
  logger.info(
    {
      event_name: 'configuration.ecpds.initialized',
      ecpds_block_present: config.ecpds !== undefined,
      any_stream_enables_ecpds: anyStreamEnablesEcpds,
      checker_built: plugins.has('ecpds'),
    },
    'ECPDS plugin configuration',
  );
  return plugins;
}

interface Running {
  readonly app: FastifyInstance;
  readonly backend: NotificationBackend;
  readonly logger: Logger;
  readonly plugins: ReadonlyMap<string, EcpdsPlugin>;
  readonly metricsServer: { close(): Promise<void> } | undefined;
  readonly otlp: OtlpLogExport | undefined;
}

/**
 * operations.md §4.2: streams end with `server_shutdown`, the metrics server stops, the public
 * server drains for up to 30 s, then the backend closes; the process exits 0 once it has.
 */
/** Installs the SIGTERM/SIGINT handlers; the answer tells whether shutdown has begun. */
function installShutdown({ app, backend, logger, plugins, metricsServer, otlp }: Running): () => boolean {
  let shuttingDown = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (shuttingDown) process.exit(1); // a second signal while draining means "now"
    shuttingDown = true;
    logger.info({ event_name: `startup.signal.${signal.toLowerCase()}.received` }, `${signal} received`);
    logger.info({ event_name: 'startup.shutdown.token.cancelled' }, 'Shutdown broadcast to all components');
    app.streams.closeAll('server_shutdown');
    logger.info({ event_name: 'startup.shutdown.received' }, 'Stopping servers');
    if (metricsServer) await withTimeout(metricsServer.close(), METRICS_SHUTDOWN_GRACE_MS);
    const force = setTimeout(() => closeAllConnections(app.server), SHUTDOWN_GRACE_MS);
    force.unref();
    await app.close();
    clearTimeout(force);
    logger.info({ event_name: 'startup.server.stopped' }, 'HTTP servers stopped');
    logger.info({ event_name: 'startup.backend.shutdown.started' }, 'Shutting down backend');
    for (const plugin of plugins.values()) plugin.close();
    try {
      await rejectAfter(backend.shutdown(), BACKEND_SHUTDOWN_GRACE_MS, 'the backend did not shut down within 5 s');
      logger.info({ event_name: 'startup.backend.shutdown.completed' }, 'Backend shut down');
      logger.info({ event_name: 'startup.backend.shutdown.succeeded' }, 'Backend shutdown succeeded');
    } catch (error) {
      logger.error({ event_name: 'startup.backend.shutdown.failed', error: reasonOf(error) }, 'Backend shutdown failed');
    }
    if (otlp) await otlp.shutdown(OTLP_FLUSH_GRACE_MS);
    await endLogger(logger, LOG_FLUSH_GRACE_MS);
    process.exit(0);
  };
  process.on('SIGTERM', (signal) => void shutdown(signal));
  process.on('SIGINT', (signal) => void shutdown(signal));
  return () => shuttingDown;
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  return Promise.race([promise, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
}

function rejectAfter(promise: Promise<void>, ms: number, message: string): Promise<void> {
  return Promise.race([promise, new Promise<void>((_, reject) => setTimeout(() => reject(new Error(message)), ms).unref())]);
}

await main();
