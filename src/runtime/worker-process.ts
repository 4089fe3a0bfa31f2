import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { AppConfig } from '../config/model.js';
import {
  installReloadSignal,
  type ConfigurationReload,
  type ConfigurationReloader,
  type ReloadOutcome,
  type ReloadSource,
} from './reload.js';
import { reasonOf } from './fatal.js';
import { createProcessLogging } from './process-logging.js';
import { serve, type Serving } from './serving.js';
import { installShutdown, type ShutdownControl } from './shutdown.js';
import { loadStartupTls, validateStartupConfig } from './startup-configuration.js';
import { isPrimaryMessage, type PrimaryMessage, type WorkerMessage } from './worker-messages.js';
import { PROCESS_ID } from '../streaming/open-streams.js';

/**
 * One worker of several (D36): serves the public port the primary shares with it, from the
 * configuration the primary validated and sent, and does what the primary asks (reload, metrics,
 * shutdown). The startup sequence is a single process's, without the configuration lines (the
 * primary logged them) and without a metrics listener (the primary's aggregates every worker).
 */
export async function runWorker(): Promise<void> {
  const channel = new PrimaryChannel();
  const { workerId, config } = await channel.started;
  const logging = createProcessLogging(config, { workerId, reportLevelWarning: false });
  const { logger } = logging;
  logging.reportOtlp();
  const { strictMode } = validateStartupConfig(config, logger, false);
  const tls = loadStartupTls(config, logger);

  let supplied: AppConfig = config;
  const serving = await serve({
    config,
    strictMode,
    logging,
    tls,
    worker: {
      id: workerId,
      reloadEverywhere: (local) => new ReloadThroughPrimary(local, channel),
      suppliedConfig: () => supplied,
    },
  });
  logger.info(
    { event_name: 'startup.worker.started', port: serving.port, pid: process.pid, process_id: PROCESS_ID },
    `Worker ${workerId} (pid ${process.pid}) serving on ${config.application.host}:${serving.port}`,
  );
  const shutdown = installShutdown(serving);
  // A hang-up sent to a worker rather than to the primary still reloads every worker.
  installReloadSignal(new ReloadThroughPrimary(serving.reloader, channel), logger, shutdown.started);
  channel.serve({
    reload: (config, source, requestLogger) => {
      supplied = config;
      return serving.reloader.reload(source, requestLogger ?? logger);
    },
    snapshot: serving.snapshot,
    shutdown,
  });
  channel.send({ type: 'aviso:listening', port: serving.port });
}

interface WorkerDuties {
  reload(config: AppConfig, source: ReloadSource, requestLogger: Logger | undefined): Promise<ReloadOutcome>;
  readonly snapshot: Serving['snapshot'];
  readonly shutdown: ShutdownControl;
}

/**
 * The worker's end of the IPC channel. Until the worker serves it understands only the start
 * message and shutdown (which then ends the worker at once: it has nothing to drain yet).
 */
class PrimaryChannel {
  readonly started: Promise<{ workerId: number; config: AppConfig }>;
  private duties: WorkerDuties | undefined;
  private nextRequester = 1;
  /** The admin requests of this worker waiting for the primary, with the logger of each. */
  private readonly requesters = new Map<number, { logger: Logger | undefined; answer: (outcome: ReloadOutcome) => void }>();

  constructor() {
    let start!: (value: { workerId: number; config: AppConfig }) => void;
    this.started = new Promise((resolve) => (start = resolve));
    process.on('message', (message: unknown) => {
      if (!isPrimaryMessage(message)) return;
      if (message.type === 'aviso:start') start({ workerId: message.workerId, config: message.config });
      else this.handle(message);
    });
    this.send({ type: 'aviso:awaiting-start' });
  }

  serve(duties: WorkerDuties): void {
    this.duties = duties;
  }

  send(message: WorkerMessage): void {
    // The channel closes when the primary is gone, and Node then ends this worker itself.
    process.send?.(message, undefined, undefined, () => undefined);
  }

  /** Asks the primary for a reload of every worker; resolves with the outcome it answers. */
  requestReload(source: ReloadSource, logger: Logger | undefined): Promise<ReloadOutcome> {
    const requester = this.nextRequester++;
    return new Promise((resolve) => {
      this.requesters.set(requester, { logger, answer: resolve });
      this.send({ type: 'aviso:reload-request', requester, source });
    });
  }

  private handle(message: Exclude<PrimaryMessage, { type: 'aviso:start' }>): void {
    const duties = this.duties;
    if (message.type === 'aviso:shutdown') {
      if (duties) duties.shutdown.request(message.reason);
      else process.exit(0);
      return;
    }
    if (message.type === 'aviso:reload-answer') {
      const waiting = this.requesters.get(message.requester);
      this.requesters.delete(message.requester);
      waiting?.answer(message.outcome);
      return;
    }
    if (!duties) return;
    if (message.type === 'aviso:reload') {
      const requestLogger = message.requester === undefined ? undefined : this.requesters.get(message.requester)?.logger;
      duties.reload(message.config, message.source, requestLogger).then(
        (outcome) => this.send({ type: 'aviso:reloaded', id: message.id, outcome }),
        (error: unknown) => this.send({ type: 'aviso:reloaded', id: message.id, outcome: { ok: false, message: reasonOf(error) } }),
      );
      return;
    }
    const { snapshot } = duties;
    if (!snapshot) {
      this.send({ type: 'aviso:metrics-failed', id: message.id, error: 'metrics are disabled in this worker' });
      return;
    }
    snapshot().then(
      (value) => this.send({ type: 'aviso:metrics-snapshot', id: message.id, snapshot: value }),
      (error: unknown) => this.send({ type: 'aviso:metrics-failed', id: message.id, error: reasonOf(error) }),
    );
  }
}

/**
 * The reloader the worker's routes (`POST /api/v1/admin/reload`) and its `SIGHUP` use: the
 * primary reloads every worker, this one included, and answers for all of them (D36).
 */
class ReloadThroughPrimary implements ConfigurationReload {
  constructor(
    private readonly local: ConfigurationReloader,
    private readonly channel: PrimaryChannel,
  ) {}

  /** `logger` (the admin request's): where this worker's own lines of the reload go. */
  reload(source: ReloadSource, logger?: Logger): Promise<ReloadOutcome> {
    return this.channel.requestReload(source, logger);
  }

  attachAuthenticator(authenticator: Authenticator | undefined): void {
    this.local.attachAuthenticator(authenticator);
  }
}
