import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { NotificationBackend } from './backend/backend.js';
import { createBackend } from './backend/create-backend.js';
import { systemClock } from './clock.js';
import { ConfigLoadError, loadConfig } from './config/load.js';
import { ConfigValidationError, validateConfig, type ValidatedConfig } from './config/validate.js';
import { createEcpdsPlugin, type EcpdsPlugin } from './auth/ecpds/ecpds-plugin.js';
import type { AppConfig } from './config/model.js';
import { createLogger } from './logging/logger.js';
import { SchemaRegistry } from './schema/schema-registry.js';
import { SERVER_VERSION } from './version.js';

/** In-flight requests get this long to finish on shutdown before sockets are closed (operations.md §4.2). */
const SHUTDOWN_GRACE_MS = 30_000;

/** One plain line on stderr, the contract for failures before anything listens (D17). */
function fatal(reason: string): never {
  process.stderr.write(`aviso-server: ${reason}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let validated: ValidatedConfig;
  try {
    validated = validateConfig(loadConfig());
  } catch (error) {
    if (error instanceof ConfigLoadError) fatal(`configuration error: ${error.message}`);
    if (error instanceof ConfigValidationError) {
      createLogger({ level: 'error', serviceVersion: SERVER_VERSION }).error(
        { event_name: error.eventName, error: error.message },
        'Configuration validation failed',
      );
      fatal(`configuration error: ${error.message}`);
    }
    throw error;
  }
  const { config } = validated;
  const logger = createLogger({ level: config.logging.level, serviceVersion: SERVER_VERSION });
  for (const warning of validated.warnings) logger.warn({ event_name: warning.event }, warning.message);
  logger.info(
    {
      event_name: 'startup.configuration.loaded',
      bind_host: config.application.host,
      bind_port: config.application.port,
      backend_kind: config.notification_backend.kind,
      has_notification_schema: config.notification_schema !== undefined,
      notification_schema_strict: validated.strictMode,
    },
    'Configuration loaded',
  );

  let backend: NotificationBackend;
  try {
    backend = await createBackend(config, systemClock, logger);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    logger.error({ event_name: 'startup.backend.initialization.failed', error: reason }, 'Backend initialization failed');
    fatal(`backend initialization failed: ${reason}`);
  }

  const readPlugins = createReadPlugins(config, logger);
  const registry = new SchemaRegistry(config.notification_schema, validated.strictMode);
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
  });

  try {
    await app.listen({ host: config.application.host, port: config.application.port });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    logger.error({ event_name: 'startup.server.bind.failed', error: reason }, 'Cannot listen');
    fatal(`cannot listen on ${config.application.host}:${config.application.port}: ${reason}`);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.application.port;
  logger.info(
    { event_name: 'startup.server.started', port, swagger_url: `${config.application.host}:${port}/swagger-ui/` },
    `aviso-server ${SERVER_VERSION} listening on ${config.application.host}:${port}`,
  );

  installShutdown(app, backend, logger, readPlugins);
}

/** The ECPDS checker exists only when a section is configured and some stream opts in (§2.10.1). */
function createReadPlugins(config: AppConfig, logger: Logger): Map<string, EcpdsPlugin> {
  const plugins = new Map<string, EcpdsPlugin>();
  const anyStreamEnablesEcpds = Object.values(config.notification_schema ?? {}).some((schema) =>
    schema.auth?.plugins?.includes('ecpds'),
  );
  if (config.ecpds && anyStreamEnablesEcpds) {
    try {
      plugins.set('ecpds', createEcpdsPlugin(config.ecpds, { clock: systemClock }));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      logger.error({ event_name: 'startup.ecpds.checker_init.failed', error: reason }, 'ECPDS checker could not be built');
      fatal(`ECPDS checker could not be built: ${reason}`);
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

function installShutdown(
  app: FastifyInstance,
  backend: NotificationBackend,
  logger: Logger,
  plugins: ReadonlyMap<string, EcpdsPlugin>,
): void {
  let shuttingDown = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (shuttingDown) {
      // A second signal while draining means "now".
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ event_name: `startup.signal.${signal.toLowerCase()}.received` }, `${signal} received`);
    logger.info({ event_name: 'startup.shutdown.received' }, 'Stopping servers');
    const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    force.unref();
    await app.close();
    clearTimeout(force);
    logger.info({ event_name: 'startup.server.stopped' }, 'HTTP server stopped');
    logger.info({ event_name: 'startup.backend.shutdown.started' }, 'Shutting down backend');
    for (const plugin of plugins.values()) plugin.close();
    try {
      await backend.shutdown();
      logger.info({ event_name: 'startup.backend.shutdown.completed' }, 'Backend shut down');
    } catch (error) {
      logger.error({ event_name: 'startup.backend.shutdown.failed', err: error }, 'Backend shutdown failed');
    }
    process.exit(0);
  };
  process.on('SIGTERM', (signal) => void shutdown(signal));
  process.on('SIGINT', (signal) => void shutdown(signal));
}

await main();
