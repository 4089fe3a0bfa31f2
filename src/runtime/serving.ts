import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../app.js';
import type { EcpdsPlugin } from '../auth/ecpds/ecpds-plugin.js';
import type { NotificationBackend } from '../backend/backend.js';
import { createBackend } from './create-backend.js';
import { JetStreamBackend } from '../backend/jetstream/jetstream-backend.js';
import { PROCESS_ID } from '../streaming/open-streams.js';
import { streamsAcrossDeployment } from '../streaming/deployment-streams.js';
import { systemClock } from '../time/clock.js';
import type { AppConfig } from '../config/model.js';
import { ConfigurationReloader, type ConfigurationReload } from './reload.js';
import { schemasListingEcpds } from '../config/validate.js';
import type { TlsMaterial } from '../http/transport/tls-options.js';
import type { AvisoMetrics } from '../metrics/aviso-metrics.js';
import { createDisabledMetrics, createPrometheusMetrics, type MetricsSnapshot } from '../metrics/prometheus-metrics.js';
import { SERVER_VERSION } from '../version.js';
import { fatal, reasonOf } from './fatal.js';
import { startMetricsOrExit } from './metrics-listener.js';
import { buildEcpdsChecker, buildSchemaRegistry, checkBackendSettings } from './configuration-preparation.js';
import { refuseStartup } from './startup-configuration.js';
import type { ProcessLogging } from './process-logging.js';
import type { Drainable } from './shutdown.js';

/** How a worker of several processes (D36) serves differently from a single process. */
export interface WorkerServing {
  readonly id: number;
  /** The reloads the worker's admin route asks for reach every worker, through the primary. */
  reloadEverywhere(local: ConfigurationReloader): ConfigurationReload;
  /** What the worker's own reloader reads instead of the file: the configuration the primary sent. */
  readonly suppliedConfig: () => AppConfig;
}

export interface ServeOptions {
  readonly config: AppConfig;
  readonly strictMode: boolean;
  readonly logging: ProcessLogging;
  readonly tls: TlsMaterial | undefined;
  /** Absent in a single process. */
  readonly worker?: WorkerServing;
}

export interface Serving extends Drainable {
  readonly app: FastifyInstance;
  /** The port actually bound. */
  readonly port: number;
  /** This process's own reloader (in a worker, the one the primary's reloads are applied with). */
  readonly reloader: ConfigurationReloader;
  /** This process's metrics as data, when metrics are enabled (what a primary aggregates). */
  readonly snapshot: (() => Promise<MetricsSnapshot>) | undefined;
}

/**
 * Steps 6 to 10 of docs/design/rules/operations.md §4.1 (ECPDS checker, backend, metrics, the public server) for a
 * process that serves the public port: a single process, or one worker of several. A worker has
 * no metrics listener (its primary serves the port, aggregating every worker) and labels its
 * process metrics with its id. Every failure is one line on stderr and exit 1 (D17).
 */
export async function serve(options: ServeOptions): Promise<Serving> {
  const { config, strictMode, tls, worker } = options;
  const { logger, otlp } = options.logging;
  const built = buildSchemaRegistry(config, strictMode);
  // Validation accepted these schemas, so the registry builds; a failure here is a defect.
  if (!built.ok) throw new Error(built.refusal.reason);
  const registry = built.value;
  const prometheus = config.metrics.enabled
    ? createPrometheusMetrics({
        version: SERVER_VERSION,
        backendKind: config.notification_backend.kind as 'in_memory' | 'jetstream',
        eventTypes: registry.eventTypes,
        limits: {
          maxConnections: config.application.max_connections,
          maxStreams: config.application.max_streams,
          maxTotalBufferedBytes: config.watch_endpoint.max_total_buffered_bytes,
        },
        ...(otlp ? { otlpStats: () => otlp.stats() } : {}),
        logStats: () => options.logging.stats(),
        ...(worker ? { processLabels: { worker: String(worker.id) } } : {}),
      })
    : undefined;
  const metrics: AvisoMetrics = prometheus ?? createDisabledMetrics();
  const plugins = createReadPlugins(config, logger, metrics);

  const settings = checkBackendSettings(config);
  if (!settings.ok) refuseStartup(settings.refusal, logger);
  let backend: NotificationBackend;
  let created: NotificationBackend;
  try {
    created = await createBackend(config, systemClock, logger, metrics.memoryHistory, metrics.idempotency);
    backend = metrics.instrumentBackend(created);
  } catch (error) {
    logger.error({ event_name: 'startup.backend.initialization.failed', error: reasonOf(error) }, 'Backend initialization failed');
    fatal(`backend initialization failed: ${reasonOf(error)}`);
  }

  const metricsServer = config.metrics.enabled && !worker ? await startMetricsOrExit(config, metrics, logger) : undefined;

  const reloader = new ConfigurationReloader({
    startup: config,
    registry,
    backend,
    readPlugins: plugins,
    metrics,
    logger,
    ...(worker ? { load: worker.suppliedConfig } : {}),
  });
  const app = await buildApp({
    registry,
    backend,
    clock: systemClock,
    logger,
    maxBodyBytes: config.application.max_body_bytes,
    baseUrl: config.application.base_url,
    additionalOrigins: config.application.additional_origins,
    trustedProxies: config.application.trusted_proxies,
    watchEndpoint: config.watch_endpoint,
    notificationEndpoint: config.notification_endpoint,
    auth: config.auth,
    readPlugins: plugins,
    metrics,
    staticFilesPath: config.application.static_files_path,
    homepage: config.application.homepage,
    limits: config.application,
    reloader: worker ? worker.reloadEverywhere(reloader) : reloader,
    cors: config.application.cors,
    accessLog: config.logging.access_log,
    // Every process of a JetStream deployment answers the admin streams list and close (D49).
    ...(created instanceof JetStreamBackend
      ? { streamsOfDeployment: (directory) => streamsAcrossDeployment(directory, created.deploymentExchange(PROCESS_ID, systemClock)) }
      : {}),
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
  if (tls) reloader.attachTlsServer(app.server);
  return {
    app,
    backend,
    logger,
    plugins,
    metricsServer,
    otlp,
    port,
    reloader,
    snapshot: prometheus ? () => prometheus.snapshot() : undefined,
  };
}

/** The ECPDS checker exists only when a section is configured and some stream opts in (docs/design/rules/operations.md §2.10.1). */
function createReadPlugins(config: AppConfig, logger: Logger, metrics: AvisoMetrics): Map<string, EcpdsPlugin> {
  const plugins = new Map<string, EcpdsPlugin>();
  const anyStreamEnablesEcpds = schemasListingEcpds(config).length > 0;
  const checker = buildEcpdsChecker(config, metrics.ecpds);
  if (!checker.ok) refuseStartup(checker.refusal, logger);
  if (checker.value) plugins.set('ecpds', checker.value);
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
