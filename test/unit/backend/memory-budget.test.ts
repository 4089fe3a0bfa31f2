import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NotificationTooLargeError, type LiveSink, type StoredNotification } from '../../../src/backend/backend.js';
import type { EvictionCause } from '../../../src/backend/memory/history-telemetry.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { NOTIFICATION_OVERHEAD_BYTES, storedBytes, textBytes } from '../../../src/notification/stored-bytes.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';
import { ManualClock } from '../../support/manual-clock.js';

/**
 * `max_total_size` (docs/backends.md, "Memory budget"): what a notification counts, which ones are
 * evicted and in what order, and that the bytes held always equal the sum over what is stored.
 */

const everything = (base: string, tokens = 1) => new TopicPattern([base, ...Array<string>(tokens).fill('*')]);

/** `mars.a` with payload `null`: every test notification of this size unless it says otherwise. */
const SMALL = NOTIFICATION_OVERHEAD_BYTES + 'mars.a'.length + 'null'.length;

function backend(options: { maxTotalBytes: number; maxHistoryPerTopic?: number; maxTopics?: number }) {
  const evictions: Record<EvictionCause, number> = { bytes: 0, topics: 0, per_topic: 0 };
  const heldReports: number[] = [];
  let reached = 0;
  const memory = new MemoryBackend({
    maxHistoryPerTopic: options.maxHistoryPerTopic ?? 100,
    maxTopics: options.maxTopics ?? 100,
    maxTotalBytes: options.maxTotalBytes,
    clock: new ManualClock(),
    onTotalBytesReached: () => reached++,
    telemetry: {
      evicted: (cause, notifications) => (evictions[cause] += notifications),
      heldBytes: (bytes) => heldReports.push(bytes),
    },
  });
  return { memory, evictions, heldReports, reachedCount: () => reached };
}

async function stored(memory: MemoryBackend, base: string, tokens = 1): Promise<StoredNotification[]> {
  const batch = await memory.fetchBatch({
    pattern: everything(base, tokens),
    start: { kind: 'sequence', sequence: 0 },
    limit: 100_000,
    upperBound: Number.MAX_SAFE_INTEGER,
  });
  return [...batch.messages];
}

async function sequences(memory: MemoryBackend, base: string): Promise<number[]> {
  return (await stored(memory, base)).map((m) => m.sequence);
}

async function heldBytes(memory: MemoryBackend): Promise<number> {
  return (await memory.stats()).held_bytes as number;
}

describe('what a stored notification counts', () => {
  it('counts topic, payload and every metadata name and value, plus the fixed overhead', () => {
    const notification = { topic: 'mars.a', payload: '{"x":1}', metadata: { aviso_identifier: '{"k":"a"}', spatial_bbox: '1,2,3,4' } };
    expect(storedBytes(notification)).toBe(NOTIFICATION_OVERHEAD_BYTES + 6 + 7 + 'aviso_identifier'.length + 9 + 'spatial_bbox'.length + 7);
  });

  it('counts one byte a character up to U+00FF and two for the whole string beyond, as V8 stores it', () => {
    expect(textBytes('abc')).toBe(3);
    expect(textBytes('é')).toBe(1);
    expect(textBytes('a€')).toBe(4);
    // An astral character is two UTF-16 units.
    expect(textBytes('a😀')).toBe(6);
  });

  it('holds exactly what it counted, and nothing once wiped', async () => {
    const { memory, heldReports } = backend({ maxTotalBytes: 1_000_000 });
    const notification = { topic: 'mars.a', payload: '"€"', metadata: { aviso_identifier: '{}' } };
    await memory.publish(notification);
    expect(await heldBytes(memory)).toBe(storedBytes(notification));
    await memory.wipeAll();
    expect(await heldBytes(memory)).toBe(0);
    expect(heldReports).toEqual([storedBytes(notification), 0]);
  });
});

