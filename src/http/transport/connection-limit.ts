import type { Server, Socket } from 'node:net';
import type { Logger } from 'pino';
import { RateLimitedLine, REFUSAL_LOG_INTERVAL_MS } from '../../logging/rate-limited-line.js';

export interface ConnectionLimit {
  /** `application.max_connections`. */
  readonly maxConnections: number;
  readonly logger: Logger;
  /** Counts one refused connection (`aviso_http_connections_refused_total`). */
  readonly refused: () => void;
}

/**
 * `application.max_connections`, the last defence behind the stream limit (D44): a connection
 * accepted while the process already holds that many is closed at once, before any byte is read
 * or sent (no TLS work either), counted, and logged at most once per 10 s.
 *
 * Node's own `server.maxConnections` is not used. It closes such a connection without telling
 * anyone (its `drop` event aside), and in a worker of `application.workers` it is worse: the
 * cluster module hands the refused connection to another worker, and when every worker is full
 * the connection circles between them until one has room, a busy loop of the primary and the
 * workers while the client waits for nothing. Counting here behaves the same in every process.
 */
export function limitConnections(server: Server, limit: ConnectionLimit): void {
  const { maxConnections, logger, refused } = limit;
  const line = new RateLimitedLine(REFUSAL_LOG_INTERVAL_MS);
  let open = 0;
  // After Node's own listener (HTTP parser or TLS wrapping): a socket destroyed here is cleaned
  // up by the usual close path.
  server.on('connection', (socket: Socket) => {
    if (open >= maxConnections) {
      const remoteAddress = socket.remoteAddress;
      socket.destroy();
      refused();
      const count = line.occurred();
      if (count > 0) {
        logger.warn(
          { event_name: 'http.connection.refused', max_connections: maxConnections, refused: count, remote_address: remoteAddress },
          'Connections refused: the process holds application.max_connections',
        );
      }
      return;
    }
    open++;
    socket.once('close', () => {
      open--;
    });
  });
}
