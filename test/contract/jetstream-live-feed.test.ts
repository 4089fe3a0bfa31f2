import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { pino, type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationBackend, StoredNotification } from '../../src/backend/backend.js';
import { JetStreamBackend } from '../../src/backend/jetstream/jetstream-backend.js';
import type { JetStreamConfig } from '../../src/config/model.js';
import { encodeTopic } from '../../src/topic/percent-codec.js';
import { streamNameOf } from '../../src/topic/stream-name.js';
import { TopicPattern } from '../../src/topic/topic-pattern.js';
import { eventually } from '../support/eventually.js';
import { SHARED_NATS_URL, requireSharedNats, startNatsServer, type NatsServerProcess } from '../support/nats-server.js';
import { collectingSink, uniqueBaseGenerator } from './backend-contract.js';
import { jetStreamTestSettings } from '../support/jetstream-settings.js';

/**
 * Live delivery on JetStream under the default one-message-per-topic retention (D39,
 * docs/backends.md "Live delivery on JetStream"): a burst of concurrent notifications on one topic
 * is stored back to back, each removing the one before, faster than any feed's consumer can read
 * them; every one must still reach every watcher, in sequence order, through the announcements.
 */

const BURST = 100;
const DELIVERY_TIMEOUT_MS = 15_000;

const settings = (natsUrl: string, liveGapWaitMs = 2000): JetStreamConfig =>
  jetStreamTestSettings(natsUrl, { live_gap_wait_ms: liveGapWaitMs });

const nextBase = uniqueBaseGenerator('lf');
const usedBases = new Set<string>();
const created: NotificationBackend[] = [];

/** A backend owning `base` with the default retention: the latest notification per topic only. */
async function backendFor(
  natsUrl: string,
  base: string,
  logger: Logger = pino({ level: 'silent' }),
  liveGapWaitMs?: number,
): Promise<JetStreamBackend> {
  usedBases.add(base);
  const backend = await JetStreamBackend.connect({
    settings: settings(natsUrl, liveGapWaitMs),
    configured: [{ eventType: base, base, bareTopics: false, storagePolicy: undefined }],
    logger,
  });
  created.push(backend);
  return backend;
}

async function storedMessages(natsUrl: string, base: string): Promise<{ messages: number; maxPerSubject: number }> {
  const nc = await connect({ servers: natsUrl });
  try {
    const info = await (await jetstreamManager(nc)).streams.info(streamNameOf(base));
    return { messages: info.state.messages, maxPerSubject: info.config.max_msgs_per_subject };
  } finally {
    await nc.close();
  }
}

function burst(backend: NotificationBackend, topic: string, label: string): Promise<number[]> {
  return Promise.all(
    Array.from({ length: BURST }, (_, i) => backend.publish({ topic, payload: JSON.stringify({ label, i }) }).then((r) => r.sequence)),
  );
}

const sequences = (messages: readonly StoredNotification[]) => messages.map((m) => m.sequence);

/** `live_gap_wait_ms` of the feed that gives a missing sequence up quickly, and of the one that waits. */
const SHORT_GAP_WAIT_MS = 200;
const LONG_GAP_WAIT_MS = 60_000;

/** Purges the base's stream below `sequence`, so that (past its end) the next message gets that sequence. */
async function purgeUpTo(natsUrl: string, base: string, sequence: number): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    await (await jetstreamManager(nc)).streams.purge(streamNameOf(base), { seq: sequence });
  } finally {
    await nc.close();
  }
}

afterEach(async () => {
  for (const backend of created.splice(0)) await backend.shutdown().catch(() => undefined);
});