describe('evicting to stay within max_total_size', () => {
  it('evicts the notifications stored first, across topics and bases, never reusing a sequence', async () => {
    const { memory, evictions } = backend({ maxTotalBytes: 3 * SMALL });
    await memory.publish({ topic: 'mars.a', payload: 'null' }); // mars@1
    await memory.publish({ topic: 'diss.a', payload: 'null' }); // diss@1
    await memory.publish({ topic: 'mars.b', payload: 'null' }); // mars@2
    expect(evictions.bytes).toBe(0);
    await memory.publish({ topic: 'mars.c', payload: 'null' }); // mars@3 evicts mars@1
    expect(await sequences(memory, 'mars')).toEqual([2, 3]);
    expect(await sequences(memory, 'diss')).toEqual([1]);
    await memory.publish({ topic: 'mars.a', payload: 'null' }); // mars@4 evicts diss@1
    expect(await sequences(memory, 'diss')).toEqual([]);
    expect(await sequences(memory, 'mars')).toEqual([2, 3, 4]);
    expect(evictions).toEqual({ bytes: 2, topics: 0, per_topic: 0 });
    // The emptied base keeps its H and its numbering (D28).
    expect(await memory.captureHistoryBound(everything('diss'))).toBe(1);
    expect(await memory.publish({ topic: 'diss.a', payload: 'null' })).toEqual({ sequence: 2 });
    expect(await heldBytes(memory)).toBeLessThanOrEqual(3 * SMALL);
  });

  it('evicts as many as a larger notification needs, and no more', async () => {
    const { memory, evictions } = backend({ maxTotalBytes: 4 * SMALL });
    for (const topic of ['mars.a', 'mars.b', 'mars.c', 'mars.d']) await memory.publish({ topic, payload: 'null' });
    // Twice the size of the others: two of them make room.
    await memory.publish({ topic: 'mars.e', payload: 'x'.repeat(SMALL + 'null'.length) });
    expect(await sequences(memory, 'mars')).toEqual([3, 4, 5]);
    expect(evictions.bytes).toBe(2);
  });

  it("lets the count bounds make room first: replacing a topic's only notification evicts nothing else", async () => {
    const { memory, evictions } = backend({ maxTotalBytes: 3 * SMALL, maxHistoryPerTopic: 1 });
    for (const topic of ['mars.a', 'mars.b', 'mars.c']) await memory.publish({ topic, payload: 'null' });
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    expect(await sequences(memory, 'mars')).toEqual([1, 3, 4]);
    expect(evictions).toEqual({ bytes: 0, topics: 0, per_topic: 1 });
  });

  it('forgets a topic it empties, so that topic no longer takes a max_topics place', async () => {
    const { memory, evictions } = backend({ maxTotalBytes: 2 * SMALL, maxTopics: 2 });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    await memory.publish({ topic: 'mars.b', payload: 'null' }); // evicts mars.a's only notification by bytes
    expect((await memory.stats()).total_topics).toBe(1);
    await memory.publish({ topic: 'mars.c', payload: 'null' }); // a free topic place: evicts mars@2 by bytes only
    expect(evictions).toEqual({ bytes: 2, topics: 0, per_topic: 0 });
    expect(await sequences(memory, 'mars')).toEqual([3, 4]);
    expect((await memory.stats()).total_topics).toBe(2);
  });

  it('keeps the topic being published to when eviction empties it', async () => {
    const { memory } = backend({ maxTotalBytes: SMALL, maxHistoryPerTopic: 10 });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    expect(await sequences(memory, 'mars')).toEqual([2]);
    expect(await memory.stats()).toMatchObject({ total_topics: 1, total_messages: 1, total_messages_received: 2 });
  });

  it('reports a replay of an evicted range as nothing stored there, like the count bounds, and says what was lost (D42)', async () => {
    const { memory } = backend({ maxTotalBytes: 2 * SMALL });
    for (const topic of ['mars.a', 'mars.b', 'mars.c', 'mars.d']) await memory.publish({ topic, payload: 'null' });
    const evictedRange = await memory.fetchBatch({
      pattern: everything('mars'),
      start: { kind: 'sequence', sequence: 1 },
      limit: 2,
      upperBound: 2,
    });
    expect(evictedRange).toEqual({ messages: [], nextSequence: 3, exhausted: true, losses: [{ first: 1, last: 2, count: 2 }] });
    const fromFirst = await memory.fetchBatch({
      pattern: everything('mars'),
      start: { kind: 'sequence', sequence: 1 },
      limit: 10,
      upperBound: 4,
    });
    expect(fromFirst.messages.map((m) => m.sequence)).toEqual([3, 4]);
  });

  it('still delivers the notification that evicted others to live watchers (D39)', async () => {
    const { memory } = backend({ maxTotalBytes: SMALL });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    const received: number[] = [];
    const sink: LiveSink = { deliver: (n) => received.push(n.sequence), end: () => undefined };
    await memory.subscribe(everything('mars'), sink);
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    expect(received).toEqual([2]);
    expect(await sequences(memory, 'mars')).toEqual([2]);
  });

  it('tells once, the first time it evicts for bytes', async () => {
    const { memory, reachedCount } = backend({ maxTotalBytes: SMALL });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    expect(reachedCount()).toBe(0);
    for (let i = 0; i < 3; i++) await memory.publish({ topic: 'mars.a', payload: 'null' });
    expect(reachedCount()).toBe(1);
  });

  it('refuses a notification larger than the whole budget, evicting nothing and assigning no sequence', async () => {
    const { memory, evictions } = backend({ maxTotalBytes: 2 * SMALL });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    const tooLarge = { topic: 'mars.b', payload: 'x'.repeat(2 * SMALL) };
    const refusal = memory.publish(tooLarge);
    await expect(refusal).rejects.toBeInstanceOf(NotificationTooLargeError);
    await expect(refusal).rejects.toMatchObject({ bytes: storedBytes(tooLarge), limitBytes: 2 * SMALL });
    expect(await sequences(memory, 'mars')).toEqual([1]);
    expect(evictions.bytes).toBe(0);
    expect(await memory.publish({ topic: 'mars.b', payload: 'null' })).toEqual({ sequence: 2 });
  });

  it('accepts a notification exactly as large as the budget', async () => {
    const { memory } = backend({ maxTotalBytes: SMALL });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    expect(await heldBytes(memory)).toBe(SMALL);
  });
});

