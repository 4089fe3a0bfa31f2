import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend, type BackendUnderTest } from '../support/backends.js';
import { UUID_V4 } from '../support/http.js';
import { findFreePort } from '../support/ports.js';
import { MARS_EXAMPLE } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SLOW_CONSUMER_CLOSE } from '../support/transcript.js';
import { eventually } from '../support/eventually.js';
import { RawSseStream, metricSum, rssBytes, sequenceOf, type RawFrame } from './support/raw-sse.js';

/**
 * Slow and vanishing clients (issue 9, D9; docs/design/rules/streaming.md §12) against the real server process:
 * on one topic, healthy watchers read normally while one watcher stops reading (its socket paused,
 * so the kernel buffers fill and the server sees backpressure), one reads in short bursts with long
 * pauses, and one disconnects in the middle of a frame. With a small
 * `watch_endpoint.max_buffered_events`:
 * - the stalled stream ends with the slow-consumer close (D32: `end_of_stream`, cause
 *   `slow_consumer`) after a gap-free prefix, and resuming from its cursor with a replay gets the
 *   rest without a gap or a duplicate; the server resets the connection of a client that does not
 *   even read its close within `stall_timeout_sec` (no resources held by a stalled client);
 * - the healthy watchers receive every notification, in order;
 * - the burst reader gets everything in order or a gap-free prefix and the slow-consumer close;
 * - the server's RSS growth stays below what buffering everything for the stalled watchers would take;
 * - once every client is gone the SSE gauges are back to zero and the backend holds no live
 *   subscription (JetStream: no consumer left on the server).
 */

const MAX_BUFFERED_EVENTS = 64;
const NOTIFICATIONS = 800;
/** Payload text per notification: 800 × 32 KiB ≈ 26 MB pushed at every watcher. */
const PAD = 'x'.repeat(32 * 1024);
const HEALTHY_WATCHERS = 3;
/** Watchers that stop reading for good, on top of the one that resumes after its close. */
const FROZEN_WATCHERS = 4;
const RSS_ALLOWANCE_BYTES = 48 * 1024 * 1024;
const WATCH = JSON.stringify({ event_type: 'mars', identifier: { class: 'od' } });
const POSTERS = 2;
/** How long a closed stream's client has to read its end before the server resets it (D37). */
const STALL_TIMEOUT_SEC = 5;

