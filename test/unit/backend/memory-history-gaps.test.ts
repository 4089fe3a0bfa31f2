import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Batch, HistoryLoss, StartCursor } from '../../../src/backend/backend.js';
import { MemoryBackend, type MemoryBackendOptions } from '../../../src/backend/memory/memory-backend.js';
import type { SequenceJournal } from '../../../src/backend/memory/sequence-journal.js';
import { NOTIFICATION_OVERHEAD_BYTES } from '../../../src/notification/stored-bytes.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';
import { ManualClock } from '../../support/manual-clock.js';

/**
 * What the in-memory backend says of history it no longer holds (D42): every removal of a
 * notification (per-topic limit, byte budget, topic limit, admin delete, wipe) is recorded with
 * its topic, so a replay of a pattern learns exactly which of its topics' sequences are gone; a
 * previous process's history and forgotten records are said as ranges whose topics are unknown.
 */

const ALL = new TopicPattern(['mars', '*']);
const only = (topic: string) => new TopicPattern(['mars', topic]);
const FROM_START: StartCursor = { kind: 'sequence', sequence: 0 };

function memory(options: Partial<MemoryBackendOptions> = {}): MemoryBackend {
  return new MemoryBackend({ maxHistoryPerTopic: 100, maxTopics: 100, clock: new ManualClock(), ...options });
}

async function publish(backend: MemoryBackend, ...topics: string[]): Promise<number[]> {
  const sequences: number[] = [];
  for (const topic of topics) sequences.push((await backend.publish({ topic: `mars.${topic}`, payload: 'null' })).sequence);
  return sequences;
}

/** Everything a replay cursor reads with `limit` per batch: the messages and the losses, in order. */
async function replay(
  backend: MemoryBackend,
  pattern: TopicPattern,
  start: StartCursor = FROM_START,
  limit = 1000,
  upperBound = Number.MAX_SAFE_INTEGER,
): Promise<{ sequences: number[]; losses: HistoryLoss[] }> {
  const cursor = await backend.openReplay({ pattern, start, upperBound });
  const sequences: number[] = [];
  const losses: HistoryLoss[] = [];
  for (let batch: Batch | undefined; !batch?.exhausted;) {
    batch = await cursor.next(limit);
    sequences.push(...batch.messages.map((m) => m.sequence));
    losses.push(...(batch.losses ?? []));
  }
  cursor.close();
  return { sequences, losses };
}

