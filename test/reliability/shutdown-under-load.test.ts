import { Agent, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { UUID_V4 } from '../support/http.js';
import { MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';
import { eventually } from '../support/eventually.js';
import { RawSseStream, openStreams } from './support/raw-sse.js';

/**
 * Graceful shutdown under load (issue 9; docs/design/rules/streaming.md §8.4, docs/design/rules/operations.md §4.2): a real server
 * process with 1,000 open watch streams and notify traffic gets SIGTERM. Every stream must end
 * with the `server_shutdown` frame, every notify must either be acknowledged (200) or fail cleanly,
 * the process must exit 0 within the grace period, and (JetStream) every acknowledged notify must
 * be in the stream afterwards.
 */

const STREAMS = 1_000;
/** Streams that match the notify traffic; the others watch a topic nobody publishes to. */
const ACTIVE_STREAMS = 100;
const NOTIFY_LOOPS = 4;
/** docs/design/rules/operations.md §4.2: in-flight requests get 30 s; the metrics listener 5 s before that. */
const SHUTDOWN_GRACE_MS = 30_000;
const METRICS_GRACE_MS = 5_000;
/** Backend drain, log flush and process exit on a loaded machine. */
const EXIT_SLACK_MS = 10_000;

const ACTIVE_WATCH = JSON.stringify({ event_type: 'mars', identifier: { class: 'od' } });
const IDLE_WATCH = JSON.stringify({ event_type: 'mars', identifier: { class: 'rd' } });

type NotifyOutcome =
  | { readonly kind: 'acked'; readonly i: number }
  | { readonly kind: 'status'; readonly i: number; readonly status: number; readonly body: string; readonly requestId: string | undefined }
  | { readonly kind: 'transport'; readonly i: number; readonly code: string };

/** Notifies on a few keep-alive connections, as a producer would, until told to stop. */
class NotifyTraffic {
  readonly outcomes: NotifyOutcome[] = [];
  private next = 0;
  private stopped = false;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: NOTIFY_LOOPS });
  private readonly loops: Promise<void>[];

  constructor(private readonly origin: URL) {
    this.loops = Array.from({ length: NOTIFY_LOOPS }, () => this.loop());
  }

  get acked(): number[] {
    return this.outcomes.flatMap((outcome) => (outcome.kind === 'acked' ? [outcome.i] : []));
  }

  /** Keeps sending until every loop has seen the server refuse connections (it has exited). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
    this.agent.destroy();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) await this.notifyOnce(this.next++);
  }

  private notifyOnce(i: number): Promise<void> {
    const body = JSON.stringify({ ...MARS_EXAMPLE, payload: { i } });
    return new Promise((resolve) => {
      const req = request(
        {
          agent: this.agent,
          host: this.origin.hostname,
          port: this.origin.port,
          path: '/api/v1/notification',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            if (res.statusCode === 200) this.outcomes.push({ kind: 'acked', i });
            else {
              const requestId = res.headers['x-request-id'];
              this.outcomes.push({
                kind: 'status',
                i,
                status: res.statusCode ?? 0,
                body: text,
                requestId: typeof requestId === 'string' ? requestId : undefined,
              });
            }
            resolve();
          });
          res.on('error', (error: NodeJS.ErrnoException) => {
            this.outcomes.push({ kind: 'transport', i, code: error.code ?? error.message });
            resolve();
          });
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        this.outcomes.push({ kind: 'transport', i, code: error.code ?? error.message });
        // Once the server is gone every attempt is refused at once; do not spin.
        setTimeout(resolve, 20);
      });
      req.end(body);
    });
  }
}

/** Transport failures a client can retry safely: nothing was acknowledged on that request. */
const CLEAN_TRANSPORT_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'socket hang up']);

/** Several processes start on two shared cores; the default 15 s is short when other work runs. */
const START_TIMEOUT_MS = 60_000;

/** Each backend in one process, and JetStream with two worker processes behind one port (D36). */
const SETUPS = [...BACKEND_KINDS.map((kind) => ({ kind, workers: 1 })), { kind: 'jetstream' as const, workers: 2 }];

