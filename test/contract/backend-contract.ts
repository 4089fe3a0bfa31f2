import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type {
  Batch,
  LiveSink,
  LiveSubscription,
  Metadata,
  NotificationBackend,
  ReplayCursor,
  StartCursor,
  StoredNotification,
} from '../../src/backend/backend.js';
import { encodeTopic } from '../../src/topic/percent-codec.js';
import { TopicPattern } from '../../src/topic/topic-pattern.js';
import { describeIdempotencyRecords } from './idempotency-contract.js';

/**
 * The backend contract (docs/design/rules/backends.md §3, docs/design/rules/streaming.md §9–§12, D7, D10, D19, D22) as one suite that
 * runs against every `NotificationBackend`. It only asserts what both backends promise. Both number
 * each stream base on its own, densely from 1 (D28; JetStream per stream), so a fresh base's
 * sequences are known exactly; history limits and deletions still leave gaps.
 */

export interface BackendFactoryOptions {
  /**
   * Keep every notification of a topic (memory: `maxHistoryPerTopic: 100`; JetStream:
   * `allow_duplicates`) instead of only the latest one, which is both backends' default (B10).
   */
  readonly keepHistory: boolean;
  /**
   * Every base the test will publish to or read from: from `uniqueBase()`, or one of those with a
   * suffix appended (to test bases sharing a prefix). A backend
   * that is configured per base (JetStream storage policies, wipe-all restricted to configured
   * bases, D22) is built for exactly these. Bases used as "unknown stream" are not listed.
   */
  readonly bases: readonly string[];
}

export interface BackendFactory {
  /** A new backend for one test; the suite shuts it down after the test. */
  create(options: BackendFactoryOptions): Promise<NotificationBackend>;
  /** A topic base no other test (in this run or on a shared server) has used: `[a-z0-9_]+`. */
  uniqueBase(): string;
  /** Called once after the suite, e.g. to delete the streams it created on a shared server. */
  close?(): Promise<void>;
}

const DELIVERY_TIMEOUT_MS = 5_000;

/** What a test keeps of a publish: the assigned sequence and the wire topic. */
interface Published {
  readonly sequence: number;
  readonly topic: string;
}

/** A base generator for factories: lower-case, letters, digits and underscores only. */
export function uniqueBaseGenerator(prefix: string): () => string {
  const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  let counter = 0;
  return () => `${prefix}_${run}_${(counter++).toString(36)}`;
}

export interface CollectingSink {
  readonly sink: LiveSink;
  /** Deliveries so far, in arrival order. */
  readonly received: readonly StoredNotification[];
  /** How often `end` was called. */
  endCalls(): number;
  /** Resolves with the deliveries once at least `count` arrived; fails on timeout or early end. */
  waitFor(count: number, timeoutMs?: number): Promise<readonly StoredNotification[]>;
  /** Resolves with the error passed to `end` (or undefined) once `end` was called. */
  ended(timeoutMs?: number): Promise<Error | undefined>;
}

/** A live sink that records deliveries and lets a test await them instead of sleeping. */
export function collectingSink(): CollectingSink {
  const received: StoredNotification[] = [];
  let endCount = 0;
  let endError: Error | undefined;
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of [...listeners]) listener();
  };
  const describeReceived = () => (received.length === 0 ? 'nothing' : received.map((m) => `${m.sequence}:${m.topic}`).join(', '));

  const awaitCondition = <T>(done: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const check = (): boolean => {
        const result = done();
        if (result !== undefined) {
          finish();
          resolve(result);
          return true;
        }
        if (endCount > 0 && what !== 'end') {
          finish();
          const why = `the sink ended (${String(endError)}) while waiting for ${what}`;
          reject(new Error(`${why}; received ${describeReceived()}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; received ${describeReceived()}`));
      }, timeoutMs);
      const listener = () => void check();
      const finish = () => {
        clearTimeout(timer);
        listeners.delete(listener);
      };
      if (!check()) listeners.add(listener);
    });

  return {
    received,
    sink: {
      deliver(notification) {
        received.push(notification);
        notify();
      },
      end(error) {
        endCount++;
        endError ??= error;
        notify();
      },
    },
    endCalls: () => endCount,
    waitFor: (count, timeoutMs = DELIVERY_TIMEOUT_MS) =>
      awaitCondition(() => (received.length >= count ? [...received] : undefined), `${count} live messages`, timeoutMs),
    ended: (timeoutMs = DELIVERY_TIMEOUT_MS) =>
      awaitCondition(() => (endCount > 0 ? { error: endError } : undefined), 'end', timeoutMs).then((r) => r.error),
  };
}

const sequences = (messages: readonly StoredNotification[]): number[] => messages.map((m) => m.sequence);
const ascending = (a: number, b: number) => a - b;
const bySequence = (sequence: number): StartCursor => ({ kind: 'sequence', sequence });
const byDate = (atNs: bigint): StartCursor => ({ kind: 'date', atNs });
const FROM_START = bySequence(0);
const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

function only<T>(items: readonly T[]): T {
  expect(items).toHaveLength(1);
  return items[0] as T;
}

function expectStrictlyAscending(values: readonly number[]): void {
  for (let i = 1; i < values.length; i++) {
    expect(values[i], `sequence at position ${i} of [${values.join(', ')}]`).toBeGreaterThan(values[i - 1] as number);
  }
}

/** Waits until the wall clock has passed `ns` by `marginMs`; the event is the clock moving on. */
async function clockPast(ns: bigint, marginMs: number): Promise<bigint> {
  const target = ns + BigInt(marginMs) * 1_000_000n;
  while (nowNs() <= target) await new Promise<void>((resolve) => setTimeout(resolve, 1));
  return nowNs();
}

/**
 * Pages through `fetchBatch` until `exhausted`, checking the paging rules on every call: at most
 * `limit` messages, ascending, within the cursor and the bound, and `nextSequence` beyond every
 * returned sequence and strictly increasing.
 */
