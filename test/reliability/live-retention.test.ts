import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { useBackend, type BackendUnderTest } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { postJson } from '../support/http.js';
import { findFreePort } from '../support/ports.js';
import { MARS_EXAMPLE, TEST_SCHEMAS } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { RawSseStream, metricSum, openStreams, sequenceOf, type RawFrame } from './support/raw-sse.js';

/**
 * Live delivery under JetStream's default one-message-per-topic retention (D39, docs/backends.md
 * "Live delivery on JetStream"): many watchers on one identifier and a steady notify rate on that
 * identifier, so every notification is superseded in the stream by the next one, often before a
 * process's shared live feed has read it. Every notification answered 200 must still reach every
 * watcher, in sequence order, with one server process and with two on one NATS (watchers spread
 * over both, notifications posted to each in turn).
 *
 * Before the live feed took notifications from the accepting processes' announcements as well as
 * from the stream, this shape lost 2–3 % of the notifications for every watcher.
 */

const WATCHERS = 1_000;
const NOTIFICATIONS = 1_000;
const NOTIFY_INTERVAL_MS = 20; // 50 notifications per second
/** Opening, 20 s of notifications and the fan-out of 1,000,000 frames on a shared 2-core machine. */
const TEST_TIMEOUT_MS = 300_000;

/** A watch on exactly the identifier every notification carries: one topic, one stored message. */
const WATCH = JSON.stringify({ event_type: 'mars', identifier: MARS_EXAMPLE.identifier });
const PAYLOAD_INDEX = /"payload":\{"i":(\d+)\}/;

/** The test schemas with JetStream's default retention for mars: the latest message per topic only. */
function oneMessagePerTopic(backend: BackendUnderTest, metricsPort: number): Record<string, unknown> {
  return backend.config({
    metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
    watch_endpoint: { max_buffered_events: NOTIFICATIONS * 2 },
    notification_schema: { ...TEST_SCHEMAS, mars: { ...TEST_SCHEMAS.mars, storage_policy: { allow_duplicates: false } } },
  });
}

/** One watch stream that checks its notifications as they come and keeps only their numbers. */
class Watcher {
  readonly payloads: number[] = [];
  readonly sequences: number[] = [];
  readonly stream: RawSseStream;

  constructor(origin: string) {
    this.stream = new RawSseStream(origin, '/api/v1/watch', WATCH, { keepFrames: false, onFrame: (frame) => this.take(frame) });
  }

  get last(): number | undefined {
    return this.payloads.at(-1);
  }

  private take(frame: RawFrame): void {
    if (frame.event !== 'live-notification') return;
    const index = PAYLOAD_INDEX.exec(frame.data);
    if (!index) return; // the opening control frame
    this.payloads.push(Number(index[1]));
    this.sequences.push(sequenceOf(frame));
  }
}

/**
 * Posts notifications 0 … count − 1 at a steady rate, to the origins in turn, each at its own time
 * whether or not the previous one was answered: a producer's rate does not wait for the server, so
 * two notifications can arrive together while a process is busy fanning out the previous one.
 */
async function notifySteadily(origins: readonly string[], count: number): Promise<number[]> {
  const answers: Promise<number>[] = [];
  const startedAt = performance.now();
  for (let i = 0; i < count; i++) {
    const slot = startedAt + i * NOTIFY_INTERVAL_MS - performance.now();
    if (slot > 0) await new Promise((resolve) => setTimeout(resolve, slot));
    const origin = origins[i % origins.length] as string;
    answers.push(postJson(`${origin}/api/v1/notification`, { ...MARS_EXAMPLE, payload: { i } }).then((response) => response.status));
  }
  return Promise.all(answers);
}

async function storedMars(natsUrl: string): Promise<{ maxPerSubject: number; messages: number; lastSequence: number }> {
  const nc = await connect({ servers: natsUrl });
  try {
    const info = await (await jetstreamManager(nc)).streams.info('MARS');
    return { maxPerSubject: info.config.max_msgs_per_subject, messages: info.state.messages, lastSequence: info.state.last_seq };
  } finally {
    await nc.close();
  }
}

async function gapSequences(metricsPorts: readonly number[], outcome: string): Promise<number> {
  let sum = 0;
  for (const port of metricsPorts) {
    const exposition = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    sum += metricSum(exposition, 'aviso_jetstream_live_gap_sequences_total', { outcome });
  }
  return sum;
}

/**
 * Opens the watchers (spread over the servers), posts the notifications (to each server in turn),
 * waits for the last one everywhere and checks that every watcher got every notification in order.
 */
