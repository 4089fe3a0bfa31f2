import { describe, expect, it } from 'vitest';
import type { LiveSink, StoredNotification } from '../../../src/backend/backend.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';
import { ManualClock } from '../../support/manual-clock.js';

const pattern = (display: string) => new TopicPattern(display.split('.'));
const everything = (base: string, tokens = 1) => new TopicPattern([base, ...Array<string>(tokens).fill('*')]);

function backend(options: Partial<{ maxHistoryPerTopic: number; maxTopics: number }> = {}, clock = new ManualClock()) {
  const evicted: string[] = [];
  const memory = new MemoryBackend({
    maxHistoryPerTopic: options.maxHistoryPerTopic ?? 100,
    maxTopics: options.maxTopics ?? 100,
    clock,
    onTopicEvicted: (topic) => evicted.push(topic),
  });
  return { memory, clock, evicted };
}

async function fetchAll(memory: MemoryBackend, p: TopicPattern, upperBound = Number.MAX_SAFE_INTEGER) {
  const batch = await memory.fetchBatch({ pattern: p, start: { kind: 'sequence', sequence: 0 }, limit: 1000, upperBound });
  return batch.messages.map((m) => m.sequence);
}

describe('MemoryBackend.publish', () => {
  it('numbers each stream base on its own, densely from 1, across its topics (D28)', async () => {
    const { memory } = backend();
    expect(await memory.publish({ topic: 'mars.a', payload: 'null' })).toEqual({ sequence: 1 });
    expect(await memory.publish({ topic: 'diss.b', payload: 'null' })).toEqual({ sequence: 1 });
    expect(await memory.publish({ topic: 'mars.b', payload: 'null' })).toEqual({ sequence: 2 });
    expect(await memory.publish({ topic: 'diss.b', payload: 'null' })).toEqual({ sequence: 2 });
    expect(await memory.publish({ topic: 'mars.a', payload: 'null' })).toEqual({ sequence: 3 });
  });

  it('numbers a bare-base topic with its base, and bases differing only in case as one stream', async () => {
    const { memory } = backend();
    expect(await memory.publish({ topic: 'mars', payload: 'null' })).toEqual({ sequence: 1 });
    expect(await memory.publish({ topic: 'mars.a', payload: 'null' })).toEqual({ sequence: 2 });
    // JetStream stores both in stream MARS, so they share its numbering there too.
    expect(await memory.publish({ topic: 'Mars.a', payload: 'null' })).toEqual({ sequence: 3 });
    expect(await memory.publish({ topic: 'mars%2Ex.a', payload: 'null' })).toEqual({ sequence: 1 });
  });

  it('keeps payload, metadata and storage time', async () => {
    const { memory, clock } = backend();
    await memory.publish({ topic: 'mars.a', payload: '{"x":1}', metadata: { aviso_identifier: '{"k":"a"}' } });
    const [stored] = (
      await memory.fetchBatch({ pattern: pattern('mars.a'), start: { kind: 'sequence', sequence: 0 }, limit: 10, upperBound: 10 })
    ).messages;
    expect(stored).toEqual({
      sequence: 1,
      topic: 'mars.a',
      payload: '{"x":1}',
      timestampNs: BigInt(clock.now()) * 1_000_000n,
      metadata: { aviso_identifier: '{"k":"a"}' },
    });
  });

  it('keeps only max_history_per_topic notifications per exact topic', async () => {
    const { memory } = backend({ maxHistoryPerTopic: 2 });
    for (let i = 0; i < 4; i++) await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    expect(await fetchAll(memory, everything('mars'))).toEqual([3, 4, 5]);
  });

  it('evicts the topic whose newest notification is oldest when max_topics is reached', async () => {
    const { memory, clock, evicted } = backend({ maxTopics: 2 });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    clock.advance(1000);
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    clock.advance(1000);
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    clock.advance(1000);
    await memory.publish({ topic: 'mars.c', payload: 'null' });
    expect(evicted).toEqual(['mars.b']);
    expect(await fetchAll(memory, everything('mars'))).toEqual([1, 3, 4]);
  });

  it("counts max_topics over all bases and evicts from the evicted topic's own base only", async () => {
    const { memory, clock, evicted } = backend({ maxTopics: 2 });
    await memory.publish({ topic: 'mars.a', payload: 'null' }); // mars@1
    clock.advance(1000);
    await memory.publish({ topic: 'diss.a', payload: 'null' }); // diss@1
    clock.advance(1000);
    await memory.publish({ topic: 'diss.b', payload: 'null' }); // diss@2, evicts mars.a
    expect(evicted).toEqual(['mars.a']);
    expect(await fetchAll(memory, everything('mars'))).toEqual([]);
    expect(await fetchAll(memory, everything('diss'))).toEqual([1, 2]);
    // The emptied base keeps its numbering and its H.
    expect(await memory.captureHistoryBound(everything('mars'))).toBe(1);
    expect(await memory.publish({ topic: 'mars.b', payload: 'null' })).toEqual({ sequence: 2 });
    expect(evicted).toEqual(['mars.a', 'diss.a']);
    expect(await fetchAll(memory, everything('diss'))).toEqual([2]);
  });

  it('never lets storage time go backwards, so date cursors stay exact', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const { memory } = backend({}, clock);
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    clock.advance(-5000);
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    const batch = await memory.fetchBatch({
      pattern: pattern('mars.a'),
      start: { kind: 'sequence', sequence: 0 },
      limit: 10,
      upperBound: 10,
    });
    expect(batch.messages[1]?.timestampNs).toBe(batch.messages[0]?.timestampNs);
  });
});

