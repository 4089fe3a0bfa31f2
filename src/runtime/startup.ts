import { resolveWorkerCount } from '../config/worker-count.js';
import { runPrimary } from './primary.js';
import { createProcessLogging } from './process-logging.js';
import { logServerStarted } from './started-line.js';
import { loadStartupConfig, loadStartupTls, logConfigurationLoaded, validateStartupConfig } from './startup-configuration.js';

/**
 * The process the operator started (docs/design/rules/operations.md §4.1): configuration, logging, validation, then
 * either one process serving everything, as always, or with `application.workers` above 1 the
 * primary of that many workers (D36), which validated the configuration before any of them starts.
 */
export async function startServer(): Promise<void> {
  const config = loadStartupConfig();
  const workers = resolveWorkerCount(config.application.workers);
  const logging = createProcessLogging(config, { reportLevelWarning: true, ...(workers > 1 ? { workerId: 0 } : {}) });
  const { logger } = logging;
  logConfigurationLoaded(config, logger);
  logging.reportOtlp();
  const { strictMode } = validateStartupConfig(config, logger, true);
  const tls = loadStartupTls(config, logger);
  if (workers > 1) {
    await runPrimary({ config, workers, logging, tls: tls !== undefined });
    return;
  }

  // Loaded only here: a primary of several workers serves no request and needs none of it.
  const [{ serve }, { installShutdown }, { installReloadSignal }] = await Promise.all([
    import('./serving.js'),
    import('./shutdown.js'),
    import('./reload.js'),
  ]);
  const serving = await serve({ config, strictMode, logging, tls });
  logServerStarted(logger, config, serving.port, tls !== undefined, 1);
  const shutdown = installShutdown(serving);
  installReloadSignal(serving.reloader, logger, shutdown.started);
}
