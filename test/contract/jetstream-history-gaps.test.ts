import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Batch, HistoryLoss, StartCursor } from '../../src/backend/backend.js';
import { JetStreamBackend } from '../../src/backend/jetstream/jetstream-backend.js';
import type { StoragePolicyConfig } from '../../src/config/model.js';
import { encodeTopic } from '../../src/topic/percent-codec.js';
import { streamNameOf } from '../../src/topic/stream-name.js';
import { TopicPattern } from '../../src/topic/topic-pattern.js';
import { SHARED_NATS_URL, requireSharedNats } from '../support/nats-server.js';
import { uniqueBaseGenerator } from './backend-contract.js';
import { jetStreamTestSettings } from '../support/jetstream-settings.js';

/**
 * What a JetStream replay says of history it cannot read (D42, docs/backends.md "History gaps on
 * JetStream"): a notification whose topic's predecessor (stored with it, checked by JetStream) lies
 * in the range and was not read lost it; deletes and wipes are in the history ledger; the stream's
 * head trimmed by its limits is said without topics.
 */

const settings = jetStreamTestSettings(SHARED_NATS_URL);

const nextBase = uniqueBaseGenerator('hg');
const usedBases = new Set<string>();
const created: JetStreamBackend[] = [];
const FROM_START: StartCursor = { kind: 'sequence', sequence: 0 };

async function backendFor(base: string, storagePolicy?: StoragePolicyConfig): Promise<JetStreamBackend> {
  usedBases.add(base);
  const backend = await JetStreamBackend.connect({
    settings,
    configured: [{ eventType: base, base, bareTopics: false, storagePolicy }],
    logger: pino({ level: 'silent' }),
  });
  created.push(backend);
  return backend;
}

async function publish(backend: JetStreamBackend, base: string, ...topics: string[]): Promise<number[]> {
  const sequences: number[] = [];
  for (const topic of topics) sequences.push((await backend.publish({ topic: encodeTopic([base, topic]), payload: 'null' })).sequence);
  return sequences;
}

async function replay(
  backend: JetStreamBackend,
  pattern: TopicPattern,
  start: StartCursor = FROM_START,
  limit = 1000,
): Promise<{ sequences: number[]; losses: HistoryLoss[] }> {
  const upperBound = await backend.captureHistoryBound(pattern);
  const cursor = await backend.openReplay({ pattern, start, upperBound });
  const sequences: number[] = [];
  const losses: HistoryLoss[] = [];
  try {
    for (let batch: Batch | undefined; !batch?.exhausted;) {
      batch = await cursor.next(limit);
      sequences.push(...batch.messages.map((m) => m.sequence));
      losses.push(...(batch.losses ?? []));
    }
  } finally {
    cursor.close();
  }
  return { sequences, losses };
}

const all = (base: string) => new TopicPattern([base, '*']);
const only = (base: string, topic: string) => new TopicPattern([base, topic]);

afterEach(async () => {
  for (const backend of created.splice(0)) await backend.shutdown().catch(() => undefined);
});