describe('MemoryBackend.fetchBatch', () => {
  it('returns matching notifications in ascending sequence within the cursor and bound', async () => {
    const { memory } = backend();
    // mars@1 a, diss@1, mars@2 b, mars@3 a.x, mars@4 c, mars@5 d
    for (const topic of ['mars.a', 'diss.a', 'mars.b', 'mars.a.x', 'mars.c', 'mars.d']) await memory.publish({ topic, payload: 'null' });
    const batch = await memory.fetchBatch({
      pattern: everything('mars'),
      start: { kind: 'sequence', sequence: 2 },
      limit: 10,
      upperBound: 4,
    });
    expect(batch.messages.map((m) => m.sequence)).toEqual([2, 4]);
    expect(batch.exhausted).toBe(true);
    expect(batch.nextSequence).toBe(5);
  });

  it('pages with limit and continues from nextSequence', async () => {
    const { memory } = backend();
    for (let i = 0; i < 5; i++) await memory.publish({ topic: `mars.${i}`, payload: 'null' });
    const first = await memory.fetchBatch({
      pattern: everything('mars'),
      start: { kind: 'sequence', sequence: 0 },
      limit: 2,
      upperBound: 5,
    });
    expect(first.messages.map((m) => m.sequence)).toEqual([1, 2]);
    expect(first.exhausted).toBe(false);
    const second = await memory.fetchBatch({
      pattern: everything('mars'),
      start: { kind: 'sequence', sequence: first.nextSequence },
      limit: 2,
      upperBound: 5,
    });
    expect(second.messages.map((m) => m.sequence)).toEqual([3, 4]);
    const third = await memory.fetchBatch({
      pattern: everything('mars'),
      start: { kind: 'sequence', sequence: second.nextSequence },
      limit: 2,
      upperBound: 5,
    });
    expect(third.messages.map((m) => m.sequence)).toEqual([5]);
    expect(third.exhausted).toBe(true);
  });

  it('selects by storage time with an inclusive date cursor', async () => {
    const { memory, clock } = backend();
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    clock.advance(1500);
    const cutoff = BigInt(clock.now()) * 1_000_000n;
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    clock.advance(1);
    await memory.publish({ topic: 'mars.c', payload: 'null' });
    const batch = await memory.fetchBatch({ pattern: everything('mars'), start: { kind: 'date', atNs: cutoff }, limit: 10, upperBound: 3 });
    expect(batch.messages.map((m) => m.sequence)).toEqual([2, 3]);
  });

  it("reads only the pattern's own base: another base's equal sequences never leak in", async () => {
    const { memory } = backend();
    for (const topic of ['diss.a', 'diss.b', 'mars.a', 'diss.c']) await memory.publish({ topic, payload: 'null' });
    const batch = await memory.fetchBatch({
      pattern: everything('mars'),
      start: { kind: 'sequence', sequence: 0 },
      limit: 10,
      upperBound: 3,
    });
    expect(batch.messages.map((m) => [m.topic, m.sequence])).toEqual([['mars.a', 1]]);
    const diss = await memory.fetchBatch({
      pattern: everything('diss'),
      start: { kind: 'sequence', sequence: 2 },
      limit: 10,
      upperBound: 3,
    });
    expect(diss.messages.map((m) => [m.topic, m.sequence])).toEqual([
      ['diss.b', 2],
      ['diss.c', 3],
    ]);
  });

  it('returns an empty exhausted batch when nothing was stored', async () => {
    const { memory } = backend();
    const batch = await memory.fetchBatch({
      pattern: everything('mars'),
      start: { kind: 'sequence', sequence: 0 },
      limit: 10,
      upperBound: 0,
    });
    expect(batch).toEqual({ messages: [], nextSequence: 1, exhausted: true });
  });

  it('stays correct after many removals compact the log', async () => {
    const { memory } = backend({ maxHistoryPerTopic: 1 });
    for (let i = 0; i < 5000; i++) await memory.publish({ topic: `mars.${i % 3}`, payload: 'null' });
    expect(await fetchAll(memory, everything('mars'))).toEqual([4998, 4999, 5000]);
    const batch = await memory.fetchBatch({
      pattern: everything('mars'),
      start: { kind: 'sequence', sequence: 4999 },
      limit: 10,
      upperBound: 5000,
    });
    expect(batch.messages.map((m) => m.sequence)).toEqual([4999, 5000]);
  });
});