async function fetchAll(
  backend: NotificationBackend,
  pattern: TopicPattern,
  upperBound: number,
  options: { start?: StartCursor; limit?: number } = {},
): Promise<{ messages: StoredNotification[]; batches: Batch[] }> {
  const limit = options.limit ?? 100;
  let start = options.start ?? FROM_START;
  const messages: StoredNotification[] = [];
  const batches: Batch[] = [];
  let previousNext = -1;
  for (let call = 0; call < 10_000; call++) {
    const batch = await backend.fetchBatch({ pattern, start, limit, upperBound });
    batches.push(batch);
    expect(batch.messages.length).toBeLessThanOrEqual(limit);
    expectStrictlyAscending(sequences(batch.messages));
    for (const message of batch.messages) {
      expect(message.sequence).toBeLessThanOrEqual(upperBound);
      if (start.kind === 'sequence') expect(message.sequence).toBeGreaterThanOrEqual(start.sequence);
      expect(pattern.matches(message.topic), `${message.topic} matches ${pattern.display}`).toBe(true);
      expect(batch.nextSequence).toBeGreaterThan(message.sequence);
      const last = messages.at(-1);
      if (last) expect(message.sequence).toBeGreaterThan(last.sequence);
      messages.push(message);
    }
    if (batch.exhausted) return { messages, batches };
    expect(batch.nextSequence).toBeGreaterThan(previousNext);
    if (start.kind === 'sequence') expect(batch.nextSequence).toBeGreaterThan(start.sequence);
    previousNext = batch.nextSequence;
    start = { kind: 'sequence', sequence: batch.nextSequence };
  }
  throw new Error(`fetchBatch made no progress towards exhaustion for ${pattern.display}`);
}