describe('accounting after deletes and wipes', () => {
  it("gives back what a deleted notification counted and leaves the others' order alone", async () => {
    const { memory } = backend({ maxTotalBytes: 3 * SMALL });
    for (const topic of ['mars.a', 'mars.b', 'mars.c']) await memory.publish({ topic, payload: 'null' });
    expect(await memory.deleteMessage('mars', 2)).toBe('deleted');
    expect(await heldBytes(memory)).toBe(2 * SMALL);
    await memory.publish({ topic: 'mars.d', payload: 'null' }); // fits: nothing evicted
    expect(await sequences(memory, 'mars')).toEqual([1, 3, 4]);
    await memory.publish({ topic: 'mars.e', payload: 'null' }); // evicts mars@1, the oldest left
    expect(await sequences(memory, 'mars')).toEqual([3, 4, 5]);
  });

  it("gives back a wiped stream's bytes and keeps the other bases' order", async () => {
    const { memory } = backend({ maxTotalBytes: 3 * SMALL });
    await memory.publish({ topic: 'diss.a', payload: 'null' });
    await memory.publish({ topic: 'mars.a', payload: 'null' });
    await memory.publish({ topic: 'diss.b', payload: 'null' });
    expect(await memory.wipeStream('MARS')).toBe('wiped');
    expect(await heldBytes(memory)).toBe(2 * SMALL);
    await memory.publish({ topic: 'mars.b', payload: 'null' });
    await memory.publish({ topic: 'mars.c', payload: 'null' }); // evicts diss@1
    expect(await sequences(memory, 'diss')).toEqual([2]);
    expect(await sequences(memory, 'mars')).toEqual([2, 3]);
  });
});