describe('history losses of the in-memory backend', () => {
  it('a replay that lost nothing gets no loss', async () => {
    const backend = memory();
    await publish(backend, 'a', 'b', 'a');
    expect(await replay(backend, ALL)).toEqual({ sequences: [1, 2, 3], losses: [] });
  });

  it("names the per-topic limit's removals of the request's topics only, with their count", async () => {
    const backend = memory({ maxHistoryPerTopic: 1 });
    await publish(backend, 'a', 'b', 'a', 'a', 'b');
    expect(await replay(backend, only('a'))).toEqual({ sequences: [4], losses: [{ first: 1, last: 3, count: 2 }] });
    expect(await replay(backend, only('b'))).toEqual({ sequences: [5], losses: [{ first: 2, last: 2, count: 1 }] });
    expect(await replay(backend, ALL)).toEqual({ sequences: [4, 5], losses: [{ first: 1, last: 3, count: 3 }] });
  });

  it('a replay starting after the removals gets none', async () => {
    const backend = memory({ maxHistoryPerTopic: 1 });
    await publish(backend, 'a', 'a', 'a');
    expect(await replay(backend, ALL, { kind: 'sequence', sequence: 3 })).toEqual({ sequences: [3], losses: [] });
    expect(await replay(backend, ALL, { kind: 'sequence', sequence: 2 })).toEqual({
      sequences: [3],
      losses: [{ first: 2, last: 2, count: 1 }],
    });
  });

  it('separates runs that a held notification of the request divides', async () => {
    const backend = memory();
    const [s1, s2, s3, s4, s5] = await publish(backend, 'a', 'a', 'a', 'a', 'a');
    await backend.deleteMessage('mars', s2 as number);
    await backend.deleteMessage('mars', s4 as number);
    expect(await replay(backend, ALL)).toEqual({
      sequences: [s1, s3, s5],
      losses: [
        { first: 2, last: 2, count: 1 },
        { first: 4, last: 4, count: 1 },
      ],
    });
  });

  it('names the removals at the end of the range, after the last held notification', async () => {
    const backend = memory();
    await publish(backend, 'a', 'b', 'b');
    await backend.deleteMessage('mars', 2);
    await backend.deleteMessage('mars', 3);
    expect(await replay(backend, ALL)).toEqual({ sequences: [1], losses: [{ first: 2, last: 3, count: 2 }] });
  });

  it("keeps a loss within the replay's upper bound", async () => {
    const backend = memory();
    await publish(backend, 'a', 'a', 'a', 'a');
    await backend.deleteMessage('mars', 2);
    await backend.deleteMessage('mars', 4);
    expect(await replay(backend, ALL, FROM_START, 1000, 3)).toEqual({ sequences: [1, 3], losses: [{ first: 2, last: 2, count: 1 }] });
  });

  it('records the topics a wipe removed, and numbering and losses survive it', async () => {
    const backend = memory();
    await publish(backend, 'a', 'b');
    await backend.wipeStream('MARS');
    await publish(backend, 'a');
    expect(await replay(backend, only('a'))).toEqual({ sequences: [3], losses: [{ first: 1, last: 1, count: 1 }] });
    await backend.wipeAll();
    expect(await replay(backend, ALL)).toEqual({ sequences: [], losses: [{ first: 1, last: 3, count: 3 }] });
  });

  it('records a topic evicted by max_topics', async () => {
    const backend = memory({ maxTopics: 2 });
    await publish(backend, 'a', 'b', 'c');
    expect(await replay(backend, only('a'))).toEqual({ sequences: [], losses: [{ first: 1, last: 1, count: 1 }] });
    expect(await replay(backend, only('b'))).toEqual({ sequences: [2], losses: [] });
  });

  it('records what the byte budget evicted', async () => {
    const small = NOTIFICATION_OVERHEAD_BYTES + 'mars.a'.length + 'null'.length;
    const backend = memory({ maxTotalBytes: 2 * small });
    await publish(backend, 'a', 'b', 'a');
    expect(await replay(backend, ALL)).toEqual({ sequences: [2, 3], losses: [{ first: 1, last: 1, count: 1 }] });
  });

  it('a date start reports the removals stored at or after the date', async () => {
    const clock = new ManualClock();
    const backend = memory({ clock, maxHistoryPerTopic: 1 });
    await publish(backend, 'a');
    clock.advance(1000);
    const since = BigInt(clock.now()) * 1_000_000n;
    await publish(backend, 'a', 'a');
    expect(await replay(backend, ALL, { kind: 'date', atNs: since })).toEqual({
      sequences: [3],
      losses: [{ first: 2, last: 2, count: 1 }],
    });
  });

  it('batches of one page through the removals without saying any twice', async () => {
    const backend = memory({ maxHistoryPerTopic: 1 });
    await publish(backend, 'a', 'b', 'a', 'c', 'b', 'a', 'c');
    const whole = await replay(backend, ALL);
    expect(await replay(backend, ALL, FROM_START, 1)).toEqual(whole);
    expect(whole.losses.reduce((sum, loss) => sum + (loss.count ?? 0), 0)).toBe(4);
  });

  it("after a restart, the previous process's numbering goes on and its history is said lost, topics unknown", async () => {
    const clock = new ManualClock();
    clock.advance(5_000);
    const journal = fakeJournal({ MARS: 5 });
    const backend = memory({ clock, journal });
    expect(await publish(backend, 'a')).toEqual([6]);
    expect(journal.written).toEqual([['MARS', 6]]);
    expect(await replay(backend, ALL)).toEqual({ sequences: [6], losses: [{ first: 1, last: 5, topicsUnknown: true }] });
    expect(await replay(backend, ALL, { kind: 'sequence', sequence: 4 })).toEqual({
      sequences: [6],
      losses: [{ first: 4, last: 5, topicsUnknown: true }],
    });
    expect(await replay(backend, ALL, { kind: 'sequence', sequence: 6 })).toEqual({ sequences: [6], losses: [] });
    expect(await replay(backend, ALL, { kind: 'date', atNs: 1_000n * 1_000_000n })).toEqual({
      sequences: [6],
      losses: [{ first: 1, last: 5, topicsUnknown: true }],
    });
    const later = BigInt(clock.now() + 1) * 1_000_000n;
    expect((await replay(backend, ALL, { kind: 'date', atNs: later })).losses).toEqual([]);
    expect(await backend.captureHistoryBound(ALL)).toBe(6);
  });

  it("forgets the oldest removals past its record's bound, saying them as a range whose topics are unknown", async () => {
    // The smallest record: 10,000 removals.
    const backend = memory({ maxHistoryPerTopic: 1, maxTotalBytes: 1_000_000 });
    const topics = Array.from({ length: 12_001 }, (_, i) => (i % 2 === 0 ? 'a' : 'b'));
    await publish(backend, ...topics);
    const { sequences, losses } = await replay(backend, only('a'));
    expect(sequences).toEqual([12_001]);
    const [forgotten, ...exact] = losses;
    expect(forgotten).toMatchObject({ first: 1, topicsUnknown: true });
    const forgottenThrough = (forgotten as HistoryLoss).last;
    expect(forgottenThrough).toBeGreaterThan(1);
    // Every removal of `a` above the forgotten range is still counted exactly.
    const exactlyCounted = exact.reduce((sum, loss) => sum + (loss.count ?? 0), 0);
    const removedOfAAbove = topics.filter((topic, i) => topic === 'a' && i + 1 > forgottenThrough && i + 1 < 12_001).length;
    expect(exactlyCounted).toBe(removedOfAAbove);
  });
});

