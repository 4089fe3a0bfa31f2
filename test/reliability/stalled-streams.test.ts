import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { queryOf } from '../support/get-streams.js';
import { findFreePort } from '../support/ports.js';
import { MARS_EXAMPLE } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, withTls, type TestCertificates } from '../support/test-certificates.js';
import { flood } from './support/flood.js';
import { PausableStream, type StreamEnd, type StreamTarget, type Transport } from './support/pausable-stream.js';
import { metricSum } from './support/raw-sse.js';

/**
 * No stream stalls silently (D37; docs/streaming.md "Slow consumers"), reproduced as reported:
 * a watcher reads its first frame and stops reading while a flood of notifications goes to its
 * filter, another watcher on the same filter reads normally, and after the flood the stopped
 * watcher reads again as fast as it can. The server closes it as a slow consumer; when it reads
 * again it must get either the close frame and the end of the response (it read in time) or a
 * reset (it did not, within `watch_endpoint.stall_timeout_sec`), never an open, silent stream and
 * never an end without a close frame. Its notifications until then are a gap-free prefix, and
 * resuming from its cursor gets the rest. The normal watcher gets everything.
 *
 * Both backends; plain HTTP/1.1 and a TLS port serving HTTP/1.1 and HTTP/2; POST and GET streams.
 * Several cases run one after the other on each server (payload sizes that pass different bounds,
 * reading again before or after the bound), so an intermittent stall cannot pass by luck.
 */

const STALL_TIMEOUT_SEC = 3;
const MAX_BUFFERED_EVENTS = 200;
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
const FILTER = { event_type: 'mars', identifier: { class: 'od' } };

interface FloodCase {
  readonly name: string;
  readonly notifications: number;
  readonly payloadBytes: number;
  /** Read again right after the close was logged (in time), or once the bound has passed. */
  readonly readAgain: 'in_time' | 'after_bound';
}

const CASES: readonly FloodCase[] = [
  {
    name: 'the reported case: 32 KiB notifications, reading again after the bound',
    notifications: 800,
    payloadBytes: 32 * 1024,
    readAgain: 'after_bound',
  },
  {
    name: 'small notifications past max_buffered_events, reading again in time',
    notifications: 2_000,
    payloadBytes: 8 * 1024,
    readAgain: 'in_time',
  },
  {
    name: 'large notifications past max_buffered_bytes, reading again after the bound',
    notifications: 400,
    payloadBytes: 64 * 1024,
    readAgain: 'after_bound',
  },
];

/** A slow watcher: how it connects, and which request it sends. */
interface SlowWatcher {
  readonly transport: Transport;
  readonly method: 'POST' | 'GET';
}

const PLAIN_WATCHERS: readonly SlowWatcher[] = [
  { transport: 'http/1.1', method: 'POST' },
  { transport: 'http/1.1', method: 'GET' },
];
const TLS_WATCHERS: readonly SlowWatcher[] = [
  { transport: 'https/1.1', method: 'POST' },
  { transport: 'h2', method: 'POST' },
  { transport: 'h2', method: 'GET' },
];

describe.each(BACKEND_KINDS)('no silent stall after a slow-consumer close (%s)', (kind) => {
  const backend = useBackend(kind);
  let certificates: TestCertificates;
  beforeAll(() => {
    certificates = createTestCertificates();
  });
  afterAll(() => certificates.remove());

  const config = (metricsPort: number): Record<string, unknown> =>
    backend.config({
      metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
      watch_endpoint: {
        max_buffered_events: MAX_BUFFERED_EVENTS,
        max_buffered_bytes: MAX_BUFFERED_BYTES,
        stall_timeout_sec: STALL_TIMEOUT_SEC,
      },
      // Everything published stays stored, so the resume can be checked against all of it.
      ...(kind === 'in_memory' ? { notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: 10_000 } } } : {}),
    });

  it.each([
    { name: 'plain HTTP/1.1', tls: false, watchers: PLAIN_WATCHERS },
    { name: 'TLS: HTTP/1.1 and HTTP/2', tls: true, watchers: TLS_WATCHERS },
  ])(
    'over $name: every slow watcher gets its close or a reset, then resumes without a gap',
    async ({ tls, watchers }) => {
      const metricsPort = await findFreePort();
      const server = await startServer({ config: tls ? withTls(config(metricsPort), certificates) : config(metricsPort) });
      try {
        const origin = tls ? `https://127.0.0.1:${server.port}` : server.url;
        const target = (transport: Transport): StreamTarget => ({ origin, transport, ca: certificates.ca });
        const writerTarget = target(tls ? 'https/1.1' : 'http/1.1');
        for (const floodCase of CASES) {
          await runCase(server, floodCase, watchers, target, writerTarget);
        }
        const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        const exposition = await scrape();
        expect(metricSum(exposition, 'aviso_sse_slow_consumer_closes_total')).toBeGreaterThanOrEqual(CASES.length * watchers.length);
        await eventually(
          'nothing to be held for clients any more',
          async () => metricSum(await scrape(), 'aviso_sse_buffered_bytes') === 0,
          { timeoutMs: 20_000 },
        );
      } finally {
        await server.stop('SIGKILL');
      }
    },
    600_000,
  );
});

