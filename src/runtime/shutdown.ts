import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { EcpdsPlugin } from '../auth/ecpds/ecpds-plugin.js';
import type { NotificationBackend } from '../backend/backend.js';
import { closeAllConnections } from '../http/transport/server-transport.js';
import { endLogger } from '../logging/logger.js';
import type { OtlpLogExport } from '../logging/otlp/otlp-export.js';
import { reasonOf } from './fatal.js';
import {
  BACKEND_SHUTDOWN_GRACE_MS,
  LOG_FLUSH_GRACE_MS,
  METRICS_SHUTDOWN_GRACE_MS,
  OTLP_FLUSH_GRACE_MS,
  SHUTDOWN_GRACE_MS,
  withTimeout,
} from './grace-periods.js';

/** What a serving process closes, in the order of docs/design/rules/operations.md §4.2. */
export interface Drainable {
  readonly app: FastifyInstance;
  readonly backend: NotificationBackend;
  readonly logger: Logger;
  readonly plugins: ReadonlyMap<string, EcpdsPlugin>;
  readonly metricsServer: { close(): Promise<void> } | undefined;
  readonly otlp: OtlpLogExport | undefined;
}

export interface ShutdownControl {
  /** Whether shutdown has begun. */
  started: () => boolean;
  /**
   * Begins the drain unless it has begun: the primary of several workers asks each worker this
   * way (D36), so a worker that also got the signal itself (Ctrl+C reaches the whole process
   * group) does not take the request for a second signal.
   */
  request(reason: string): void;
}

/**
 * Installs the SIGTERM/SIGINT handlers, each beginning the drain; a second signal while draining
 * means "now" (exit 1).
 */
export function installShutdown(running: Drainable): ShutdownControl {
  let shuttingDown = false;
  const begin = (announce: () => void): void => {
    shuttingDown = true;
    announce();
    void drain(running);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shuttingDown) process.exit(1);
    begin(() => running.logger.info({ event_name: `startup.signal.${signal.toLowerCase()}.received` }, `${signal} received`));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    started: () => shuttingDown,
    request(reason) {
      if (shuttingDown) return;
      begin(() => running.logger.info({ event_name: 'startup.shutdown.requested', reason }, `Shutdown requested: ${reason}`));
    },
  };
}

/**
 * docs/design/rules/operations.md §4.2: streams end with `server_shutdown`, the metrics server stops, the public
 * server drains for up to 30 s, then the backend closes; the process exits 0 once it has.
 */
async function drain({ app, backend, logger, plugins, metricsServer, otlp }: Drainable): Promise<void> {
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
}

function rejectAfter(promise: Promise<void>, ms: number, message: string): Promise<void> {
  return Promise.race([promise, new Promise<void>((_, reject) => setTimeout(() => reject(new Error(message)), ms).unref())]);
}
