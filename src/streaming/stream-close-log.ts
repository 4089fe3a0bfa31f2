import type { Logger } from 'pino';
import type { StreamEndpoint } from '../schema/watch-identifier.js';
import type { SlowConsumerTrigger, StreamSettings } from './stream-request.js';

/** Which stream a log line is about. */
export interface LoggedStream {
  readonly topic: string;
  readonly endpoint: StreamEndpoint;
}

/**
 * D9/D32, D37: the client is told `end_of_stream` with the cause `slow_consumer`; operators see
 * the cause and the trigger.
 */
export function logSlowConsumerClose(
  logger: Logger,
  stream: LoggedStream,
  trigger: SlowConsumerTrigger,
  bufferedBytes: number,
  settings: StreamSettings,
  stalledMs: number | undefined,
): void {
  logger.warn(
    {
      event_name: 'stream.slow_consumer.closed',
      topic: stream.topic,
      endpoint: stream.endpoint,
      reason: 'end_of_stream',
      cause: 'slow_consumer',
      trigger,
      buffered_bytes: bufferedBytes,
      max_buffered_events: settings.maxBufferedEvents,
      max_buffered_bytes: settings.maxBufferedBytes,
      ...(stalledMs === undefined ? {} : { stalled_ms: stalledMs }),
    },
    'Stream closed: the client did not keep up',
  );
}

/** D37: the stream was closed but its client did not read the end within the bound. */
export function logStreamReset(logger: Logger, stream: LoggedStream, boundMs: number): void {
  logger.warn(
    {
      event_name: 'stream.end.reset',
      topic: stream.topic,
      endpoint: stream.endpoint,
      bound_ms: boundMs,
    },
    'Stream reset: its client did not read the end of the stream in time',
  );
}

/** An expected end (the client reconnects with fresh credentials), so logged at info. */
export function logTokenExpiryClose(logger: Logger, stream: LoggedStream): void {
  logger.info(
    {
      event_name: 'stream.token_expired.closed',
      topic: stream.topic,
      endpoint: stream.endpoint,
      reason: 'end_of_stream',
      cause: 'token_expired',
    },
    'Stream closed: its credentials expired',
  );
}