async function runCase(
  server: RunningServer,
  floodCase: FloodCase,
  watchers: readonly SlowWatcher[],
  target: (transport: Transport) => StreamTarget,
  writerTarget: StreamTarget,
): Promise<void> {
  const label = `[${floodCase.name}]`;
  const open = (watcher: SlowWatcher): Promise<PausableStream> =>
    PausableStream.open(target(watcher.transport), '/api/v1/watch', watcher.method === 'GET' ? queryOf(FILTER) : FILTER);
  const normal = await open(watchers[0] as SlowWatcher);
  const slow = await Promise.all(watchers.map(open));
  for (const stream of slow) stream.pause();

  const pad = 'p'.repeat(floodCase.payloadBytes);
  const logsFrom = server.logs.length;
  // Each slow watcher reads again once the server closed it (in time) or once it was reset.
  const readAgain = slow.map((stream) =>
    eventually(
      `${label} the ${floodCase.readAgain === 'in_time' ? 'slow-consumer close' : 'reset'} of ${stream.requestId}`,
      () => {
        const ready =
          floodCase.readAgain === 'in_time' ? closedAsSlowConsumer(server, stream.requestId) : wasReset(server, stream.requestId);
        if (ready) stream.resume();
        return ready;
      },
      { timeoutMs: 120_000, intervalMs: 20 },
    ),
  );
  const accepted = await flood(writerTarget, floodCase.notifications, (i) => ({ ...MARS_EXAMPLE, payload: { i, pad } }));
  expect(accepted).toBe(floodCase.notifications);

  // The normal watcher, on the same filter, receives everything, in order.
  await eventually(`${label} the normal watcher to receive every notification`, () => normal.sequences.length === floodCase.notifications, {
    timeoutMs: 120_000,
  });
  const published = normal.sequences;
  expect(isConsecutive(published)).toBe(true);
  expect(normal.hasEnded).toBe(false);
  // The server decided to close every slow watcher (and, unread, reset it).
  await Promise.all(readAgain);
  for (const stream of slow) expect(closedAsSlowConsumer(server, stream.requestId)).toBe(true);
  const ends = await Promise.all(
    slow.map(async (stream, index) => {
      const end = await Promise.race([stream.ended(), silence(60_000)]);
      return { stream, end, watcher: watchers[index] as SlowWatcher };
    }),
  );
  for (const { stream, end, watcher } of ends) {
    const context = `${label} ${watcher.transport} ${watcher.method}: ${JSON.stringify(end)}`;
    expect(end.kind, context).not.toBe('silent');
    expect(end.kind, context).not.toBe('ended_without_close');
    if (end.kind === 'closed') {
      expect(end.close, context).toMatchObject({ reason: 'end_of_stream', cause: 'slow_consumer' });
      expect(stream.frames.at(-1)?.event, context).toBe('connection-closing');
    }
    if (floodCase.readAgain === 'in_time') expect(end.kind, context).toBe('closed');
    // What it got is a gap-free prefix of what was published...
    expect(stream.sequences, context).toEqual(published.slice(0, stream.sequences.length));
    expect(stream.sequences.length, context).toBeLessThan(published.length);
    // ...and it resumes from its cursor as the aviso client does: the rest, no gap, no duplicate.
    const lastSeen = stream.sequences.at(-1) ?? (published[0] as number) - 1;
    const resumed = await PausableStream.open(target(watcher.transport), '/api/v1/replay', { ...FILTER, from_id: String(lastSeen + 1) });
    const resumedEnd = await resumed.ended();
    expect(resumedEnd, context).toMatchObject({ kind: 'closed', close: { reason: 'end_of_stream' } });
    expect([...stream.sequences, ...resumed.sequences.filter((sequence) => sequence <= (published.at(-1) as number))], context).toEqual(
      published,
    );
  }
  console.info(
    `${label} ${ends.map(({ end, stream, watcher }) => `${watcher.transport} ${watcher.method}: ${end.kind} after ${stream.sequences.length}`).join('; ')}; ` +
      `${server.logs.slice(logsFrom).filter((line) => line.attributes?.['event.name'] === 'stream.end.reset').length} resets logged`,
  );
  normal.destroy();
}

type Outcome = StreamEnd | { readonly kind: 'silent' };

/** Resolves after `ms` with the stall this suite exists to catch. */
function silence(ms: number): Promise<Outcome> {
  return new Promise((resolve) => setTimeout(() => resolve({ kind: 'silent' }), ms));
}

function closedAsSlowConsumer(server: RunningServer, requestId: string): boolean {
  return server.logs.some(
    (line) =>
      line.attributes?.['event.name'] === 'stream.slow_consumer.closed' &&
      line.attributes.request_id === requestId &&
      line.attributes.cause === 'slow_consumer' &&
      line.attributes.reason === 'end_of_stream',
  );
}

function wasReset(server: RunningServer, requestId: string): boolean {
  return server.logs.some((line) => line.attributes?.['event.name'] === 'stream.end.reset' && line.attributes.request_id === requestId);
}

function isConsecutive(sequences: readonly number[]): boolean {
  return sequences.every((sequence, index) => index === 0 || sequence === (sequences[index - 1] as number) + 1);
}
