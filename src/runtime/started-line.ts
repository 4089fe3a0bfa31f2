import type { Logger } from 'pino';
import type { AppConfig } from '../config/model.js';
import { SERVER_VERSION } from '../version.js';
import { PROCESS_ID } from '../streaming/open-streams.js';

/**
 * `startup.server.started` (docs/design/rules/operations.md §4.1 step 10): the public port serves. Logged once per
 * server, by the single process or, with several workers (D36), by the primary once all listen.
 */
export function logServerStarted(logger: Logger, config: AppConfig, port: number, tls: boolean, workers: number): void {
  const { host } = config.application;
  logger.info(
    {
      event_name: 'startup.server.started',
      port,
      swagger_url: `${host}:${port}/swagger-ui/`,
      protocols: tls ? 'h2,http/1.1' : 'http/1.1',
      workers,
      // How the admin streams list names this process (D49); with workers each worker's line says its own.
      ...(workers > 1 ? {} : { process_id: PROCESS_ID }),
    },
    `aviso-server ${SERVER_VERSION} listening on ${host}:${port}${workers > 1 ? ` with ${workers} worker processes` : ''}`,
  );
}