describe('JetStream live feeds under one-message-per-topic retention (D39)', () => {
  beforeAll(() => requireSharedNats());

  afterAll(async () => {
    const nc = await connect({ servers: SHARED_NATS_URL });
    try {
      const jsm = await jetstreamManager(nc);
      for (const base of usedBases) await jsm.streams.delete(streamNameOf(base)).catch(() => undefined);
    } finally {
      await nc.close();
    }
  });

  it('delivers every notification of concurrent bursts on one topic, from two processes, to watchers of both, in order', async () => {
    const base = nextBase();
    const first = await backendFor(SHARED_NATS_URL, base);
    const second = await backendFor(SHARED_NATS_URL, base);
    const pattern = new TopicPattern([base, '*']);
    const onFirst = collectingSink();
    const onSecond = collectingSink();
    await first.subscribe(pattern, onFirst.sink);
    await second.subscribe(pattern, onSecond.sink);

    const topic = encodeTopic([base, 'a']);
    const published = (await Promise.all([burst(first, topic, 'first'), burst(second, topic, 'second')])).flat().sort((a, b) => a - b);

    expect(await storedMessages(SHARED_NATS_URL, base)).toEqual({ messages: 1, maxPerSubject: 1 });
    for (const sink of [onFirst, onSecond]) {
      expect(sequences(await sink.waitFor(published.length, DELIVERY_TIMEOUT_MS))).toEqual(published);
    }
    // Each notification reached both with the same content, whichever source delivered it.
    expect(onSecond.received.map((m) => [m.topic, m.payload])).toEqual(onFirst.received.map((m) => [m.topic, m.payload]));
    const stats = [await first.stats(), await second.stats()];
    expect(stats.map((s) => s.live_gap_sequences_skipped)).toEqual([0, 0]);
  });

  it('holds a notification for notification_backend.jetstream.live_gap_wait_ms while sequences below it are missing everywhere (D44)', async () => {
    const base = nextBase();
    const short = await backendFor(SHARED_NATS_URL, base, undefined, SHORT_GAP_WAIT_MS);
    const long = await backendFor(SHARED_NATS_URL, base, undefined, LONG_GAP_WAIT_MS);
    const pattern = new TopicPattern([base, '*']);
    const onShort = collectingSink();
    const onLong = collectingSink();
    await short.subscribe(pattern, onShort.sink);
    await long.subscribe(pattern, onLong.sink);
    const topic = encodeTopic([base, 'a']);
    const { sequence: first } = await short.publish({ topic, payload: '"first"' });
    for (const sink of [onShort, onLong]) expect(sequences(await sink.waitFor(1, DELIVERY_TIMEOUT_MS))).toEqual([first]);

    // A purge up to a sequence past the end makes the stream number its next message there: the
    // three sequences in between exist nowhere, in the stream or in any announcement.
    await purgeUpTo(SHARED_NATS_URL, base, first + 4);
    const { sequence: second } = await short.publish({ topic, payload: '"after the gap"' });
    expect(second).toBe(first + 4);

    expect(sequences(await onShort.waitFor(2, DELIVERY_TIMEOUT_MS))).toEqual([first, second]);
    expect((await short.stats()).live_gap_sequences_skipped).toBe(3);
    // Twice the default wait later, the feed configured with the long one still holds it.
    await new Promise((resolve) => setTimeout(resolve, 2 * 2000));
    expect(sequences(onLong.received)).toEqual([first]);
    expect((await long.stats()).live_gap_sequences_skipped).toBe(0);
  });

  it('hands a watcher registering during a burst the split of D10: history up to H, everything above live', async () => {
    const base = nextBase();
    const backend = await backendFor(SHARED_NATS_URL, base);
    const pattern = new TopicPattern([base, '*']);
    const early = collectingSink();
    await backend.subscribe(pattern, early.sink);
    const topic = encodeTopic([base, 'a']);
    const publishing = burst(backend, topic, 'burst');
    // Registers while the burst is being stored and delivered.
    await early.waitFor(1, DELIVERY_TIMEOUT_MS);
    const late = collectingSink();
    const { historyBound } = await backend.subscribe(pattern, late.sink);
    const published = (await publishing).sort((a, b) => a - b);
    const live = published.filter((sequence) => sequence > historyBound);
    expect(sequences(await late.waitFor(live.length, DELIVERY_TIMEOUT_MS))).toEqual(live);
    expect(sequences(await early.waitFor(published.length, DELIVERY_TIMEOUT_MS))).toEqual(published);
  });
});

describe('JetStream live feeds on a NATS account that may not use announcements', () => {
  let nats: NatsServerProcess;
  let configDir: string;

  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'aviso-nats-config-'));
    const configFile = join(configDir, 'nats.conf');
    // Clients that send no credentials are this user, denied the announcement subjects.
    writeFileSync(
      configFile,
      [
        'accounts: {',
        '  APP: {',
        '    jetstream: enabled',
        '    users: [{ user: aviso, password: unused, permissions: { publish: { deny: ["%AVISO_LIVE.>"] }, subscribe: { deny: ["%AVISO_LIVE.>"] } } }]',
        '  }',
        '}',
        'no_auth_user: aviso',
        '',
      ].join('\n'),
    );
    nats = await startNatsServer({ extraArgs: ['-c', configFile] });
  });

  afterAll(async () => {
    await nats?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  it("answers every notify, warns once, and still delivers this process's own notifications live", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n'))
            if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
    );
    const base = nextBase();
    const backend = await backendFor(nats.url, base, logger);
    const sink = collectingSink();
    await backend.subscribe(new TopicPattern([base, '*']), sink.sink);
    const topic = encodeTopic([base, 'a']);
    const published = (await burst(backend, topic, 'first')).sort((a, b) => a - b);
    expect(sequences(await sink.waitFor(BURST, DELIVERY_TIMEOUT_MS))).toEqual(published);

    // The server's refusals arrive after the publishes; a second burst brings no second warning.
    const events = () => lines.map((line) => line.event_name);
    const refusals = () => events().filter((name) => name === 'backend.jetstream.live.announce.denied').length;
    await eventually('the refused announcement warning', () => refusals() > 0, { timeoutMs: DELIVERY_TIMEOUT_MS });
    const more = (await burst(backend, topic, 'second')).sort((a, b) => a - b);
    expect(sequences(await sink.waitFor(2 * BURST, DELIVERY_TIMEOUT_MS)).slice(BURST)).toEqual(more);
    expect(refusals()).toBe(1);
    expect(events().filter((name) => name === 'backend.jetstream.live.announcements.refused')).toHaveLength(1);
    // Nothing else was logged as a connection error for them.
    expect(events()).not.toContain('backend.jetstream.error');
    expect(lines.find((line) => line.event_name === 'backend.jetstream.live.announce.denied')).toMatchObject({ level: 40 });
  });
});
