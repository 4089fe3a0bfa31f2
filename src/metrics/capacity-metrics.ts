import { Gauge, type Registry } from 'prom-client';
import { counter } from './metric-family.js';
import type { SseRoute } from './aviso-metrics.js';

const SSE_ROUTES: readonly SseRoute[] = ['/api/v1/watch', '/api/v1/replay'];

/** The limits a process runs with, read once at startup: a reload does not change them. */
export interface CapacityLimits {
  /** `application.max_connections`. */
  readonly maxConnections: number;
  /** `application.max_streams`. */
  readonly maxStreams: number;
  /** `watch_endpoint.max_total_buffered_bytes`. */
  readonly maxTotalBufferedBytes: number;
}

/**
 * What the dashboard and the alert rules (`deploy/`) need beside the other families
 * (docs/metrics.md): the backend's connection state as `/ready` reports it, the streams closed
 * because their credentials expired, what the stream and connection limits refused (D44), and
 * the configured limits, so "near the limit" is a ratio Prometheus can compute instead of a
 * threshold copied into every rule.
 */
export interface CapacityMetrics {
  tokenExpiryClosed(route: SseRoute): void;
  streamRefused(route: SseRoute): void;
  connectionRefused(): void;
  /** Reads the backend's connection state at every scrape from now on. */
  followBackend(isConnected: () => boolean): void;
}

export function registerCapacityMetrics(register: Registry, backend: string, limits: CapacityLimits | undefined): CapacityMetrics {
  const registers = [register];
  const tokenExpiry = counter(
    register,
    'aviso_sse_token_expiry_closes_total',
    'Streams closed because the credentials they were opened with expired (end_of_stream, cause token_expired).',
    ['route'],
  );
  const streamsRefused = counter(
    register,
    'aviso_sse_streams_refused_total',
    'Stream requests (watch and replay, POST and GET) answered 503 TOO_MANY_STREAMS because the process held application.max_streams streams.',
    ['route'],
  );
  for (const route of SSE_ROUTES) {
    tokenExpiry.inc({ route }, 0);
    streamsRefused.inc({ route }, 0);
  }
  const connectionsRefused = counter(
    register,
    'aviso_http_connections_refused_total',
    'Connections to the public port closed unanswered because the process held application.max_connections connections.',
  );
  connectionsRefused.inc(0);

  let connected: () => boolean = () => false;
  new Gauge({
    name: 'aviso_backend_connected',
    help: '1 while the notification backend is connected (GET /ready answers 200), 0 while it is down or reconnecting.',
    labelNames: ['backend'],
    registers,
    // Several processes behind one metrics port: one that lost NATS makes the whole 0.
    aggregator: 'min',
    collect() {
      this.set({ backend }, connected() ? 1 : 0);
    },
  });

  if (limits) {
    new Gauge({
      name: 'aviso_http_max_connections',
      help: 'application.max_connections: client connections the process accepts at once.',
      registers,
    }).set(limits.maxConnections);
    new Gauge({
      name: 'aviso_sse_max_streams',
      help: 'application.max_streams: watch and replay streams the process holds at once.',
      registers,
    }).set(limits.maxStreams);
    new Gauge({
      name: 'aviso_sse_max_total_buffered_bytes',
      help: 'watch_endpoint.max_total_buffered_bytes: bytes all streams together may hold for their clients.',
      registers,
    }).set(limits.maxTotalBufferedBytes);
  }

  return {
    tokenExpiryClosed: (route) => tokenExpiry.inc({ route }),
    streamRefused: (route) => streamsRefused.inc({ route }),
    connectionRefused: () => connectionsRefused.inc(),
    followBackend(isConnected) {
      connected = isConnected;
    },
  };
}