describe('MemoryBackend live subscriptions', () => {
  class Collector implements LiveSink {
    readonly received: StoredNotification[] = [];
    ended = false;
    deliver(n: StoredNotification) {
      this.received.push(n);
    }
    end() {
      this.ended = true;
    }
  }

  it("captures H as the last sequence of the pattern's base and delivers only later matching notifications", async () => {
    const { memory } = backend();
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'diss.a', payload: 'null' });
    await memory.publish({ topic: 'diss.b', payload: 'null' });
    const sink = new Collector();
    const subscription = await memory.subscribe(everything('mars'), sink);
    expect(subscription.historyBound).toBe(1);
    expect(await memory.captureHistoryBound(everything('diss'))).toBe(2);
    expect(await memory.captureHistoryBound(everything('never'))).toBe(0);
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    await memory.publish({ topic: 'diss.b', payload: 'null' });
    await memory.publish({ topic: 'mars.b.c', payload: 'null' });
    expect(sink.received.map((m) => [m.topic, m.sequence])).toEqual([['mars.b', 2]]);
  });

  it('stops delivering after close', async () => {
    const { memory } = backend();
    const sink = new Collector();
    const subscription = await memory.subscribe(everything('mars'), sink);
    subscription.close();
    subscription.close();
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    expect(sink.received).toEqual([]);
    expect((await memory.stats()).live_subscriptions).toBe(0);
  });

  it('gives a watcher subscribed while a notification is delivered H = that sequence, and that notification only from history (D10)', async () => {
    const { memory } = backend();
    const late = new Collector();
    let bound: number | undefined;
    const first: LiveSink = {
      deliver: () => {
        if (bound !== undefined) return;
        bound = 0;
        // Registration and H happen in subscribe's synchronous part, inside this delivery.
        void memory.subscribe(pattern('mars.a'), late).then((subscription) => (bound = subscription.historyBound));
      },
      end: () => undefined,
    };
    await memory.subscribe(everything('mars'), first);
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    expect(bound).toBe(1);
    expect(await fetchAll(memory, pattern('mars.a'), bound)).toEqual([1]);
    expect(late.received.map((m) => m.sequence)).toEqual([2]);
  });

  it('ends every subscription on shutdown', async () => {
    const { memory } = backend();
    const sink = new Collector();
    await memory.subscribe(everything('mars'), sink);
    await memory.shutdown();
    expect(sink.ended).toBe(true);
  });
});

describe('MemoryBackend admin operations', () => {
  it('deletes one notification of a stream, case-insensitively', async () => {
    const { memory } = backend();
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    expect(await memory.deleteMessage('MARS', 1)).toBe('deleted');
    expect(await fetchAll(memory, everything('mars'))).toEqual([2]);
    expect(await memory.deleteMessage('mars', 1)).toBe('not_found');
  });

  it("deletes by the base's own sequence: the same number in another base is another notification", async () => {
    const { memory } = backend();
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'diss.a', payload: 'null' });
    expect(await memory.deleteMessage('diss', 1)).toBe('deleted');
    expect(await fetchAll(memory, everything('mars'))).toEqual([1]);
    expect(await fetchAll(memory, everything('diss'))).toEqual([]);
    expect(await memory.deleteMessage('mar', 1)).toBe('not_found');
    expect(await memory.deleteMessage('nope', 1)).toBe('not_found');
  });

  it('wipes one stream, including its bare-base topic, and keeps numbering', async () => {
    const { memory } = backend();
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'mars', payload: 'null' });
    await memory.publish({ topic: 'diss.a', payload: 'null' });
    expect(await memory.wipeStream('Mars')).toBe('wiped');
    expect(await fetchAll(memory, everything('mars'))).toEqual([]);
    expect(await fetchAll(memory, new TopicPattern(['mars']))).toEqual([]);
    expect(await fetchAll(memory, everything('diss'))).toEqual([1]);
    expect(await memory.publish({ topic: 'mars.a', payload: 'null' })).toEqual({ sequence: 3 });
  });

  it('wiping a base that never stored anything is not_found; an emptied one is still wiped (D30)', async () => {
    const { memory } = backend();
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    expect(await memory.wipeStream('mar')).toBe('not_found');
    expect(await memory.wipeStream('diss')).toBe('not_found');
    expect(await memory.wipeStream('MARS')).toBe('wiped');
    expect(await memory.wipeStream('mars')).toBe('wiped');
    await memory.wipeAll();
    expect(await memory.wipeStream('mars')).toBe('wiped');
    expect(await fetchAll(memory, everything('mars'))).toEqual([]);
  });

  it('wipes everything without resetting the sequence', async () => {
    const { memory } = backend();
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'diss.a', payload: 'null' });
    await memory.wipeAll();
    expect((await memory.stats()).total_messages).toBe(0);
    expect(await memory.publish({ topic: 'mars.a', payload: 'null' })).toEqual({ sequence: 2 });
    expect(await memory.publish({ topic: 'diss.b', payload: 'null' })).toEqual({ sequence: 2 });
  });

  it('reports topic and message counts', async () => {
    const { memory } = backend({ maxHistoryPerTopic: 1, maxTopics: 7 });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    expect(await memory.stats()).toMatchObject({
      total_topics: 2,
      total_messages: 2,
      total_messages_received: 3,
      max_history_per_topic: 1,
      max_topics: 7,
    });
  });
});