afterAll(async () => {
  const nc = await connect({ servers: SHARED_NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    for (const base of usedBases) await jsm.streams.delete(streamNameOf(base)).catch(() => undefined);
  } finally {
    await nc.close();
  }
});

describe('history gaps on JetStream (D42)', () => {
  beforeAll(() => requireSharedNats());

  it('a replay that lost nothing gets no loss', async () => {
    const base = nextBase();
    const backend = await backendFor(base, { allow_duplicates: true });
    await publish(backend, base, 'a', 'b', 'a');
    expect(await replay(backend, all(base))).toEqual({ sequences: [1, 2, 3], losses: [] });
  });

  it('one notification per topic: a superseded predecessor in the range is a loss of that topic only', async () => {
    const base = nextBase();
    const backend = await backendFor(base);
    await publish(backend, base, 'a', 'a', 'b', 'a');
    expect(await replay(backend, only(base, 'a'))).toEqual({ sequences: [4], losses: [{ first: 1, last: 2 }] });
    expect(await replay(backend, only(base, 'b'))).toEqual({ sequences: [3], losses: [] });
    // A start after the predecessor: nothing of the range was lost.
    expect(await replay(backend, only(base, 'a'), { kind: 'sequence', sequence: 3 })).toEqual({ sequences: [4], losses: [] });
  });

  it('knows the predecessor whichever process stored either, and however they raced', async () => {
    const base = nextBase();
    const first = await backendFor(base);
    const second = await backendFor(base);
    const topic = encodeTopic([base, 'a']);
    const stored = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? first : second).publish({ topic, payload: String(i) }).then((r) => r.sequence)),
    );
    const last = Math.max(...stored);
    expect(await replay(first, all(base))).toEqual({ sequences: [last], losses: [{ first: 1, last: last - 1 }] });
    // Every stored predecessor is the sequence just before: 20 publishes, 20 sequences, one chain.
    expect([...stored].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('an admin delete is recorded: the newest of a topic, which no later notification names', async () => {
    const base = nextBase();
    const backend = await backendFor(base, { allow_duplicates: true });
    await publish(backend, base, 'a', 'b', 'a');
    expect(await backend.deleteMessage(base, 3)).toBe('deleted');
    expect(await replay(backend, only(base, 'a'))).toEqual({ sequences: [1], losses: [{ first: 3, last: 3, count: 1 }] });
    expect(await replay(backend, only(base, 'b'))).toEqual({ sequences: [2], losses: [] });
  });

  it('a deleted notification that had superseded another says the range, its count unknown', async () => {
    const base = nextBase();
    const backend = await backendFor(base);
    await publish(backend, base, 'a', 'a');
    expect(await backend.deleteMessage(base, 2)).toBe('deleted');
    expect(await replay(backend, only(base, 'a'))).toEqual({ sequences: [], losses: [{ first: 1, last: 2 }] });
  });

  it('a wipe is recorded: the range it emptied is said, topics unknown, and the numbering goes on', async () => {
    const base = nextBase();
    const backend = await backendFor(base);
    await publish(backend, base, 'a', 'b');
    expect(await backend.wipeStream(base)).toBe('wiped');
    await publish(backend, base, 'a');
    expect(await replay(backend, only(base, 'b'))).toEqual({ sequences: [], losses: [{ first: 1, last: 2, topicsUnknown: true }] });
    expect(await replay(backend, only(base, 'a'), { kind: 'sequence', sequence: 3 })).toEqual({ sequences: [3], losses: [] });
  });

  it('retention by count trims the head: a range reaching below the first sequence is told so, topics unknown', async () => {
    const base = nextBase();
    const backend = await backendFor(base, { allow_duplicates: true, max_messages: 2 });
    await publish(backend, base, 'a', 'b', 'c');
    expect(await replay(backend, only(base, 'b'))).toEqual({ sequences: [2], losses: [{ first: 1, last: 1, topicsUnknown: true }] });
    expect(await replay(backend, all(base), { kind: 'sequence', sequence: 2 })).toEqual({ sequences: [2, 3], losses: [] });
  });

  // On a memory stream with gaps: nats-server 2.9 crashed when a consumer asked it for a start time
  // there (the replay now searches the time by sequence, date-start.ts); this test took it down.
  it('a date start counts the predecessors stored after the date', async () => {
    const base = nextBase();
    const backend = await backendFor(base);
    await publish(backend, base, 'b');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const since = BigInt(Date.now()) * 1_000_000n;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await publish(backend, base, 'a', 'a');
    const { sequences, losses } = await replay(backend, all(base), { kind: 'date', atNs: since });
    expect(sequences).toEqual([3]);
    expect(losses).toHaveLength(1);
    expect(losses[0]?.last).toBe(2);
    // b (stored before the date) is held and was not read: not a loss of the range.
    expect(await replay(backend, only(base, 'b'), { kind: 'date', atNs: since })).toEqual({ sequences: [], losses: [] });
  });
});

describe('history gaps on JetStream, property: a loss exactly when something of the pattern was lost', () => {
  beforeAll(() => requireSharedNats());

  type Step = { readonly kind: 'publish'; readonly topic: string } | { readonly kind: 'delete'; readonly pick: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom('a', 'b', 'c').map((topic) => ({ kind: 'publish' as const, topic })) },
    { weight: 1, arbitrary: fc.nat(20).map((pick) => ({ kind: 'delete' as const, pick })) },
  );

  it('holds over random publishes, supersessions, deletes and replays', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 16 }),
        fc.boolean(),
        fc.constantFrom('*', 'a', 'b'),
        fc.integer({ min: 0, max: 18 }),
        fc.integer({ min: 1, max: 4 }),
        async (steps, oneByTopic, patternTopic, start, limit) => {
          const base = nextBase();
          const backend = await backendFor(base, oneByTopic ? undefined : { allow_duplicates: true });
          const topicOf = new Map<number, string>();
          for (const s of steps) {
            if (s.kind === 'publish') topicOf.set((await publish(backend, base, s.topic))[0] as number, s.topic);
            else await backend.deleteMessage(base, s.pick);
          }
          const pattern = patternTopic === '*' ? all(base) : only(base, patternTopic);
          const { sequences, losses } = await replay(backend, pattern, { kind: 'sequence', sequence: start }, limit);
          const held = new Set(sequences);
          const lost = [...topicOf]
            .filter(([sequence, topic]) => sequence >= start && (patternTopic === '*' || topic === patternTopic) && !held.has(sequence))
            .map(([sequence]) => sequence);
          // A loss exactly when something was lost; every lost sequence inside a loss; nothing of another scope.
          expect(losses.length > 0).toBe(lost.length > 0);
          for (const sequence of lost) expect(losses.some((loss) => loss.first <= sequence && sequence <= loss.last)).toBe(true);
          for (const loss of losses) {
            expect(loss.topicsUnknown).toBeUndefined();
            expect(loss.first).toBeGreaterThanOrEqual(Math.max(start, 1));
            expect(lost.some((sequence) => sequence === loss.last)).toBe(true);
          }
          await backend.shutdown();
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
