import { Gauge, type Registry } from 'prom-client';
import { counter, histogram } from './metric-family.js';
import { PendingObservations } from './pending-counts.js';
import type { SlowConsumerTrigger } from '../streaming/stream-request.js';
import type { SseRoute } from './aviso-metrics.js';
import type { GapScope } from '../streaming/frames.js';

const GAP_SCOPES: readonly GapScope[] = ['request', 'stream'];

const SLOW_CONSUMER_TRIGGERS: readonly SlowConsumerTrigger[] = ['buffered_events', 'buffered_bytes', 'process_buffered_bytes', 'stalled'];
const SSE_ROUTES: readonly SseRoute[] = ['/api/v1/watch', '/api/v1/replay'];

/** Live delivery lag buckets: from a millisecond (an idle server) to half a minute (a saturated one). */
const DELIVERY_LAG_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The delivery series (docs/metrics.md), every one present from startup: slow-consumer closes and
 * resets (D37), the bytes held for clients, the lag of live delivery, and what streams said of
 * history they could not deliver (D41, D42).
 */
export interface StreamBufferMetrics {
  slowConsumerClosed(route: SseRoute, trigger: SlowConsumerTrigger): void;
  streamReset(route: SseRoute): void;
  historyGap(route: SseRoute, scope: GapScope): void;
  sequenceReset(route: SseRoute): void;
  observeStreamBuffers(read: () => number): void;
  /** A notification accepted at `acceptedAtNs` (ns since the epoch) was written on one more stream now. */
  readonly deliveryLag: (acceptedAtNs: bigint) => void;
}

export function defineStreamBufferMetrics(register: Registry, backend: string): StreamBufferMetrics {
  const registers = [register];
  // Observed once per delivery: kept as bucket counts, added to the histogram when it is read.
  const pendingLag = new PendingObservations(DELIVERY_LAG_BUCKETS);
  const lag = histogram(
    register,
    'aviso_delivery_lag_seconds',
    'Time from a notification being accepted (stored) to its frame being written on a live stream, once per stream it reaches.',
    ['backend'],
    DELIVERY_LAG_BUCKETS,
    (read) => pendingLag.drainInto(read),
  );
  lag.zero({ backend });
  const slowConsumers = counter(
    register,
    'aviso_sse_slow_consumer_closes_total',
    'Streams closed as slow consumers (end_of_stream, cause slow_consumer), by the bound passed or stalled.',
    ['route', 'trigger'],
  );
  const resets = counter(
    register,
    'aviso_sse_stream_resets_total',
    'Closed streams reset because their client did not read the end of the stream within watch_endpoint.stall_timeout_sec.',
    ['route'],
  );
  const gaps = counter(
    register,
    'aviso_sse_history_gaps_total',
    'History gaps said to streams (replay-control history_gap): request, notifications of the request were lost; stream, sequences were lost whose topics the store no longer knows.',
    ['route', 'scope'],
  );
  const sequenceResets = counter(
    register,
    'aviso_sse_sequence_resets_total',
    'Streams whose start was beyond the last sequence of their stream (its numbering reset under the client): replayed from the first sequence.',
    ['route'],
  );
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
    sequenceResets.inc({ route }, 0);
    for (const scope of GAP_SCOPES) gaps.inc({ route, scope }, 0);
    for (const trigger of SLOW_CONSUMER_TRIGGERS) slowConsumers.inc({ route, trigger }, 0);
  }
  return {
    slowConsumerClosed: (route, trigger) => slowConsumers.inc({ route, trigger }),
    streamReset: (route) => resets.inc({ route }),
    historyGap: (route, scope) => gaps.inc({ route, scope }),
    sequenceReset: (route) => sequenceResets.inc({ route }),
    observeStreamBuffers: (read) => {
      readBuffered = read;
    },
    deliveryLag: (acceptedAtNs) => {
      const seconds = (Date.now() - Number(acceptedAtNs) / 1e6) / 1000;
      // A clock a little behind the broker's (JetStream on another host) must not record a negative lag.
      pendingLag.observe(seconds > 0 ? seconds : 0);
    },
  };
}
