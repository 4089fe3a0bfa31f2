import Fastify from 'fastify';
import type { Logger } from 'pino';
import { generateRequestId, registerRequestIdHeader } from './request-id.js';
import { childLogger } from '../../logging/logger.js';
import type { AvisoMetrics } from '../../metrics/aviso-metrics.js';

export interface MetricsServerOptions {
  readonly host: string;
  /** 0 picks an ephemeral port (tests); the bound port is returned. */
  readonly port: number;
  /** What `GET /metrics` answers: one process's registry, or the primary's aggregate of its workers (D36). */
  readonly metrics: Pick<AvisoMetrics, 'render'>;
  readonly logger: Logger;
}

export interface MetricsServer {
  /** The port actually bound. */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The separate metrics listener (docs/design/rules/operations.md §3.3.1): only `GET /metrics`, so the public port
 * never exposes metrics and this one exposes nothing else.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { host, metrics, logger } = options;
  const app = Fastify({
    // No framework logger: fastify would log its listen line and per-request lines at info
    // (docs/design/rules/operations.md §3.4.2 item 3); the two events this server has are logged below with the app's logger.
    logger: false,
    genReqId: generateRequestId,
    requestIdHeader: false,
    // The reference's route guard answers GET only; HEAD /metrics is a 404 there too.
    exposeHeadRoutes: false,
  });
  registerRequestIdHeader(app);

  app.get('/metrics', async (request, reply) => {
    let rendered: { contentType: string; body: string };
    try {
      rendered = await metrics.render();
    } catch (error) {
      childLogger(logger, { request_id: request.id }).error(
        { event_name: 'metrics.render.failed', error: error instanceof Error ? error.message : String(error) },
        'Metrics could not be rendered',
      );
      return reply.code(500).send();
    }
    return reply.code(200).header('content-type', rendered.contentType).send(rendered.body);
  });

  // Empty like the reference's; the public server's JSON error shape is an API concern, not this listener's.
  app.setNotFoundHandler((_request, reply) => reply.code(404).send());

  try {
    await app.listen({ host, port: options.port });
  } catch (error) {
    // The caller decides whether a bind failure is fatal; it gets the error, not a half-open server.
    await app.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  logger.info({ event_name: 'startup.metrics.server.binding', host, port }, `Metrics server listening on ${host}:${port}`);

  return {
    port,
    close: () => app.close(),
  };
}