describe.each(SETUPS)('shutdown under load ($kind, $workers process(es))', ({ kind, workers }) => {
  const backend = useBackend(kind);

  it('ends 1,000 streams with server_shutdown, settles every notify and exits within the grace period', async () => {
    const config = backend.config({
      ...(workers > 1 ? { application: { ...(serverConfig().application as object), workers } } : {}),
      watch_endpoint: { max_historical_notifications: 1_000_000 },
      ...(kind === 'in_memory' ? { notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: 1_000_000 } } } : {}),
    });
    const server = await startServer({ config, startTimeoutMs: START_TIMEOUT_MS });
    let stopped = false;
    try {
      const streams = await openStreams(
        STREAMS,
        (index) =>
          new RawSseStream(server.url, '/api/v1/watch', index < ACTIVE_STREAMS ? ACTIVE_WATCH : IDLE_WATCH, {
            keepFrames: index < ACTIVE_STREAMS,
          }),
      );
      expect(streams.every((stream) => stream.status === 200)).toBe(true);

      const traffic = new NotifyTraffic(new URL(server.url));
      // Shut down while notifies flow and every active stream is delivering them.
      await eventually(
        'notify traffic reaching every active stream',
        () =>
          traffic.acked.length >= 50 &&
          streams.slice(0, ACTIVE_STREAMS).every((stream) => stream.frames.some((f) => f.event === 'live-notification')),
        { timeoutMs: 30_000 },
      );

      const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
      const signalledAt = performance.now();
      server.process.kill('SIGTERM');
      const code = await exited;
      const shutdownMs = performance.now() - signalledAt;
      stopped = true;
      await traffic.stop();
      await Promise.all(streams.map((stream) => stream.closed()));

      // Every stream: its last frame is the shutdown close of its own request, then the end.
      const withShutdown = streams.filter((stream) => stream.closeReason === 'server_shutdown');
      const others = streams
        .filter((stream) => stream.closeReason !== 'server_shutdown')
        .map((s) => s.closeReason ?? s.transportError?.message ?? 'no close frame');
      expect(others).toEqual([]);
      expect(withShutdown).toHaveLength(STREAMS);
      for (const stream of streams) {
        expect(stream.closeFrame).toMatchObject({ message: 'Server is shutting down gracefully', reason: 'server_shutdown' });
        expect(stream.closeFrame?.request_id).toMatch(UUID_V4);
        expect(stream.transportError).toBeUndefined();
      }
      for (const stream of streams.slice(0, ACTIVE_STREAMS)) expect(stream.frames.at(-1)?.event).toBe('connection-closing');

      // Exit 0 after the backend closed, within the configured grace (measured from SIGTERM).
      expect(code).toBe(0);
      expect(shutdownMs).toBeLessThan(METRICS_GRACE_MS + SHUTDOWN_GRACE_MS + EXIT_SLACK_MS);
      const events = server.logs.map((line) => line.attributes?.['event.name']);
      expect(events).toContain('startup.shutdown.token.cancelled');
      expect(events).toContain('startup.backend.shutdown.succeeded');
      if (workers > 1) expectEveryWorkerDrained(server, streams, workers);

      // Every notify was acknowledged or failed cleanly at the transport (nothing acknowledged, a
      // client retries): a request that reached the server while it drained is served, not
      // answered with an error status.
      const acked = traffic.acked;
      const statusFailures = traffic.outcomes.filter((o) => o.kind === 'status');
      const transportFailures = traffic.outcomes.filter((o) => o.kind === 'transport');
      expect(statusFailures).toEqual([]);
      expect(transportFailures.filter((o) => !CLEAN_TRANSPORT_FAILURES.has(o.code))).toEqual([]);
      expect(acked.length).toBeGreaterThanOrEqual(50);

      const stored = kind === 'jetstream' ? await storedPayloads(config) : undefined;
      if (stored) expect(acked.filter((i) => !stored.has(i))).toEqual([]);

      console.info(
        `[shutdown-under-load ${kind}, ${workers} process(es)] exit ${code} after ${Math.round(shutdownMs)} ms; ` +
          `${withShutdown.length}/${STREAMS} streams got server_shutdown; notifies sent ${traffic.outcomes.length}, ` +
          `acked ${acked.length}, failed ${statusFailures.length + transportFailures.length} ` +
          `(${summarise(traffic.outcomes)})` +
          (stored ? `, stored ${stored.size} (every acked one among them)` : ''),
      );
    } finally {
      if (!stopped) await server.stop('SIGKILL');
    }
  }, 120_000);
});

/**
 * With several workers: streams were open on every one of them, every worker drained its own
 * (`startup.backend.shutdown.succeeded`) and exited 0, and the primary's last line came after.
 */
function expectEveryWorkerDrained(server: RunningServer, streams: readonly RawSseStream[], workers: number): void {
  const workerIds = Array.from({ length: workers }, (_, index) => index + 1);
  const streamRequests = new Set(streams.map((stream) => stream.requestId));
  const servedBy = new Set(
    server.logs
      .filter(
        (line) =>
          line.attributes?.['event.name'] === 'api.watch.stream.established' && streamRequests.has(line.attributes.request_id as string),
      )
      .map((line) => line.attributes?.worker_id),
  );
  expect([...servedBy].sort()).toEqual(workerIds);
  const drained = server.logs.filter((line) => line.attributes?.['event.name'] === 'startup.backend.shutdown.succeeded');
  expect(drained.map((line) => line.attributes?.worker_id).sort()).toEqual(workerIds);
  const exits = server.logs.filter((line) => line.attributes?.['event.name'] === 'cluster.worker.exited');
  expect(exits.map((line) => [line.attributes?.worker, line.attributes?.exit_code]).sort()).toEqual(workerIds.map((id) => [id, 0]));
  expect(server.logs.at(-1)?.attributes).toMatchObject({ 'event.name': 'startup.server.stopped', worker_id: 0, clean: true });
}

function summarise(outcomes: readonly NotifyOutcome[]): string {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    const key = outcome.kind === 'acked' ? '200' : outcome.kind === 'status' ? String(outcome.status) : outcome.code;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${key}: ${count}`).join(', ');
}

/** Restarts aviso on the same NATS store and replays the whole mars history: the payload indexes stored. */
async function storedPayloads(config: Record<string, unknown>): Promise<Set<number>> {
  const server: RunningServer = await startServer({ config, startTimeoutMs: START_TIMEOUT_MS });
  try {
    const replay = await SseClient.open(`${server.url}/api/v1/replay`, {
      event_type: 'mars',
      identifier: { class: 'od' },
      from_id: '1',
    });
    expect(replay.status).toBe(200);
    const events = await replay.rest(30_000);
    const closing = events.at(-1);
    expect(closing?.json).toMatchObject({ reason: 'end_of_stream' });
    const stored = new Set<number>();
    for (const event of events) {
      if (event.event !== 'replay') continue;
      const payload = (event.json.data as { payload?: { i?: unknown } }).payload;
      stored.add(Number(payload?.i));
    }
    return stored;
  } finally {
    await server.stop();
  }
}