export function describeBackendContract(label: string, factory: BackendFactory): void {
  describe(`${label}: backend contract`, () => {
    const open: NotificationBackend[] = [];
    const shutDown = new Set<NotificationBackend>();

    /** A backend built for `bases`; it keeps history unless told otherwise. */
    async function setupFor(bases: string[], options: { keepHistory?: boolean } = {}): Promise<NotificationBackend> {
      const backend = await factory.create({ keepHistory: options.keepHistory ?? true, bases });
      open.push(backend);
      return backend;
    }

    /** Fresh bases and a backend built for them. */
    async function setup(
      baseCount: number,
      options: { keepHistory?: boolean } = {},
    ): Promise<{ backend: NotificationBackend; bases: string[] }> {
      const bases = Array.from({ length: baseCount }, () => factory.uniqueBase());
      return { backend: await setupFor(bases, options), bases };
    }

    async function shutdown(backend: NotificationBackend): Promise<void> {
      shutDown.add(backend);
      await backend.shutdown();
    }

    const publish = async (
      backend: NotificationBackend,
      tokens: readonly string[],
      payload = 'null',
      metadata?: Metadata,
    ): Promise<Published> => {
      const topic = encodeTopic(tokens);
      const { sequence } = await backend.publish({ topic, payload, ...(metadata ? { metadata } : {}) });
      return { sequence, topic };
    };

    const all = (backend: NotificationBackend, pattern: TopicPattern, upperBound = Number.MAX_SAFE_INTEGER) =>
      fetchAll(backend, pattern, upperBound).then((r) => r.messages);

    afterEach(async () => {
      const backends = open.splice(0);
      for (const backend of backends) {
        if (!shutDown.has(backend)) await backend.shutdown();
      }
      shutDown.clear();
    });

    afterAll(async () => {
      await factory.close?.();
    });

    describe('publish', () => {
      it('returns strictly increasing sequences within a base', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const published: number[] = [];
        for (const key of ['a', 'b', 'a', 'c', 'a']) published.push((await publish(backend, [base, key])).sequence);
        expect(published[0]).toBeGreaterThanOrEqual(1);
        expectStrictlyAscending(published);
      });

      it('numbers two bases independently and densely from 1, however their publishes interleave (D28)', async () => {
        const { backend, bases } = await setup(2);
        const [base, other] = bases as [string, string];
        // Different topics and token counts of one base, the bare base included, share its numbering.
        const plan = [[base, 'a'], [other, 'a'], [other, 'b'], [base, 'b'], [base], [other, 'a'], [base, 'a', 'x']];
        const got: [string, number][] = [];
        for (const tokens of plan) got.push([tokens[0] as string, (await publish(backend, tokens)).sequence]);
        expect(got).toEqual([
          [base, 1],
          [other, 1],
          [other, 2],
          [base, 2],
          [base, 3],
          [other, 3],
          [base, 4],
        ]);
        expect(await backend.captureHistoryBound(new TopicPattern([base, '*']))).toBe(4);
        expect(await backend.captureHistoryBound(new TopicPattern([other, '*']))).toBe(3);
        const subscription = await backend.subscribe(new TopicPattern([other, '*']), collectingSink().sink);
        expect(subscription.historyBound).toBe(3);
      });

      it('keeps only the latest notification of each exact topic by default (max one per topic)', async () => {
        const { backend, bases } = await setup(1, { keepHistory: false });
        const [base] = bases as [string];
        await publish(backend, [base, 'a'], '"first"');
        await publish(backend, [base, 'a'], '"second"');
        const latestA = await publish(backend, [base, 'a'], '"third"');
        const onlyB = await publish(backend, [base, 'b'], '"b"');
        const stored = await all(backend, new TopicPattern([base, '*']));
        expect(stored.map((m) => [m.sequence, m.payload])).toEqual([
          [latestA.sequence, '"third"'],
          [onlyB.sequence, '"b"'],
        ]);
      });
    });

    describe('publishMany (D48)', () => {
      it('stores a batch in order, densely numbered per base, repeated topics included, and delivers it live in that order', async () => {
        const { backend, bases } = await setup(2);
        const [base, other] = bases as [string, string];
        await publish(backend, [base, 'a']);
        const sink = collectingSink();
        await backend.subscribe(new TopicPattern([base, '*']), sink.sink);
        const plan = [
          [base, 'a'],
          [base, 'b'],
          [other, 'a'],
          [base, 'a'],
          [base, 'c'],
          [other, 'a'],
          [base, 'a'],
        ];
        const notifications = plan.map((tokens, index) => ({ topic: encodeTopic(tokens), payload: String(index) }));
        const outcomes = await backend.publishMany(notifications);
        expect(outcomes.map((outcome) => (outcome.stored ? outcome.sequence : 'failed'))).toEqual([2, 3, 1, 4, 5, 2, 6]);
        const live = await sink.waitFor(5);
        expect(live.map((m) => [m.sequence, m.payload])).toEqual([
          [2, '0'],
          [3, '1'],
          [4, '3'],
          [5, '4'],
          [6, '6'],
        ]);
        const stored = await all(backend, new TopicPattern([base, '*']));
        expect(stored.map((m) => [m.sequence, m.topic, m.payload])).toEqual([
          [1, `${base}.a`, 'null'],
          ...live.map((m) => [m.sequence, m.topic, m.payload]),
        ]);
        expect((await all(backend, new TopicPattern([other, '*']))).map((m) => m.payload)).toEqual(['2', '5']);
      });

      it('keeps the latest of a topic repeated within one batch on a base that keeps one per topic', async () => {
        const { backend, bases } = await setup(1, { keepHistory: false });
        const [base] = bases as [string];
        await publish(backend, [base, 'a'], '"before"');
        const topics = ['a', 'b', 'a', 'a', 'c'].map((key) => encodeTopic([base, key]));
        const outcomes = await backend.publishMany(topics.map((topic, index) => ({ topic, payload: String(index) })));
        expect(outcomes.map((outcome) => (outcome.stored ? outcome.sequence : 'failed'))).toEqual([2, 3, 4, 5, 6]);
        const stored = await all(backend, new TopicPattern([base, '*']));
        expect(stored.map((m) => [m.sequence, m.payload])).toEqual([
          [3, '1'],
          [5, '3'],
          [6, '4'],
        ]);
      });
    });

    describe('openReplay', () => {
      async function readAll(cursor: ReplayCursor, limit: number): Promise<StoredNotification[]> {
        const messages: StoredNotification[] = [];
        for (let call = 0; call < 10_000; call++) {
          const batch = await cursor.next(limit);
          expect(batch.messages.length).toBeLessThanOrEqual(limit);
          messages.push(...batch.messages);
          if (batch.exhausted) return messages;
        }
        throw new Error('the replay cursor made no progress');
      }

      it('reads the same history as paging with fetchBatch, in order, within the bound', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        for (let i = 0; i < 11; i++) {
          await publish(backend, [base, 'm', String(i)]);
          if (i % 2 === 0) await publish(backend, [base, 'x', String(i)]);
        }
        const pattern = new TopicPattern([base, 'm', '*']);
        const upperBound = await backend.captureHistoryBound(pattern);
        await publish(backend, [base, 'm', 'late']);
        const cursor = await backend.openReplay({ pattern, start: FROM_START, upperBound });
        const read = await readAll(cursor, 3);
        cursor.close();
        cursor.close();
        expect(sequences(read)).toEqual(sequences(await all(backend, pattern, upperBound)));
        expect(read).toHaveLength(11);
        expectStrictlyAscending(sequences(read));
      });

      it('starts at an inclusive sequence and ends exhausted past the bound', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const published: number[] = [];
        for (let i = 0; i < 5; i++) published.push((await publish(backend, [base, String(i)])).sequence);
        const pattern = new TopicPattern([base, '*']);
        const upperBound = await backend.captureHistoryBound(pattern);
        const from = published[2] as number;
        const cursor = await backend.openReplay({ pattern, start: { kind: 'sequence', sequence: from }, upperBound });
        expect(sequences(await readAll(cursor, 2))).toEqual(published.slice(2));
        const empty = await backend.openReplay({ pattern, start: { kind: 'sequence', sequence: upperBound + 1 }, upperBound });
        const batch = await empty.next(10);
        expect(batch).toMatchObject({ messages: [], exhausted: true });
      });
    });

    describe('fetchBatch', () => {
      it('returns exactly the notifications matching the pattern, in ascending sequence order', async () => {
        const { backend, bases } = await setup(2);
        const [base, other] = bases as [string, string];
        const wanted: number[] = [];
        wanted.push((await publish(backend, [base, 'od', '0001'])).sequence);
        await publish(backend, [base, 'rd', '0001']);
        wanted.push((await publish(backend, [base, 'od', '0002'])).sequence);
        await publish(backend, [other, 'od', '0003']);
        wanted.push((await publish(backend, [base, 'od', '0001'])).sequence);
        const stored = await all(backend, new TopicPattern([base, 'od', '*']));
        expect(sequences(stored)).toEqual(wanted);
        expect(stored.map((m) => m.topic)).toEqual([`${base}.od.0001`, `${base}.od.0002`, `${base}.od.0001`]);
      });

      it('round-trips topic, payload and metadata verbatim (D7 identifier, spatial headers, non-ASCII, JSON)', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const polygonMetadata = {
          aviso_identifier: '{"city":"Zürich","class":"od","note":"café ☕ 東京 \\"quoted\\"","step":"1"}',
          spatial_bbox: '50.0,10.0,52.0,12.0',
          spatial_geometry: '(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)',
        };
        const cloudMetadata = {
          aviso_identifier: '{"points":[[50.5,10.5],[51.0,-11.25]]}',
          spatial_bbox: '50.5,-11.25,51.0,10.5',
          spatial_point_cloud: '[[50.5,10.5],[51.0,-11.25]]',
        };
        const payload = '{"location":"s3://bucket/Grüße/file.grib","n":[1,2.5,null],"ok":true}';
        const first = await publish(backend, [base, 'polygon'], payload, polygonMetadata);
        const otherPayload = 'plain text, not JSON: ünïcödé';
        const second = await publish(backend, [base, 'cloud'], otherPayload, cloudMetadata);
        const stored = await all(backend, new TopicPattern([base, '*']));
        const roundTripped = stored.map((m) => ({ sequence: m.sequence, topic: m.topic, payload: m.payload, metadata: m.metadata }));
        expect(roundTripped).toEqual([
          { sequence: first.sequence, topic: first.topic, payload, metadata: polygonMetadata },
          { sequence: second.sequence, topic: second.topic, payload: otherPayload, metadata: cloudMetadata },
        ]);
      });

      it('returns a notification stored without metadata without metadata', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        await publish(backend, [base, 'a'], 'null');
        const stored = only(await all(backend, new TopicPattern([base, 'a'])));
        expect(stored.payload).toBe('null');
        expect(Object.keys(stored.metadata ?? {})).toEqual([]);
      });

      it('returns the storage timestamp, taken between the publish call and its completion', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const before = nowNs();
        await publish(backend, [base, 'a']);
        const after = BigInt(Date.now() + 1) * 1_000_000n;
        const stored = only(await all(backend, new TopicPattern([base, 'a'])));
        expect(stored.timestampNs).toBeGreaterThanOrEqual(before - (before % 1_000_000n));
        expect(stored.timestampNs).toBeLessThanOrEqual(after);
        const again = only(await all(backend, new TopicPattern([base, 'a'])));
        expect(again.timestampNs).toBe(stored.timestampNs);
      });

      it('is empty and exhausted for a base with nothing stored', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        const upperBound = await backend.captureHistoryBound(pattern);
        const batch = await backend.fetchBatch({ pattern, start: FROM_START, limit: 10, upperBound });
        expect(batch.messages).toEqual([]);
        expect(batch.exhausted).toBe(true);
      });

      it('pages with a small limit through every notification exactly once, nextSequence strictly increasing', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const wanted: number[] = [];
        for (let i = 0; i < 9; i++) {
          wanted.push((await publish(backend, [base, 'm', String(i)])).sequence);
          if (i % 2 === 0) await publish(backend, [base, 'x', String(i)]); // same token count, other value
          if (i % 3 === 0) await publish(backend, [base, 'm', String(i), 'extra']); // inside the coarse subject
        }
        const pattern = new TopicPattern([base, 'm', '*']);
        const upperBound = await backend.captureHistoryBound(pattern);
        const { messages, batches } = await fetchAll(backend, pattern, upperBound, { limit: 2 });
        expect(sequences(messages)).toEqual(wanted);
        expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(wanted.length / 2));
        const nexts = batches.slice(0, -1).map((b) => b.nextSequence);
        expectStrictlyAscending(nexts);
      });

      it('never returns a notification above upperBound', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const early: number[] = [];
        for (const key of ['a', 'b', 'c']) early.push((await publish(backend, [base, key])).sequence);
        const pattern = new TopicPattern([base, '*']);
        const bound = await backend.captureHistoryBound(pattern);
        expect(bound).toBe(early.at(-1));
        await publish(backend, [base, 'd']);
        await publish(backend, [base, 'a']);
        expect(sequences(await all(backend, pattern, bound))).toEqual(early);
        const atSecond = await fetchAll(backend, pattern, early[1] as number, { limit: 1 });
        expect(sequences(atSecond.messages)).toEqual(early.slice(0, 2));
      });

      it('treats a sequence cursor as inclusive and 0 as from the start', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const stored: number[] = [];
        for (const key of ['a', 'b', 'c', 'd']) stored.push((await publish(backend, [base, key])).sequence);
        const pattern = new TopicPattern([base, '*']);
        const bound = await backend.captureHistoryBound(pattern);
        const fromSecond = await fetchAll(backend, pattern, bound, { start: bySequence(stored[1] as number) });
        expect(sequences(fromSecond.messages)).toEqual(stored.slice(1));
        const fromZero = await fetchAll(backend, pattern, bound, { start: bySequence(0) });
        expect(sequences(fromZero.messages)).toEqual(stored);
        const fromFirst = await fetchAll(backend, pattern, bound, { start: bySequence(stored[0] as number) });
        expect(sequences(fromFirst.messages)).toEqual(stored);
      });

      it('gives an empty, exhausted batch for a sequence cursor above upperBound', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        await publish(backend, [base, 'a']);
        const pattern = new TopicPattern([base, '*']);
        const bound = await backend.captureHistoryBound(pattern);
        await publish(backend, [base, 'b']);
        const batch = await backend.fetchBatch({ pattern, start: bySequence(bound + 1), limit: 10, upperBound: bound });
        expect(batch).toMatchObject({ messages: [], exhausted: true });
      });

      it('treats a date cursor as inclusive on the storage timestamp', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        const early = await publish(backend, [base, 'early']);
        const earlyStored = only(await all(backend, new TopicPattern([base, 'early'])));
        const boundary = await clockPast(earlyStored.timestampNs, 2);
        const late = [(await publish(backend, [base, 'late'])).sequence, (await publish(backend, [base, 'later'])).sequence];
        const bound = await backend.captureHistoryBound(pattern);
        const lateStored = (await all(backend, pattern, bound)).filter((m) => late.includes(m.sequence));

        const fromBoundary = await fetchAll(backend, pattern, bound, { start: byDate(boundary) });
        expect(sequences(fromBoundary.messages)).toEqual(late);
        const firstLate = lateStored[0] as StoredNotification;
        const atLateTimestamp = await fetchAll(backend, pattern, bound, { start: byDate(firstLate.timestampNs) });
        expect(sequences(atLateTimestamp.messages)).toEqual(late);
        const atEarlyTimestamp = await fetchAll(backend, pattern, bound, { start: byDate(earlyStored.timestampNs) });
        expect(sequences(atEarlyTimestamp.messages)).toEqual([early.sequence, ...late]);
      });

      it('continues a date-cursor replay by sequence after the first batch', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        await publish(backend, [base, 'early']);
        const earlyStored = only(await all(backend, pattern));
        const boundary = await clockPast(earlyStored.timestampNs, 2);
        const late: number[] = [];
        for (const key of ['a', 'b', 'c', 'd', 'e']) late.push((await publish(backend, [base, key])).sequence);
        const bound = await backend.captureHistoryBound(pattern);
        const { messages, batches } = await fetchAll(backend, pattern, bound, { start: byDate(boundary), limit: 2 });
        expect(sequences(messages)).toEqual(late);
        expect(batches.length).toBeGreaterThan(1);
      });

      it('replays everything for a date cursor at or before the epoch (the year 1500 included)', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        const stored = [(await publish(backend, [base, 'a'])).sequence, (await publish(backend, [base, 'b'])).sequence];
        const bound = await backend.captureHistoryBound(pattern);
        const year1500 = BigInt(Date.UTC(1500, 0, 1)) * 1_000_000n;
        for (const atNs of [year1500, -1n, 0n]) {
          expect(sequences((await fetchAll(backend, pattern, bound, { start: byDate(atNs) })).messages)).toEqual(stored);
          const cursor = await backend.openReplay({ pattern, start: byDate(atNs), upperBound: bound });
          try {
            expect(sequences((await cursor.next(10)).messages)).toEqual(stored);
          } finally {
            cursor.close();
          }
        }
      });

      it('gives an empty, exhausted batch for a date cursor after everything stored', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        await publish(backend, [base, 'a']);
        const bound = await backend.captureHistoryBound(pattern);
        const future = nowNs() + 3_600_000_000_000n;
        const batch = await backend.fetchBatch({ pattern, start: byDate(future), limit: 10, upperBound: bound });
        expect(batch).toMatchObject({ messages: [], exhausted: true });
      });
    });

    describe('topic matching', () => {
      it('matches exact token counts only: a pattern never returns longer or shorter topics', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const one = await publish(backend, [base, 'a']);
        const two = await publish(backend, [base, 'a', 'b']);
        const three = await publish(backend, [base, 'a', 'b', 'c']);
        const topicsOf = async (tokens: string[]) => (await all(backend, new TopicPattern(tokens))).map((m) => m.topic);
        expect(await topicsOf([base, '*'])).toEqual([one.topic]);
        expect(await topicsOf([base, 'a'])).toEqual([one.topic]);
        expect(await topicsOf([base, '*', '*'])).toEqual([two.topic]);
        expect(await topicsOf([base, 'a', 'b'])).toEqual([two.topic]);
        expect(await topicsOf([base, 'a', '*', '*'])).toEqual([three.topic]);
        expect(await topicsOf([base, '*', '*', '*', '*'])).toEqual([]);
      });

      it('stores a bare-base topic and finds it with a one-token pattern, not with base.* (D19)', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const bare = await publish(backend, [base], '"bare"');
        const keyed = await publish(backend, [base, 'k'], '"keyed"');
        expect(bare.topic).toBe(base);
        expect((await all(backend, new TopicPattern([base]))).map((m) => [m.sequence, m.topic, m.payload])).toEqual([
          [bare.sequence, base, '"bare"'],
        ]);
        expect(sequences(await all(backend, new TopicPattern([base, '*'])))).toEqual([keyed.sequence]);
      });

      it('delivers a bare-base topic live to a one-token pattern only (D19)', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const bareSink = collectingSink();
        const keyedSink = collectingSink();
        await backend.subscribe(new TopicPattern([base]), bareSink.sink);
        await backend.subscribe(new TopicPattern([base, '*']), keyedSink.sink);
        const bare = await publish(backend, [base]);
        const keyed = await publish(backend, [base, 'k']);
        const bareSentinel = await publish(backend, [base]);
        expect(sequences(await bareSink.waitFor(2))).toEqual([bare.sequence, bareSentinel.sequence]);
        expect(sequences(await keyedSink.waitFor(1))).toEqual([keyed.sequence]);
      });

      it('treats * in a pattern as a wildcard and a stored literal * as a value only a wildcard selects (S3)', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const literal = await publish(backend, [base, '*', 'x']);
        const plain = await publish(backend, [base, 'a', 'x']);
        expect(literal.topic).toBe(`${base}.%2A.x`);
        const both = [literal.sequence, plain.sequence];
        expect(sequences(await all(backend, new TopicPattern([base, '*', 'x'])))).toEqual(both);
        expect(sequences(await all(backend, new TopicPattern([base, 'a', 'x'])))).toEqual([plain.sequence]);
        expect(sequences(await all(backend, new TopicPattern([base, 'b', 'x'])))).toEqual([]);
        expect(sequences(await all(backend, new TopicPattern([base, '*', '*'])))).toEqual(both);
      });

      it('round-trips percent-encoded tokens (., *, >, %, whitespace) and matches them by decoded value', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const tokens = [base, 'a.b', 'x*y', '>', '50%', 'two words', 'tab\there'];
        const stored = await publish(backend, tokens, '"encoded"');
        await publish(backend, [base, 'a', 'b', 'x*y', '>', '50%', 'two words']); // the dot must not split tokens
        expect(stored.topic).toBe(`${base}.a%2Eb.x%2Ay.%3E.50%25.two%20words.tab%09here`);
        const literal = only(await all(backend, new TopicPattern(tokens)));
        expect([literal.sequence, literal.topic, literal.payload]).toEqual([stored.sequence, stored.topic, '"encoded"']);
        const wildcard = await all(backend, new TopicPattern([base, '*', 'x*y', '*', '50%', '*', '*']));
        expect(sequences(wildcard)).toEqual([stored.sequence]);
      });

      it('stores non-ASCII tokens unencoded and matches them', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const stored = await publish(backend, [base, 'Zürich', '東京']);
        expect(stored.topic).toBe(`${base}.Zürich.東京`);
        expect(sequences(await all(backend, new TopicPattern([base, 'Zürich', '*'])))).toEqual([stored.sequence]);
        expect(sequences(await all(backend, new TopicPattern([base, 'Zurich', '*'])))).toEqual([]);
      });
    });

    describe('captureHistoryBound', () => {
      it('is 0 for a base that was never used', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        expect(await backend.captureHistoryBound(new TopicPattern([base, '*']))).toBe(0);
      });

      it('equals the last sequence stored in the base', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        let last = 0;
        for (const key of ['a', 'b', 'a']) last = (await publish(backend, [base, key])).sequence;
        expect(await backend.captureHistoryBound(new TopicPattern([base, '*']))).toBe(last);
        expect(await backend.captureHistoryBound(new TopicPattern([base, 'zzz']))).toBe(last);
      });
    });

    describe('subscribe', () => {
      it('captures H as the last sequence stored before subscribing', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        await publish(backend, [base, 'a']);
        const last = await publish(backend, [base, 'b']);
        const subscription = await backend.subscribe(new TopicPattern([base, '*']), collectingSink().sink);
        expect(subscription.historyBound).toBe(last.sequence);
      });

      it('has H = 0 on a base that was never used', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const subscription = await backend.subscribe(new TopicPattern([base, '*']), collectingSink().sink);
        expect(subscription.historyBound).toBe(0);
      });

      it('delivers every later matching message exactly once, in order, and nothing at or below H', async () => {
        const { backend, bases } = await setup(2);
        const [base, other] = bases as [string, string];
        await publish(backend, [base, 'a']);
        await publish(backend, [base, 'b']);
        const sink = collectingSink();
        const subscription = await backend.subscribe(new TopicPattern([base, '*']), sink.sink);
        const expected: number[] = [];
        expected.push((await publish(backend, [base, 'a'])).sequence);
        await publish(backend, [base, 'a', 'deeper']);
        await publish(backend, [other, 'a']);
        expected.push((await publish(backend, [base, 'c'])).sequence);
        await publish(backend, [base]);
        expected.push((await publish(backend, [base, 'a'])).sequence);
        // The last expected message is also a sentinel: delivery is ordered, so anything wrongly
        // delivered from the publishes before it has arrived by now.
        const received = await sink.waitFor(expected.length);
        expect(sequences(received)).toEqual(expected);
        for (const message of received) expect(message.sequence).toBeGreaterThan(subscription.historyBound);
        expect(received.map((m) => m.topic)).toEqual([`${base}.a`, `${base}.c`, `${base}.a`]);
      });

      it('delivers payload, metadata and timestamp live as fetchBatch returns them', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const sink = collectingSink();
        await backend.subscribe(new TopicPattern([base, '*']), sink.sink);
        const metadata = { aviso_identifier: '{"city":"Zürich"}', spatial_bbox: '1.0,2.0,3.0,4.0' };
        await publish(backend, [base, 'a'], '{"x":"ü"}', metadata);
        const live = only(await sink.waitFor(1));
        const stored = only(await all(backend, new TopicPattern([base, 'a'])));
        expect(live).toEqual(stored);
        expect(live.metadata).toEqual(metadata);
      });

      it('fans out: two subscriptions with different patterns on one base each get every message they match', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const wide = collectingSink();
        const narrow = collectingSink();
        await backend.subscribe(new TopicPattern([base, '*', '*']), wide.sink);
        await backend.subscribe(new TopicPattern([base, 'od', '*']), narrow.sink);
        const published: { sequence: number; key: string }[] = [];
        for (const key of ['od', 'rd', 'od', 'rd', 'od']) {
          published.push({ key, sequence: (await publish(backend, [base, key, '1'])).sequence });
        }
        expect(sequences(await wide.waitFor(5))).toEqual(published.map((p) => p.sequence));
        const narrowExpected = published.filter((p) => p.key === 'od').map((p) => p.sequence);
        expect(sequences(await narrow.waitFor(3))).toEqual(narrowExpected);
        // the narrow subscription's last match is the last publish, so nothing else is on its way
        expect(narrow.received).toHaveLength(3);
      });

      it('fans out: two subscriptions with the same pattern both get every message', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const first = collectingSink();
        const second = collectingSink();
        const pattern = new TopicPattern([base, '*']);
        await backend.subscribe(pattern, first.sink);
        await backend.subscribe(pattern, second.sink);
        const published: number[] = [];
        for (const key of ['a', 'b', 'c', 'd']) published.push((await publish(backend, [base, key])).sequence);
        expect(sequences(await first.waitFor(4))).toEqual(published);
        expect(sequences(await second.waitFor(4))).toEqual(published);
      });

      it('gives a later subscription on a busy base a clean split: at or below H is history, above is live', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        const early = collectingSink();
        await backend.subscribe(pattern, early.sink);
        const before: number[] = [];
        for (const key of ['a', 'b', 'c']) before.push((await publish(backend, [base, key])).sequence);
        const late = collectingSink();
        const lateSubscription = await backend.subscribe(pattern, late.sink);
        const after = [(await publish(backend, [base, 'd'])).sequence, (await publish(backend, [base, 'e'])).sequence];
        const everything = [...before, ...after];
        const H = lateSubscription.historyBound;
        expect(H).toBeGreaterThanOrEqual(0);
        expect(H).toBeLessThanOrEqual(before.at(-1) as number);
        const liveExpected = everything.filter((s) => s > H);
        expect(sequences(await late.waitFor(liveExpected.length))).toEqual(liveExpected);
        expect(sequences(await all(backend, pattern, H))).toEqual(everything.filter((s) => s <= H));
        expect(sequences(await early.waitFor(everything.length))).toEqual(everything);
      });

      it('splits publishes in flight around H: each is history or live, never both, never neither', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*', '*']);
        const sink = collectingSink();
        let subscribed = false;
        let publishedBeforeSubscribe = 0;
        let signalStarted = () => {};
        const started = new Promise<void>((resolve) => (signalStarted = resolve));
        const producer = async (id: number): Promise<number[]> => {
          const mine: number[] = [];
          let afterSubscribe = 0;
          for (let i = 0; i < 80 && afterSubscribe < 8; i++) {
            const wasSubscribed = subscribed;
            mine.push((await publish(backend, [base, `p${id}`, String(i)])).sequence);
            if (wasSubscribed) afterSubscribe++;
            else if (++publishedBeforeSubscribe === 6) signalStarted();
          }
          return mine;
        };
        const producing = Promise.all([0, 1, 2].map(producer));
        await started;
        const subscription: LiveSubscription = await backend.subscribe(pattern, sink.sink);
        subscribed = true;
        const published = (await producing).flat().sort(ascending);
        const sentinel = (await publish(backend, [base, 'sentinel', 'end'])).sequence;
        const H = subscription.historyBound;
        expect(
          published.some((s) => s <= H),
          'some publishes were stored before the subscription',
        ).toBe(true);
        expect(
          published.some((s) => s > H),
          'some publishes were stored after the subscription',
        ).toBe(true);

        const liveExpected = published.filter((s) => s > H);
        const live = sequences(await sink.waitFor(liveExpected.length + 1)).slice(0, -1);
        expect(sink.received.at(-1)?.sequence).toBe(sentinel);
        const history = sequences(await all(backend, pattern, H));
        expectStrictlyAscending(live);
        expect(live.every((s) => s > H)).toBe(true);
        expect(history.every((s) => s <= H)).toBe(true);
        expect(history.filter((s) => live.includes(s))).toEqual([]);
        expect([...history, ...live].sort(ascending)).toEqual(published);
      });

      it('stops delivery on close, and close is idempotent', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        const closing = collectingSink();
        const control = collectingSink();
        const subscription = await backend.subscribe(pattern, closing.sink);
        await backend.subscribe(pattern, control.sink);
        const first = await publish(backend, [base, 'a']);
        await closing.waitFor(1);
        await control.waitFor(1);
        subscription.close();
        expect(() => subscription.close()).not.toThrow();
        const second = await publish(backend, [base, 'b']);
        expect(sequences(await control.waitFor(2))).toEqual([first.sequence, second.sequence]);
        expect(sequences(closing.received)).toEqual([first.sequence]);
        expect(closing.endCalls()).toBe(0);
      });
    });

    describe('deleteMessage', () => {
      it('deletes one notification and then reports it not_found', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const doomed = await publish(backend, [base, 'a']);
        const kept = await publish(backend, [base, 'a']);
        expect(await backend.deleteMessage(base, doomed.sequence)).toBe('deleted');
        expect(sequences(await all(backend, new TopicPattern([base, '*'])))).toEqual([kept.sequence]);
        expect(await backend.deleteMessage(base, doomed.sequence)).toBe('not_found');
      });

      it('accepts the stream key in any case', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const upper = await publish(backend, [base, 'a']);
        const mixed = await publish(backend, [base, 'b']);
        expect(await backend.deleteMessage(base.toUpperCase(), upper.sequence)).toBe('deleted');
        const mixedCase = base.charAt(0).toUpperCase() + base.slice(1);
        expect(await backend.deleteMessage(mixedCase, mixed.sequence)).toBe('deleted');
        expect(await all(backend, new TopicPattern([base, '*']))).toEqual([]);
      });

      it("reports not_found for another base's sequence and leaves that notification alone", async () => {
        const { backend, bases } = await setup(2);
        const [base, other] = bases as [string, string];
        const mine = [(await publish(backend, [base, 'a'])).sequence, (await publish(backend, [base, 'b'])).sequence];
        let theirs = 0;
        for (const key of ['a', 'b', 'c']) theirs = (await publish(backend, [other, key])).sequence;
        expect(mine).not.toContain(theirs);
        expect(await backend.deleteMessage(base, theirs)).toBe('not_found');
        expect(sequences(await all(backend, new TopicPattern([other, '*']))).at(-1)).toBe(theirs);
        expect(sequences(await all(backend, new TopicPattern([base, '*'])))).toEqual(mine);
      });

      it('reports not_found for a stream that does not exist', async () => {
        const { backend } = await setup(0);
        expect(await backend.deleteMessage(factory.uniqueBase(), 1)).toBe('not_found');
      });

      it('reports not_found for a sequence never assigned in an existing stream', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const stored = await publish(backend, [base, 'a']);
        expect(await backend.deleteMessage(base, stored.sequence + 1000)).toBe('not_found');
      });

      it('deletes a bare-base notification through its stream key (D19)', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const bare = await publish(backend, [base]);
        expect(await backend.deleteMessage(base, bare.sequence)).toBe('deleted');
        expect(await all(backend, new TopicPattern([base]))).toEqual([]);
      });
    });

    describe('wipeStream', () => {
      it('removes every notification of one base and leaves other bases, even one with the same prefix', async () => {
        const base = factory.uniqueBase();
        const other = factory.uniqueBase();
        const sibling = `${base}_2`;
        const backend = await setupFor([base, other, sibling]);
        await publish(backend, [base, 'a']);
        await publish(backend, [base, 'b', 'c']);
        await publish(backend, [base]);
        const otherStored = (await publish(backend, [other, 'a'])).sequence;
        const siblingStored = (await publish(backend, [sibling, 'a'])).sequence;
        expect(await backend.wipeStream(base.toUpperCase())).toBe('wiped');
        expect(await all(backend, new TopicPattern([base, '*']))).toEqual([]);
        expect(await all(backend, new TopicPattern([base, '*', '*']))).toEqual([]);
        expect(await all(backend, new TopicPattern([base]))).toEqual([]);
        expect(sequences(await all(backend, new TopicPattern([other, '*'])))).toEqual([otherStored]);
        expect(sequences(await all(backend, new TopicPattern([sibling, '*'])))).toEqual([siblingStored]);
      });

      it('reports not_found for a base that never stored anything, and wiped for an emptied one (D30)', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        expect(await backend.wipeStream(factory.uniqueBase())).toBe('not_found');
        await publish(backend, [base, 'a']);
        expect(await backend.wipeStream(base)).toBe('wiped');
        expect(await backend.wipeStream(base)).toBe('wiped');
        expect(await backend.wipeStream(`${base}_zz`)).toBe('not_found');
      });

      it('accepts the stream name in any case (D22)', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        await publish(backend, [base, 'a']);
        await backend.wipeStream(base);
        expect(await all(backend, new TopicPattern([base, '*']))).toEqual([]);
      });

      it('keeps sequence numbering: H does not go back and the next publish gets a higher sequence', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        const last = await publish(backend, [base, 'a']);
        await backend.wipeStream(base.toUpperCase());
        expect(await backend.captureHistoryBound(pattern)).toBeGreaterThanOrEqual(last.sequence);
        const next = await publish(backend, [base, 'a']);
        expect(next.sequence).toBeGreaterThan(last.sequence);
        expect(sequences(await all(backend, pattern))).toEqual([next.sequence]);
      });

      it('keeps the base usable for live subscriptions opened before and after the wipe', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        const before = collectingSink();
        await backend.subscribe(pattern, before.sink);
        const first = await publish(backend, [base, 'a']);
        await before.waitFor(1);
        await backend.wipeStream(base.toUpperCase());
        const after = collectingSink();
        const afterSubscription = await backend.subscribe(pattern, after.sink);
        expect(afterSubscription.historyBound).toBeGreaterThanOrEqual(first.sequence);
        const second = await publish(backend, [base, 'b']);
        expect(sequences(await before.waitFor(2))).toEqual([first.sequence, second.sequence]);
        expect(sequences(await after.waitFor(1))).toEqual([second.sequence]);
        expect(before.endCalls() + after.endCalls()).toBe(0);
      });
    });

    describe('names no stream could have (D33)', () => {
      const hostileNames = [
        ['a 300-byte name', 'n'.repeat(300)],
        ['a 5,000-byte name', 'N'.repeat(5000)],
        ['a path separator', 'a/b'],
        ['a backslash', 'a\\b'],
        ['non-ASCII', 'é'.repeat(200)],
      ];

      it.each(hostileNames)('wipeStream and deleteMessage with %s are not_found, and the backend keeps working', async (_what, name) => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const pattern = new TopicPattern([base, '*']);
        const live = collectingSink();
        await backend.subscribe(pattern, live.sink);
        expect(await backend.wipeStream(name)).toBe('not_found');
        expect(await backend.deleteMessage(name, 1)).toBe('not_found');
        const after = await publish(backend, [base, 'a']);
        expect(sequences(await live.waitFor(1))).toEqual([after.sequence]);
        expect(live.endCalls()).toBe(0);
      });
    });

    describe('wipeAll', () => {
      it('removes the notifications of every base', async () => {
        const { backend, bases } = await setup(2);
        const [base, other] = bases as [string, string];
        await publish(backend, [base, 'a']);
        await publish(backend, [base]);
        await publish(backend, [other, 'a', 'b']);
        await backend.wipeAll();
        expect(await all(backend, new TopicPattern([base, '*']))).toEqual([]);
        expect(await all(backend, new TopicPattern([base]))).toEqual([]);
        expect(await all(backend, new TopicPattern([other, '*', '*']))).toEqual([]);
      });

      it('keeps sequence numbering and the bases writable', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const last = await publish(backend, [base, 'a']);
        await backend.wipeAll();
        const next = await publish(backend, [base, 'a']);
        expect(next.sequence).toBeGreaterThan(last.sequence);
        expect(sequences(await all(backend, new TopicPattern([base, '*'])))).toEqual([next.sequence]);
      });
    });

    describe('applySchemas (a configuration reload, docs/design/rules/browser.md §5)', () => {
      it('keeps stored notifications, numbering and live sinks of the bases it keeps or drops', async () => {
        const { backend, bases } = await setup(2);
        const [kept, dropped] = bases as [string, string];
        const added = factory.uniqueBase();
        const live = collectingSink();
        await backend.subscribe(new TopicPattern([kept, '*']), live.sink);
        const first = await publish(backend, [kept, 'a']);
        const droppedFirst = await publish(backend, [dropped, 'a']);
        expect(sequences(await live.waitFor(1))).toEqual([first.sequence]);

        await backend.applySchemas([
          { eventType: kept, base: kept, bareTopics: true, storagePolicy: { allow_duplicates: true } },
          { eventType: added, base: added, bareTopics: false, storagePolicy: { allow_duplicates: true } },
        ]);

        const second = await publish(backend, [kept, 'a']);
        expect(second.sequence).toBeGreaterThan(first.sequence);
        expect(sequences(await live.waitFor(2))).toEqual([first.sequence, second.sequence]);
        expect(live.endCalls()).toBe(0);
        expect(sequences(await all(backend, new TopicPattern([kept, '*'])))).toEqual([first.sequence, second.sequence]);
        expect(sequences(await all(backend, new TopicPattern([dropped, '*'])))).toEqual([droppedFirst.sequence]);
        const onAdded = await publish(backend, [added, 'x']);
        expect(onAdded.sequence).toBe(1);
        expect(sequences(await all(backend, new TopicPattern([added, '*'])))).toEqual([1]);
      });
    });

    describe('stats and shutdown', () => {
      it('reports numeric counters', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        await publish(backend, [base, 'a']);
        const stats = await backend.stats();
        for (const value of Object.values(stats)) expect(typeof value).toBe('number');
      });

      it('ends every live sink on shutdown', async () => {
        const { backend, bases } = await setup(1);
        const [base] = bases as [string];
        const first = collectingSink();
        const second = collectingSink();
        await backend.subscribe(new TopicPattern([base, '*']), first.sink);
        await backend.subscribe(new TopicPattern([base, 'a']), second.sink);
        await shutdown(backend);
        await first.ended();
        await second.ended();
        expect(first.endCalls()).toBe(1);
        expect(second.endCalls()).toBe(1);
      });
    });

    describeIdempotencyRecords(async () => {
      const { backend, bases } = await setup(1);
      return { backend, base: bases[0] as string };
    });
  });
}
