import cluster from 'node:cluster';
import type { AppConfig } from '../config/model.js';
import { endLogger } from '../logging/logger.js';
import { ClusterMetrics } from './cluster-metrics.js';
import { ClusterReloads } from './cluster-reload.js';
import { fatal, FATAL_PREFIX, reasonOf } from './fatal.js';
import type { ProcessLogging } from './process-logging.js';
import { startMetricsOrExit } from './metrics-listener.js';
import { LOG_FLUSH_GRACE_MS, METRICS_SHUTDOWN_GRACE_MS, OTLP_FLUSH_GRACE_MS, SHUTDOWN_GRACE_MS, withTimeout } from './grace-periods.js';
import { logServerStarted } from './started-line.js';
import { WorkerPool, type StartupFailure } from './worker-pool.js';

/**
 * Each worker bounds its own drain (30 s for requests, 5 s for NATS, 4 s for logs); past this
 * the primary stops waiting, kills what is left and exits 1.
 */
const WORKERS_SHUTDOWN_GRACE_MS = SHUTDOWN_GRACE_MS + 15_000;

export interface PrimaryOptions {
  /** Validated, with `application.workers` resolving above 1 on the JetStream backend. */
  readonly config: AppConfig;
  readonly workers: number;
  readonly logging: ProcessLogging;
  /** Whether the workers serve HTTPS (they read the certificate files themselves). */
  readonly tls: boolean;
}

/**
 * The primary of a server of several processes (D36). It serves no request itself: it forks the
 * workers (Node's cluster shares the listening socket, handing each new connection to the next
 * worker in turn on Linux), serves the metrics port with every worker's metrics added up,
 * reloads every worker on `SIGHUP`, drains them all on `SIGTERM`/`SIGINT`, and replaces a worker
 * that dies. Its own log lines carry `worker_id` 0.
 */
export async function runPrimary({ config, workers: size, logging, tls }: PrimaryOptions): Promise<void> {
  const { logger } = logging;
  // Structured clone keeps what JSON would lose on the way (a NaN gauge, an `undefined` setting).
  cluster.setupPrimary({ stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'advanced' });

  // Read only once the pool exists (at a scrape, at a reload).
  const serving = () => pool.listening();
  const otlp = logging.otlp;
  const metrics = config.metrics.enabled
    ? new ClusterMetrics({ workers: serving, logger, logStats: () => logging.stats(), ...(otlp ? { otlpStats: () => otlp.stats() } : {}) })
    : undefined;
  const reloads = new ClusterReloads({ startup: config, workers: serving, logger, counted: (result) => metrics?.configReload(result) });
  const pool: WorkerPool = new WorkerPool({
    size,
    logger,
    startingPoint: () => reloads.startingPoint,
    onReloadRequest: (link, requester, source) => {
      void reloads
        .reload(source, { link, requester })
        .catch((error: unknown) => ({ ok: false as const, message: `the reload failed unexpectedly: ${reasonOf(error)}` }))
        .then((outcome) => link.send({ type: 'aviso:reload-answer', requester, outcome }));
    },
    onReplacementListening: (slot) => reloads.catchUp(slot),
    onExit: (workerId) => metrics?.retire(workerId),
  });
  const metricsServer = metrics ? await startMetricsOrExit(config, metrics, logger) : undefined;
  logger.info({ event_name: 'cluster.workers.starting', workers: size }, `Starting ${size} workers`);

  let port: number;
  try {
    port = await pool.start();
  } catch (error) {
    await pool.kill();
    failStartup(error as StartupFailure, logging);
  }
  logServerStarted(logger, config, port, tls, size);

  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) {
      await pool.kill();
      process.exit(1);
    }
    stopping = true;
    logger.info({ event_name: `startup.signal.${signal.toLowerCase()}.received` }, `${signal} received`);
    logger.info({ event_name: 'startup.shutdown.token.cancelled' }, 'Shutdown sent to every worker');
    const stopped = pool.stop(`${signal} received by the primary`);
    logger.info({ event_name: 'startup.shutdown.received' }, 'Stopping the metrics server and waiting for the workers');
    if (metricsServer) await withTimeout(metricsServer.close(), METRICS_SHUTDOWN_GRACE_MS);
    const codes = await Promise.race([stopped, delay(WORKERS_SHUTDOWN_GRACE_MS)]);
    const clean = codes !== undefined && codes.every((code) => code === 0);
    if (codes === undefined) {
      logger.error(
        { event_name: 'cluster.shutdown.timeout' },
        `Workers still running after ${WORKERS_SHUTDOWN_GRACE_MS / 1000} s; killing them`,
      );
      await pool.kill();
    }
    logger.info({ event_name: 'startup.server.stopped', clean }, 'Every worker has stopped');
    if (otlp) await otlp.shutdown(OTLP_FLUSH_GRACE_MS);
    await endLogger(logger, LOG_FLUSH_GRACE_MS);
    process.exit(clean ? 0 : 1);
  };
  process.on('SIGTERM', (signal) => void stop(signal));
  process.on('SIGINT', (signal) => void stop(signal));
  process.on('SIGHUP', () => {
    if (stopping) return;
    reloads
      .reload('signal')
      .catch((error: unknown) =>
        logger.error(
          { event_name: 'configuration.reload.failed', source: 'signal', error: reasonOf(error) },
          'Configuration reload failed unexpectedly',
        ),
      );
  });
}

/**
 * A worker ended before every worker listened: what it wrote on stderr (its one failure line,
 * D17) goes out once, the other workers' lines do not (they failed the same way or were stopped).
 */
function failStartup(failure: StartupFailure, { logger }: ProcessLogging): never {
  logger.error(
    { event_name: 'cluster.startup.failed', worker: failure.workerId, exit_code: failure.exitCode, signal: failure.signal },
    `Worker ${failure.workerId} ended before it listened; stopping`,
  );
  for (const line of failure.stderr) process.stderr.write(`${line}\n`);
  if (failure.stderr.some((line) => line.startsWith(FATAL_PREFIX))) process.exit(1);
  fatal(`worker ${failure.workerId} ended (${failure.signal ?? `exit code ${failure.exitCode}`}) before it listened`);
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}