describe('memory of evicted notifications', () => {
  setFlagsFromString('--expose-gc');
  const collectGarbage = runInNewContext('gc') as () => void;

  /** Weak references to what `memory` stores now, made in a function of their own so no strong one stays on this stack. */
  async function weaklyHeld(memory: MemoryBackend, base: string): Promise<WeakRef<StoredNotification>[]> {
    return (await stored(memory, base)).map((notification) => new WeakRef(notification));
  }

  it('keeps no reference to a notification once evicted', async () => {
    const { memory } = backend({ maxTotalBytes: 3 * SMALL });
    for (const topic of ['mars.a', 'mars.b', 'mars.c']) await memory.publish({ topic, payload: 'null' });
    const first = await weaklyHeld(memory, 'mars');
    for (const topic of ['mars.d', 'mars.e', 'mars.f']) await memory.publish({ topic, payload: 'null' });
    // A WeakRef read in this job keeps its target until the job ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(first.map((ref) => ref.deref() === undefined)).toEqual([true, true, true]);
    expect(await sequences(memory, 'mars')).toEqual([4, 5, 6]);
  });

  /** 10 MB of body, of which the payload and the identifier are short substrings (views into it in V8). */
  async function publishCutFromBody(memory: MemoryBackend, index: number): Promise<void> {
    const body = `${String(index).repeat(10_000_000)}{"n":12345678901234567890}{"k":"abcdefghijklmnop"}`;
    await memory.publish({
      topic: `mars.${index}`,
      payload: body.slice(10_000_000, 10_000_026),
      metadata: { aviso_identifier: body.slice(10_000_026) },
    });
  }

  it('stores its own copy of each text, so a request body it was cut from is not kept alive', async () => {
    const { memory } = backend({ maxTotalBytes: 1_000_000 });
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 5; i++) await publishCutFromBody(memory, i);
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    const grown = process.memoryUsage().heapUsed - before;
    expect((await stored(memory, 'mars')).map((m) => m.payload)).toEqual(Array(5).fill('{"n":12345678901234567890}'));
    // Keeping the bodies would be 50 MB.
    expect(grown).toBeLessThan(5_000_000);
  });
});

interface ReferenceEntry {
  readonly base: string;
  readonly topic: string;
  readonly sequence: number;
  readonly bytes: number;
}

/** What the backend must hold after any sequence of operations: the rules, written out plainly. */
class ReferenceHistory {
  /** Every held notification in storage order. */
  entries: ReferenceEntry[] = [];
  /** Topics oldest-published first, empty ones (after a delete) included. */
  topics: string[] = [];
  readonly lastSequence = new Map<string, number>();
  readonly evictions: Record<EvictionCause, number> = { bytes: 0, topics: 0, per_topic: 0 };

  constructor(private readonly limits: { maxTotalBytes: number; maxHistoryPerTopic: number; maxTopics: number }) {}

  get heldBytes(): number {
    return this.entries.reduce((sum, entry) => sum + entry.bytes, 0);
  }

  publish(base: string, topic: string, bytes: number): 'stored' | 'refused' {
    if (bytes > this.limits.maxTotalBytes) return 'refused';
    const sequence = (this.lastSequence.get(base) ?? 0) + 1;
    this.lastSequence.set(base, sequence);
    if (this.topics.includes(topic)) {
      this.topics = [...this.topics.filter((t) => t !== topic), topic];
    } else {
      if (this.topics.length >= this.limits.maxTopics) {
        const stalest = this.topics.shift() as string;
        this.evictions.topics += this.entries.filter((e) => e.topic === stalest).length;
        this.entries = this.entries.filter((e) => e.topic !== stalest);
      }
      this.topics.push(topic);
    }
    while (this.entries.filter((e) => e.topic === topic).length >= this.limits.maxHistoryPerTopic) {
      this.entries.splice(
        this.entries.findIndex((e) => e.topic === topic),
        1,
      );
      this.evictions.per_topic++;
    }
    while (this.heldBytes + bytes > this.limits.maxTotalBytes) {
      const oldest = this.entries.shift() as ReferenceEntry;
      this.evictions.bytes++;
      if (oldest.topic !== topic && !this.entries.some((e) => e.topic === oldest.topic)) {
        this.topics = this.topics.filter((t) => t !== oldest.topic);
      }
    }
    this.entries.push({ base, topic, sequence, bytes });
    return 'stored';
  }