describe.each(BACKEND_KINDS)('slow and vanishing clients (%s)', (kind) => {
  const backend = useBackend(kind);

  it('closes the stalled stream (cause slow_consumer), which resumes without a gap; others get everything; memory bounded; nothing leaks', async () => {
    const metricsPort = await findFreePort();
    const server = await startServer({
      config: backend.config({
        metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
        watch_endpoint: { max_buffered_events: MAX_BUFFERED_EVENTS, stall_timeout_sec: STALL_TIMEOUT_SEC },
        // Every notification stays stored (JetStream keeps them all), so the stalled client's
        // resume can be checked against everything published.
        ...(kind === 'in_memory'
          ? { notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: NOTIFICATIONS } } }
          : {}),
      }),
    });
    try {
      const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const consumersBefore = kind === 'jetstream' ? (await consumers(backend)).length : 0;

      const healthy = Array.from({ length: HEALTHY_WATCHERS }, () => new RawSseStream(server.url, '/api/v1/watch', WATCH));
      const stalled = new RawSseStream(server.url, '/api/v1/watch', WATCH);
      const frozen = Array.from({ length: FROZEN_WATCHERS }, () => new RawSseStream(server.url, '/api/v1/watch', WATCH));
      const bursty = new RawSseStream(server.url, '/api/v1/watch', WATCH);
      let cutMidFrame = false;
      let sinceFrameEnd = '';
      const vanishing = new RawSseStream(server.url, '/api/v1/watch', WATCH, {
        onChunk: (stream, chunk) => {
          // Drops the connection as soon as a notification frame has arrived only in part.
          const pending = (sinceFrameEnd + chunk).split('\n\n').at(-1) as string;
          sinceFrameEnd = pending;
          if (pending.startsWith('event: live-notification') && !cutMidFrame) {
            cutMidFrame = true;
            stream.destroy();
          }
        },
      });
      const all = [...healthy, stalled, ...frozen, bursty, vanishing];
      await Promise.all(all.map((stream) => stream.opened()));
      stalled.pause();
      for (const stream of frozen) stream.pause();
      // Reads for 10 ms every 200 ms: far slower than the publisher, catching up in bursts.
      const burstTimer = setInterval(() => {
        bursty.resume();
        setTimeout(() => bursty.pause(), 10);
      }, 200);
      bursty.pause();
      expect(metricSum(await scrape(), 'aviso_sse_connections_active')).toBe(all.length);

      const rssBefore = await rssBytes(server.process.pid as number);
      let rssMax = rssBefore;
      const rssTimer = setInterval(() => {
        void rssBytes(server.process.pid as number)
          .then((rss) => (rssMax = Math.max(rssMax, rss)))
          .catch(() => undefined);
      }, 100);

      let lingering = 0;
      const publishStarted = performance.now();
      // The stalled watcher starts reading again as soon as the server logged its slow-consumer
      // close, well within the STALL_TIMEOUT_SEC the server gives a client to read its final frame.
      let slowClosedAt = Number.NaN;
      const closeWatch = setInterval(() => {
        if (!Number.isNaN(slowClosedAt) || !slowConsumerClosed(server, stalled.requestId)) return;
        slowClosedAt = performance.now();
        stalled.resume();
      }, 20);
      const acked = await publish(server, NOTIFICATIONS);
      const publishedBytes = NOTIFICATIONS * PAD.length;
      expect(acked).toBe(NOTIFICATIONS);

      // The healthy watchers, on the same topic, receive everything in publish order.
      await eventually(
        'every healthy watcher to receive every notification',
        () => healthy.every((stream) => notifications(stream.frames).length === NOTIFICATIONS),
        { timeoutMs: 60_000 },
      );
      const expectedSequences = sequencesOf(notifications(healthy[0]?.frames ?? []));
      expect(isConsecutive(expectedSequences)).toBe(true);
      for (const stream of healthy) {
        const received = notifications(stream.frames);
        expect(sequencesOf(received)).toEqual(expectedSequences);
        expect(new Set(received.map(payloadIndex)).size).toBe(NOTIFICATIONS);
        expect(stream.hasEnded).toBe(false);
      }
      clearInterval(rssTimer);

      // The stalled stream was ended by the server (logged) and, once read, ends with the D32 frame
      // after a gap-free prefix.
      await eventually('the slow-consumer close of the stalled stream', () => !Number.isNaN(slowClosedAt), { timeoutMs: 30_000 });
      clearInterval(closeWatch);
      const closedAfterMs = slowClosedAt - publishStarted;
      await stalled.closed();
      const stalledNotifications = notifications(stalled.frames);
      expect(stalled.closeFrame).toMatchObject(SLOW_CONSUMER_CLOSE);
      expect(stalled.closeFrame?.request_id).toMatch(UUID_V4);
      expect(stalled.frames.at(-1)?.event).toBe('connection-closing');
      expect(stalledNotifications.length).toBeLessThan(NOTIFICATIONS);
      expect(sequencesOf(stalledNotifications)).toEqual(expectedSequences.slice(0, stalledNotifications.length));

      // It resumes as the aviso client does on end_of_stream: from its cursor, last seen + 1.
      const lastSeen = stalledNotifications.length > 0 ? sequenceOf(stalledNotifications.at(-1) as RawFrame) : 0;
      const resumed = new RawSseStream(
        server.url,
        '/api/v1/replay',
        JSON.stringify({ ...JSON.parse(WATCH), from_id: String(lastSeen + 1) }),
      );
      await resumed.closed();
      expect(resumed.closeFrame).toMatchObject({ reason: 'end_of_stream', message: 'Stream completed' });
      const replayed = resumed.frames.filter((frame) => frame.event === 'replay').map(sequenceOf);
      expect([...sequencesOf(stalledNotifications), ...replayed]).toEqual(expectedSequences);

      // The burst reader: all of it, or a gap-free prefix and the slow-consumer close; never a gap.
      clearInterval(burstTimer);
      bursty.resume();
      await eventually('the burst reader to finish', () => bursty.hasEnded || notifications(bursty.frames).length === NOTIFICATIONS, {
        timeoutMs: 60_000,
      });
      const burstNotifications = notifications(bursty.frames);
      expect(sequencesOf(burstNotifications)).toEqual(expectedSequences.slice(0, burstNotifications.length));
      if (burstNotifications.length < NOTIFICATIONS) expect(bursty.closeFrame).toMatchObject(SLOW_CONSUMER_CLOSE);

      expect(cutMidFrame).toBe(true);

      // The frozen watchers never read again: the server closed their streams too and then let go
      // of their sockets although the clients still hold them open, so a stalled client holds nothing.
      await eventually(
        'the slow-consumer close of the frozen streams',
        () => frozen.every((stream) => slowConsumerClosed(server, stream.requestId)),
        { timeoutMs: 30_000 },
      );
      await eventually(
        'the server to drop the frozen sockets',
        async () =>
          (await Promise.all(frozen.map((stream) => isEstablished(server.port, stream.localPort as number)))).every((open) => !open),
        { timeoutMs: 25_000 },
      );
      expect(frozen.every((stream) => !stream.hasEnded)).toBe(true);

      // Memory: what the server holds for a stalled stream is bounded by its buffer, not by what is
      // published. Buffering everything for the six stalled watchers would retain 6 × the volume;
      // the bound leaves room for the garbage a burst of 32 KiB notifies leaves before V8 collects it
      // (about 80 MB measured with no watcher at all).
      // The in-memory store itself holds everything published once (see the config above).
      const rssGrowth = rssMax - rssBefore;
      const stored = kind === 'in_memory' ? publishedBytes : 0;
      expect(rssGrowth).toBeLessThan(3 * publishedBytes + stored + RSS_ALLOWANCE_BYTES);

      // Every client gone: SSE gauges at zero, no live subscription left in the backend.
      for (const stream of all) stream.destroy();
      await eventually(
        'aviso_sse_connections_active to return to 0',
        async () => metricSum(await scrape(), 'aviso_sse_connections_active') === 0,
        { timeoutMs: 15_000 },
      );
      const exposition = await scrape();
      // Every watcher, and the stalled client's resuming replay.
      expect(metricSum(exposition, 'aviso_sse_connections_total')).toBe(all.length + 1);
      expect(metricSum(exposition, 'aviso_http_requests_in_flight')).toBe(0);
      if (kind === 'jetstream') {
        // The shared live consumer (D10) is deleted once its last watcher left (live-feed.ts).
        await eventually(
          'the JetStream consumer count to return to its baseline',
          async () => (await consumers(backend)).length === consumersBefore,
          { timeoutMs: 25_000 },
        );
        lingering = (await consumers(backend)).length - consumersBefore;
      }

      console.info(
        `[slow-clients ${kind}] published ${NOTIFICATIONS} × ${PAD.length} B = ${(publishedBytes / 1e6).toFixed(1)} MB; ` +
          `stalled stream closed (cause slow_consumer) ${Math.round(closedAfterMs)} ms after publishing began, after ` +
          `${stalledNotifications.length} notifications / ${(stalled.bytes / 1e6).toFixed(2)} MB reached it; ` +
          `burst reader got ${burstNotifications.length} (${bursty.closeReason ?? 'still open'}); ` +
          `server RSS ${(rssBefore / 1e6).toFixed(0)} → max ${(rssMax / 1e6).toFixed(0)} MB (growth ${(rssGrowth / 1e6).toFixed(1)} MB)` +
          (kind === 'jetstream' ? `; idle consumers left on NATS: ${lingering}` : ''),
      );
    } finally {
      await server.stop('SIGKILL');
    }
  }, 150_000);
});

