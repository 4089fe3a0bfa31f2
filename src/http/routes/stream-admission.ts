import type { FastifyRequest } from 'fastify';
import { RateLimitedLine, REFUSAL_LOG_INTERVAL_MS } from '../../logging/rate-limited-line.js';
import type { AvisoMetrics, SseRoute } from '../../metrics/aviso-metrics.js';
import type { StreamEndpoint } from '../../schema/watch-identifier.js';
import type { StreamSlot } from '../../streaming/stream-slots.js';
import type { StreamSupervisor } from '../../streaming/stream-supervisor.js';
import { STREAM_RETRY_AFTER_SEC, tooManyStreamsError } from './error-bodies.js';

/**
 * The stream limit at the door (D44): a watch or replay request, POST or GET, takes a slot under
 * `application.max_streams` before anything is done for it, or is answered `503 TOO_MANY_STREAMS`
 * with `Retry-After`, counted, and logged at most once per 10 s. Its body has been read by then,
 * so closing an HTTP/1.1 connection after the answer cannot cost the client its 503 (a close with
 * unread input would reset the connection). Every other route is outside the limit.
 */
export class StreamAdmission {
  private readonly refusalLine = new RateLimitedLine(REFUSAL_LOG_INTERVAL_MS);

  constructor(
    private readonly streams: StreamSupervisor,
    private readonly metrics: AvisoMetrics,
    private readonly randomFraction: () => number = Math.random,
  ) {}

  /** The request's slot; throws the 503 when every slot is taken. */
  admit(request: FastifyRequest, endpoint: StreamEndpoint): StreamSlot {
    const slot = this.streams.takeSlot();
    if (slot) return slot;
    const route: SseRoute = endpoint === 'watch' ? '/api/v1/watch' : '/api/v1/replay';
    const maxStreams = this.streams.maxStreams;
    this.metrics.streamRefused(route);
    const refused = this.refusalLine.occurred();
    if (refused > 0) {
      request.log.warn(
        { event_name: 'stream.limit.refused', route, max_streams: maxStreams, refused },
        'Stream requests refused: the process holds application.max_streams streams',
      );
    }
    throw tooManyStreamsError(maxStreams, this.retryAfterSec());
  }

  private retryAfterSec(): number {
    const { min, max } = STREAM_RETRY_AFTER_SEC;
    return min + Math.floor(this.randomFraction() * (max - min + 1));
  }
}
