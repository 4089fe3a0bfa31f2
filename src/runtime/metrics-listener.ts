import type { Logger } from 'pino';
import type { AppConfig } from '../config/model.js';
import type { AvisoMetrics } from '../metrics/aviso-metrics.js';
import { startMetricsServer } from '../http/transport/metrics-server.js';
import { fatal, reasonOf } from './fatal.js';

/** The separate metrics listener (step 8); a port that cannot be bound stops startup. */
export async function startMetricsOrExit(
  config: AppConfig,
  metrics: Pick<AvisoMetrics, 'render'>,
  logger: Logger,
): Promise<{ close(): Promise<void> }> {
  const { host, port } = config.metrics;
  try {
    return await startMetricsServer({ host, port: port as number, metrics, logger });
  } catch (error) {
    logger.error({ event_name: 'startup.metrics.server.bind.failed', error: reasonOf(error) }, 'Metrics server cannot listen');
    fatal(`cannot listen for metrics on ${host}:${port}: ${reasonOf(error)}`);
  }
}
