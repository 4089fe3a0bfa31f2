import type { Logger } from 'pino';
import type { AppConfig } from '../config/model.js';
import { effectiveLevel } from '../logging/log-level.js';
import { CLIENT_ERROR_EVENTS } from '../http/transport/client-error-events.js';
import { createLogger, logOutputStats, logResource, type LogOutputStats } from '../logging/logger.js';
import { createOtlpExporter, createOtlpLogExport, type OtlpLogExport } from '../logging/otlp/otlp-export.js';
import { otlpTarget, type OtlpTarget } from '../logging/otlp/otlp-target.js';
import { SERVER_VERSION } from '../version.js';

/** A process's logger and, when `logging.otlp` is on, the export every line is teed into. */
export interface ProcessLogging {
  readonly logger: Logger;
  readonly otlp: OtlpLogExport | undefined;
  /** The lines the logger did not write (`aviso_log_lines_*_total`). */
  stats(): LogOutputStats;
  /** Logs `logging.otlp.export.enabled` and, from then on, the export's health changes. */
  reportOtlp(): void;
}

export interface ProcessLoggingOptions {
  /** `worker_id` on every line when the server runs several processes (D36, docs/logging.md). */
  readonly workerId?: number;
  /**
   * Whether an unusable `RUST_LOG` is reported on stderr (docs/design/rules/operations.md §3.4.2); a worker leaves it to its
   * primary, which read the same environment.
   */
  readonly reportLevelWarning: boolean;
}

export function createProcessLogging(config: AppConfig, options: ProcessLoggingOptions): ProcessLogging {
  const level = effectiveLevel(config.logging.level, process.env.RUST_LOG);
  if (level.warning && options.reportLevelWarning) process.stderr.write(`${level.warning}\n`);
  const otlp = createOtlpExport(config);
  const logger = createLogger({
    level: level.level,
    serviceVersion: SERVER_VERSION,
    ...(otlp ? { tee: otlp.sink } : {}),
    ...(options.workerId === undefined ? {} : { attributes: { worker_id: options.workerId } }),
    maxBufferedBytes: config.logging.max_buffered_bytes,
    rateLimited: { events: CLIENT_ERROR_EVENTS, linesPerSecond: config.logging.client_error_lines_per_second },
  });
  return { logger, otlp: otlp?.sink, stats: () => logOutputStats(logger), reportOtlp: () => otlp && reportOtlp(logger, otlp) };
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
  logger.info({ event_name: 'logging.otlp.export.enabled', protocol: target.protocol, endpoint: target.url }, 'OTLP log export enabled');
  sink.onHealthChange(({ healthy, reason }) => {
    if (healthy) logger.info({ event_name: 'logging.otlp.export.recovered' }, 'OTLP log export recovered');
    else
      logger.warn(
        { event_name: 'logging.otlp.export.failed', error: reason },
        'OTLP log export failing; records are dropped from the export until it recovers',
      );
  });
}