async function checkEveryWatcherGetsEverything(
  backend: BackendUnderTest,
  servers: readonly RunningServer[],
  metricsPorts: readonly number[],
  label: string,
): Promise<void> {
  const watchers: Watcher[] = [];
  const streams = await openStreams(WATCHERS, (index) => {
    const watcher = new Watcher((servers[index % servers.length] as RunningServer).url);
    watchers.push(watcher);
    return watcher.stream;
  });
  try {
    expect(streams.filter((stream) => stream.status !== 200)).toEqual([]);

    const postingStarted = performance.now();
    const statuses = await notifySteadily(
      servers.map((server) => server.url),
      NOTIFICATIONS,
    );
    const postedMs = performance.now() - postingStarted;
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    // The last stored notification is never superseded and live delivery is ordered: once a
    // watcher has it, it has everything it will ever get.
    const stored = await storedMars(backend.natsUrl);
    expect(stored).toMatchObject({ maxPerSubject: 1, messages: 1 });
    await eventually(
      'the last stored notification at every watcher',
      () => watchers.every((watcher) => watcher.sequences.at(-1) === stored.lastSequence || watcher.stream.hasEnded),
      { timeoutMs: 180_000, intervalMs: 250 },
    );
    const drainedMs = performance.now() - postingStarted - postedMs;

    const everyIndex = Array.from({ length: NOTIFICATIONS }, (_, i) => i);
    const reached = new Set(watchers.flatMap((watcher) => watcher.payloads));
    const reachedNobody = everyIndex.filter((i) => !reached.has(i));
    const incomplete = watchers.filter((watcher) => watcher.payloads.length !== NOTIFICATIONS);
    const ended = watchers.filter((watcher) => watcher.stream.hasEnded);
    const missedOn = servers.map((_, index) => {
      const watcher = watchers.find((w, i) => i % servers.length === index && w.payloads.length !== NOTIFICATIONS);
      const got = new Set(watcher?.payloads ?? everyIndex);
      return everyIndex.filter((i) => !got.has(i)).slice(0, 20);
    });
    const skipped = await Promise.all(metricsPorts.map((port) => gapSequences([port], 'skipped')));
    expect(
      { ended: ended.length, incomplete: incomplete.length, reachedNobody: reachedNobody.length },
      `reached no watcher: [${reachedNobody.slice(0, 50).join(', ')}]; missed by a watcher of each process: ` +
        `${JSON.stringify(missedOn)}; sequences skipped by each process's feed: ${JSON.stringify(skipped)}`,
    ).toEqual({ ended: 0, incomplete: 0, reachedNobody: 0 });

    // Every watcher saw the same notifications under the same sequences, ascending: the order in
    // which they were stored (which two notifications in flight together may swap).
    const reference = watchers[0] as Watcher;
    expect([...reference.payloads].sort((a, b) => a - b)).toEqual(everyIndex);
    expect(reference.sequences.at(-1)).toBe(stored.lastSequence);
    for (let i = 1; i < reference.sequences.length; i++) {
      expect(reference.sequences[i]).toBeGreaterThan(reference.sequences[i - 1] as number);
    }
    for (const watcher of watchers) {
      expect(watcher.sequences).toEqual(reference.sequences);
      expect(watcher.payloads).toEqual(reference.payloads);
    }

    const filled = await gapSequences(metricsPorts, 'filled');
    expect(skipped).toEqual(servers.map(() => 0));
    console.info(
      `[live-retention ${label}] ${WATCHERS} watchers × ${NOTIFICATIONS} notifications: all ${WATCHERS * NOTIFICATIONS} delivered in order; ` +
        `posting took ${Math.round(postedMs)} ms, the last one reached every watcher ${Math.round(drainedMs)} ms later; ` +
        `${filled} sequences (over all processes' feeds) came from announcements, superseded before their feed read them`,
    );
  } finally {
    for (const stream of streams) stream.destroy();
  }
}

describe('live delivery under one-message-per-topic retention (one process)', () => {
  const backend = useBackend('jetstream');

  it(
    'delivers every acknowledged notification to every one of 1,000 watchers on one identifier, in order',
    async () => {
      const metricsPort = await findFreePort();
      const server = await startServer({ config: oneMessagePerTopic(backend, metricsPort) });
      try {
        await checkEveryWatcherGetsEverything(backend, [server], [metricsPort], 'one process');
      } finally {
        await server.stop();
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe('live delivery under one-message-per-topic retention (two processes on one NATS)', () => {
  const backend = useBackend('jetstream');

  it(
    'delivers every notification posted to either process to every watcher on both, in order',
    async () => {
      const metricsPorts = [await findFreePort(), await findFreePort()];
      const servers: RunningServer[] = [];
      try {
        for (const port of metricsPorts) servers.push(await startServer({ config: oneMessagePerTopic(backend, port) }));
        await checkEveryWatcherGetsEverything(backend, servers, metricsPorts, 'two processes');
      } finally {
        for (const server of servers) await server.stop();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
