import { Counter, Gauge, type Registry } from 'prom-client';
import type { SlowConsumerTrigger } from '../streaming/stream-request.js';
import type { SseRoute } from './aviso-metrics.js';

export const SLOW_CONSUMER_TRIGGERS: readonly SlowConsumerTrigger[] = [
  'buffered_events',
  'buffered_bytes',
  'process_buffered_bytes',
  'stalled',
];
const SSE_ROUTES: readonly SseRoute[] = ['/api/v1/watch', '/api/v1/replay'];

/** The slow-consumer and no-silent-stall series (docs/metrics.md), every one present from startup. */
export interface StreamBufferMetrics {
  slowConsumerClosed(route: SseRoute, trigger: SlowConsumerTrigger): void;
  streamReset(route: SseRoute): void;
  observeStreamBuffers(read: () => number): void;
}

export function defineStreamBufferMetrics(register: Registry): StreamBufferMetrics {
  const registers = [register];
  const slowConsumers = new Counter({
    name: 'aviso_sse_slow_consumer_closes_total',
    help: 'Streams closed as slow consumers (end_of_stream, cause slow_consumer), by the bound passed or stalled.',
    labelNames: ['route', 'trigger'],
    registers,
  });
  const resets = new Counter({
    name: 'aviso_sse_stream_resets_total',
    help: 'Closed streams reset because their client did not read the end of the stream within watch_endpoint.stall_timeout_sec.',
    labelNames: ['route'],
    registers,
  });
  let readBuffered: () => number = () => 0;
  new Gauge({
    name: 'aviso_sse_buffered_bytes',
    help: 'Bytes all open streams hold for their clients (queued or not yet handed to the kernel).',
    registers,
    collect() {
      this.set(readBuffered());
    },
  });
  for (const route of SSE_ROUTES) {
    resets.inc({ route }, 0);
    for (const trigger of SLOW_CONSUMER_TRIGGERS) slowConsumers.inc({ route, trigger }, 0);
  }
  return {
    slowConsumerClosed: (route, trigger) => slowConsumers.inc({ route, trigger }),
    streamReset: (route) => resets.inc({ route }),
    observeStreamBuffers: (read) => {
      readBuffered = read;
    },
  };
}