function notifications(frames: readonly RawFrame[]): RawFrame[] {
  return frames.filter((frame) => frame.event === 'live-notification' && frame.data.startsWith('{"data":'));
}

function sequencesOf(frames: readonly RawFrame[]): number[] {
  return frames.map(sequenceOf);
}

function isConsecutive(sequences: readonly number[]): boolean {
  return sequences.every((sequence, index) => index === 0 || sequence === (sequences[index - 1] as number) + 1);
}

function payloadIndex(frame: RawFrame): number {
  return (JSON.parse(frame.data) as { data: { payload: { i: number } } }).data.payload.i;
}

function slowConsumerClosed(server: RunningServer, requestId: string | undefined): boolean {
  return server.logs.some(
    (line) =>
      line.attributes?.['event.name'] === 'stream.slow_consumer.closed' &&
      line.attributes.request_id === requestId &&
      line.attributes.cause === 'slow_consumer' &&
      line.attributes.reason === 'end_of_stream',
  );
}

/** POSTs `count` notifications (32 KiB payload each) on a few keep-alive connections; resolves with the 200s. */
async function publish(server: RunningServer, count: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: POSTERS });
  const origin = new URL(server.url);
  let next = 0;
  let acked = 0;
  const post = (i: number): Promise<number> => {
    const body = JSON.stringify({ ...MARS_EXAMPLE, payload: { i, pad: PAD } });
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent,
          host: origin.hostname,
          port: origin.port,
          path: '/api/v1/notification',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
  await Promise.all(
    Array.from({ length: POSTERS }, async () => {
      while (next < count) if ((await post(next++)) === 200) acked++;
    }),
  );
  agent.destroy();
  return acked;
}

/** Consumers on every stream of the suite's NATS server, with their pending pull requests. */
async function consumers(backend: BackendUnderTest): Promise<{ name: string; waiting: number }[]> {
  const nc = await connect({ servers: backend.natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const out: { name: string; waiting: number }[] = [];
    for await (const stream of jsm.streams.list()) {
      for await (const consumer of jsm.consumers.list(stream.config.name)) {
        out.push({ name: consumer.name, waiting: consumer.num_waiting });
      }
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** Whether the server still has an established TCP connection from the client's `clientPort` (/proc/net/tcp). */
async function isEstablished(serverPort: number, clientPort: number): Promise<boolean> {
  const table = await readFile('/proc/net/tcp', 'utf8');
  const hex = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');
  return table.split('\n').some((line) => {
    const fields = line.trim().split(/\s+/);
    return fields[1]?.endsWith(`:${hex(serverPort)}`) && fields[2]?.endsWith(`:${hex(clientPort)}`) && fields[3] === '01';
  });
}