describe('history losses, property: a loss exactly when something of the pattern was lost', () => {
  type Step =
    { readonly kind: 'publish'; readonly topic: string } | { readonly kind: 'delete'; readonly pick: number } | { readonly kind: 'wipe' };

  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c', 'd').map((topic) => ({ kind: 'publish' as const, topic })) },
    { weight: 2, arbitrary: fc.nat(50).map((pick) => ({ kind: 'delete' as const, pick })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'wipe' as const }) },
  );

  it('holds over random publishes, removals and replays', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 40 }),
        fc.record({
          maxHistoryPerTopic: fc.integer({ min: 1, max: 3 }),
          maxTopics: fc.integer({ min: 1, max: 4 }),
          budgetIn: fc.integer({ min: 2, max: 12 }),
        }),
        fc.constantFrom('*', 'a', 'b'),
        fc.integer({ min: 0, max: 45 }),
        fc.integer({ min: 1, max: 5 }),
        async (steps, limits, patternTopic, start, limit) => {
          const small = NOTIFICATION_OVERHEAD_BYTES + 'mars.a'.length + 'null'.length;
          const backend = memory({
            maxHistoryPerTopic: limits.maxHistoryPerTopic,
            maxTopics: limits.maxTopics,
            maxTotalBytes: limits.budgetIn * small,
          });
          const topicOf = new Map<number, string>();
          for (const s of steps) {
            if (s.kind === 'publish') topicOf.set((await backend.publish({ topic: `mars.${s.topic}`, payload: 'null' })).sequence, s.topic);
            else if (s.kind === 'delete') await backend.deleteMessage('mars', s.pick);
            else await backend.wipeStream('mars');
          }
          const pattern = patternTopic === '*' ? ALL : only(patternTopic);
          const { sequences, losses } = await replay(backend, pattern, { kind: 'sequence', sequence: start }, limit);
          const held = new Set(sequences);
          const lost = [...topicOf]
            .filter(([sequence, topic]) => sequence >= start && (patternTopic === '*' || topic === patternTopic) && !held.has(sequence))
            .map(([sequence]) => sequence);
          // Exactly the lost ones: counted, in order, each loss between the held notifications around it.
          expect(losses.reduce((sum, loss) => sum + (loss.count ?? Number.NaN), 0)).toBe(lost.length);
          expect(losses.length === 0).toBe(lost.length === 0);
          for (const loss of losses) {
            const inside = lost.filter((sequence) => sequence >= loss.first && sequence <= loss.last);
            expect(inside.length).toBe(loss.count);
            expect(inside[0]).toBe(loss.first);
            expect(inside.at(-1)).toBe(loss.last);
            expect(sequences.some((sequence) => sequence > loss.first && sequence < loss.last)).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

function fakeJournal(restored: Record<string, number>): SequenceJournal & { written: [string, number][] } {
  const written: [string, number][] = [];
  return {
    restored: new Map(Object.entries(restored)),
    afterMachineRestart: false,
    issued: (stream, sequence) => void written.push([stream, sequence]),
    close: () => undefined,
    written,
  };
}