  delete(base: string, sequence: number): 'deleted' | 'not_found' {
    const index = this.entries.findIndex((e) => e.base === base && e.sequence === sequence);
    if (index < 0) return 'not_found';
    const { topic } = this.entries.splice(index, 1)[0] as ReferenceEntry;
    if (!this.entries.some((e) => e.topic === topic)) this.topics = [...this.topics.filter((t) => t !== topic), topic];
    return 'deleted';
  }

  wipeStream(base: string): void {
    this.entries = this.entries.filter((e) => e.base !== base);
    this.topics = this.topics.filter((t) => t.split('.')[0] !== base);
  }

  wipeAll(): void {
    this.entries = [];
    this.topics = [];
  }
}

type Operation =
  | { kind: 'publish'; base: string; leaf: string; payload: string; identifier: string | undefined }
  | { kind: 'delete'; base: string; sequence: number }
  | { kind: 'wipeStream'; base: string }
  | { kind: 'wipeAll' };

const BASES = ['mars', 'diss', 'polygon'];

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant('publish' as const),
      base: fc.constantFrom(...BASES),
      leaf: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      // Payload sizes around the overhead, Latin-1 or beyond it.
      payload: fc.oneof(fc.string({ maxLength: 3000 }), fc.string({ unit: 'binary', maxLength: 1500 })),
      identifier: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('delete' as const),
      base: fc.constantFrom(...BASES),
      sequence: fc.integer({ min: 1, max: 40 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wipeStream' as const), base: fc.constantFrom(...BASES) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'wipeAll' as const }) },
);

describe('max_total_size over any sequence of operations (property)', () => {
  it('holds the sum over what is stored, never more than the budget, and evicts exactly what the rules say', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          maxTotalBytes: fc.integer({ min: 2_000, max: 12_000 }),
          maxHistoryPerTopic: fc.integer({ min: 1, max: 4 }),
          maxTopics: fc.integer({ min: 1, max: 8 }),
        }),
        fc.array(operation, { maxLength: 60 }),
        async (limits, operations) => {
          const { memory, evictions } = backend(limits);
          const reference = new ReferenceHistory(limits);
          for (const op of operations) {
            if (op.kind === 'publish') {
              const notification = {
                topic: `${op.base}.${op.leaf}`,
                payload: op.payload,
                ...(op.identifier === undefined ? {} : { metadata: { aviso_identifier: op.identifier } }),
              };
              const expected = reference.publish(op.base, notification.topic, storedBytes(notification));
              const outcome = await memory.publish(notification).then(
                () => 'stored',
                (error: unknown) => (error instanceof NotificationTooLargeError ? 'refused' : 'failed'),
              );
              expect(outcome).toBe(expected);
            } else if (op.kind === 'delete') {
              expect(await memory.deleteMessage(op.base, op.sequence)).toBe(reference.delete(op.base, op.sequence));
            } else if (op.kind === 'wipeStream') {
              reference.wipeStream(op.base);
              await memory.wipeStream(op.base);
            } else {
              reference.wipeAll();
              await memory.wipeAll();
            }

            const held = (await Promise.all(BASES.map((base) => stored(memory, base)))).flat();
            const sum = held.reduce((total, notification) => total + storedBytes(notification), 0);
            expect(await heldBytes(memory)).toBe(sum);
            expect(sum).toBe(reference.heldBytes);
            expect(sum).toBeLessThanOrEqual(limits.maxTotalBytes);
            for (const base of BASES) {
              expect(await sequences(memory, base)).toEqual(reference.entries.filter((e) => e.base === base).map((e) => e.sequence));
            }
            expect((await memory.stats()).total_topics).toBe(reference.topics.length);
            expect(evictions).toEqual(reference.evictions);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
