import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoredNotification } from '../../../../src/backend/backend.js';
import { LiveGapFiller, type GapCounts, type GapFillerLimits } from '../../../../src/backend/jetstream/live-gap-filler.js';

const GAP_WAIT_MS = 100;
const ROOMY: GapFillerLimits = {
  maxAnnouncements: 1_000_000,
  maxAnnouncedChars: Number.MAX_SAFE_INTEGER,
  maxAnnouncementAgeMs: Number.MAX_SAFE_INTEGER,
  gapWaitMs: GAP_WAIT_MS,
};

/** `payload` tells the stream's copy from an announcement's. */
const fromStream = (sequence: number): StoredNotification => ({ sequence, topic: 'mars.od', payload: 'stream', timestampNs: 1n });
const announced = (sequence: number, payload = 'announcement'): StoredNotification => ({
  sequence,
  topic: 'mars.od',
  payload,
  timestampNs: 2n,
});

function filler(startAfter = 0, limits: GapFillerLimits = ROOMY) {
  const delivered: StoredNotification[] = [];
  const counts: GapCounts = { filled: 0, skipped: 0 };
  const gaps = new LiveGapFiller(startAfter, limits, counts, (notification) => delivered.push(notification));
  return { gaps, counts, delivered, sequences: () => delivered.map((n) => n.sequence) };
}

describe('LiveGapFiller', () => {
  it('delivers consecutive stream messages at once, nothing held', () => {
    const { gaps, sequences } = filler(4);
    for (const sequence of [5, 6, 7]) gaps.read(fromStream(sequence), 0);
    expect(sequences()).toEqual([5, 6, 7]);
    expect(gaps.lastDelivered).toBe(7);
    expect(gaps.holdDeadline).toBeUndefined();
  });

  it('fills a gap from an announcement that came first, in order, and counts it', () => {
    const { gaps, counts, delivered } = filler();
    gaps.read(fromStream(1), 0);
    gaps.announced(announced(2), 1);
    gaps.announced(announced(3), 1);
    gaps.read(fromStream(4), 2);
    expect(delivered.map((n) => [n.sequence, n.payload])).toEqual([
      [1, 'stream'],
      [2, 'announcement'],
      [3, 'announcement'],
      [4, 'stream'],
    ]);
    expect(counts).toEqual({ filled: 2, skipped: 0 });
  });

  it('holds a stream message above a missing sequence until its announcement arrives', () => {
    const { gaps, sequences } = filler();
    gaps.read(fromStream(1), 0);
    gaps.read(fromStream(3), 10);
    gaps.read(fromStream(4), 20);
    expect(sequences()).toEqual([1]);
    // H of a watcher registering now: the held messages are still to come live.
    expect(gaps.lastDelivered).toBe(1);
    expect(gaps.holdDeadline).toBe(10 + GAP_WAIT_MS);
    gaps.announced(announced(2), 50);
    expect(sequences()).toEqual([1, 2, 3, 4]);
    expect(gaps.holdDeadline).toBeUndefined();
  });

  it('skips what nobody announced once the held message has waited gapWaitMs, then ignores a late announcement', () => {
    const { gaps, counts, sequences } = filler();
    gaps.read(fromStream(1), 0);
    gaps.announced(announced(4), 5);
    gaps.read(fromStream(5), 10);
    gaps.expire(10 + GAP_WAIT_MS - 1);
    expect(sequences()).toEqual([1]);
    gaps.expire(10 + GAP_WAIT_MS);
    // 2 and 3 are given up; 4 was announced, so it is delivered, not skipped.
    expect(sequences()).toEqual([1, 4, 5]);
    expect(counts).toEqual({ filled: 1, skipped: 2 });
    gaps.announced(announced(2), 200);
    gaps.read(fromStream(6), 210);
    expect(sequences()).toEqual([1, 4, 5, 6]);
  });

  it('judges a wait over only in expire, never while taking a read or an announcement, however late', () => {
    // A burst: the announcements of the superseded ones are queued right behind each other, and
    // delivering each one takes time; none of them may be given up while the next is at hand.
    const { gaps, counts, sequences } = filler();
    gaps.read(fromStream(5), 0);
    gaps.announced(announced(1), 10 * GAP_WAIT_MS);
    gaps.announced(announced(2), 20 * GAP_WAIT_MS);
    gaps.read(fromStream(6), 20 * GAP_WAIT_MS);
    gaps.announced(announced(4), 30 * GAP_WAIT_MS);
    expect(sequences()).toEqual([1, 2]);
    gaps.expire(30 * GAP_WAIT_MS);
    expect(sequences()).toEqual([1, 2, 4, 5, 6]);
    expect(counts).toEqual({ filled: 3, skipped: 1 });
  });

  it('bounds each held message by its own read time, so later ones do not wait twice', () => {
    const { gaps, sequences } = filler();
    gaps.read(fromStream(2), 0);
    gaps.read(fromStream(4), 60);
    gaps.expire(GAP_WAIT_MS);
    expect(sequences()).toEqual([2]);
    expect(gaps.holdDeadline).toBe(60 + GAP_WAIT_MS);
    gaps.expire(60 + GAP_WAIT_MS);
    expect(sequences()).toEqual([2, 4]);
  });

  it('prefers the stream copy of a sequence announced as well, and never delivers a sequence twice', () => {
    const { gaps, delivered } = filler();
    gaps.announced(announced(1), 0);
    gaps.announced(announced(1, 'again'), 0);
    gaps.read(fromStream(1), 1);
    gaps.read(fromStream(1), 2);
    gaps.announced(announced(1), 3);
    expect(delivered.map((n) => [n.sequence, n.payload])).toEqual([[1, 'stream']]);
    expect(gaps.announcementCount).toBe(0);
  });

  it('ignores announcements at or below the start and re-reads after a resubscribe', () => {
    const { gaps, sequences } = filler(10);
    gaps.announced(announced(9), 0);
    gaps.announced(announced(10), 0);
    gaps.read(fromStream(10), 0);
    gaps.read(fromStream(11), 0);
    gaps.read(fromStream(11), 0);
    expect(sequences()).toEqual([11]);
    expect(gaps.announcementCount).toBe(0);
  });

  it('evicts the oldest announcements beyond maxAnnouncements', () => {
    const { gaps, counts, sequences } = filler(0, { ...ROOMY, maxAnnouncements: 2 });
    for (const sequence of [2, 3, 4]) gaps.announced(announced(sequence), sequence);
    expect(gaps.announcementCount).toBe(2);
    gaps.read(fromStream(5), 10);
    gaps.expire(10 + GAP_WAIT_MS);
    expect(sequences()).toEqual([3, 4, 5]);
    expect(counts).toEqual({ filled: 2, skipped: 2 });
  });

  it('evicts the oldest announcements beyond maxAnnouncedChars (payload, topic and metadata)', () => {
    // Each announcement: 'announcement' (12) + 'mars.od' (7) + 'k' + 'vv' (3) = 22 characters.
    const withMetadata = (sequence: number) => ({ ...announced(sequence), metadata: { k: 'vv' } });
    const { gaps } = filler(0, { ...ROOMY, maxAnnouncedChars: 44 });
    gaps.announced(withMetadata(1), 0);
    gaps.announced(withMetadata(2), 0);
    expect(gaps.announcementCount).toBe(2);
    gaps.announced(withMetadata(3), 0);
    expect(gaps.announcementCount).toBe(2);
  });

  it('drops announcements older than maxAnnouncementAgeMs when a newer one arrives or time passes', () => {
    const { gaps } = filler(0, { ...ROOMY, maxAnnouncementAgeMs: 1_000 });
    gaps.announced(announced(5), 0);
    gaps.announced(announced(6), 500);
    gaps.announced(announced(7), 1_001);
    expect(gaps.announcementCount).toBe(2);
    gaps.expire(1_501);
    expect(gaps.announcementCount).toBe(1);
  });

  it('forgets everything on clear', () => {
    const { gaps, sequences } = filler();
    gaps.announced(announced(2), 0);
    gaps.read(fromStream(3), 0);
    gaps.clear();
    expect(gaps.announcementCount).toBe(0);
    expect(gaps.holdDeadline).toBeUndefined();
    gaps.expire(10_000);
    expect(sequences()).toEqual([]);
  });
});

/** What happened to one sequence: read from the stream, announced by its accepting process, both, or neither. */
type Fate = 'read' | 'announced' | 'both' | 'lost';

interface Scenario {
  readonly startAfter: number;
  readonly fates: readonly Fate[];
  /** Pause before each stream read (ms), in units of a fifth of the gap wait. */
  readonly readPauses: readonly number[];
  /** When each announcement arrives, as a fraction of the scenario's span. */
  readonly announceAt: readonly number[];
  /** After the read at a position, the consumer reads the last three again (as after a resubscribe). */
  readonly rereadAfter: readonly boolean[];
}

const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    startAfter: fc.integer({ min: 0, max: 5 }),
    fates: fc.array(fc.constantFrom<Fate>('read', 'announced', 'announced', 'both', 'lost'), { minLength: 1, maxLength: 40 }),
    readPauses: fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 40, maxLength: 40 }),
    announceAt: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 40, maxLength: 40 }),
    rereadAfter: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
  })
  .map((s) => ({ ...s, fates: [...s.fates.slice(0, -1), s.fates.at(-1) === 'both' ? 'both' : 'read'] as Fate[] }));

interface Event {
  readonly at: number;
  /** Among events at the same time: stream reads in their order, announcements after. */
  readonly order: number;
  readonly apply: (gaps: LiveGapFiller, now: number) => void;
}

/** Plays a scenario through a filler, expiring held messages at their deadlines as a feed's timer does. */
function play(s: Scenario) {
  const sequenceAt = (index: number) => s.startAfter + 1 + index;
  const readIndexes = s.fates.flatMap((fate, index) => (fate === 'read' || fate === 'both' ? [index] : []));
  const readAt = new Map<number, number>();
  let clock = 0;
  const events: Event[] = [];
  readIndexes.forEach((index, position) => {
    clock += ((s.readPauses[position] ?? 0) * GAP_WAIT_MS) / 5;
    readAt.set(sequenceAt(index), clock);
    events.push({ at: clock, order: position, apply: (gaps, now) => gaps.read(fromStream(sequenceAt(index)), now) });
    if (s.rereadAfter[position] === true) {
      for (const earlier of readIndexes.slice(Math.max(0, position - 2), position + 1)) {
        events.push({ at: clock, order: position + 0.5, apply: (gaps, now) => gaps.read(fromStream(sequenceAt(earlier)), now) });
      }
    }
  });
  const span = clock + 3 * GAP_WAIT_MS;
  const announcedAt = new Map<number, number>();
  s.fates.forEach((fate, index) => {
    if (fate !== 'announced' && fate !== 'both') return;
    const at = Math.round((s.announceAt[index] ?? 0) * span);
    announcedAt.set(sequenceAt(index), at);
    events.push({ at, order: 1_000, apply: (gaps, now) => gaps.announced(announced(sequenceAt(index)), now) });
  });
  // A stale announcement of a sequence at or below the start is always there, to be ignored.
  if (s.startAfter > 0) events.push({ at: 0, order: 1_000, apply: (gaps, now) => gaps.announced(announced(s.startAfter), now) });
  events.sort((a, b) => a.at - b.at || a.order - b.order);

  const { gaps, counts, delivered } = filler(s.startAfter);
  const expireUntil = (now: number) => {
    for (let deadline = gaps.holdDeadline; deadline !== undefined && deadline <= now; deadline = gaps.holdDeadline) {
      gaps.expire(deadline);
    }
  };
  for (const event of events) {
    expireUntil(event.at);
    event.apply(gaps, event.at);
  }
  expireUntil(Number.MAX_SAFE_INTEGER);
  return { delivered, counts, readAt, announcedAt, gaps };
}

describe('LiveGapFiller: any interleaving of stream reads (with gaps and re-reads) and announcements', () => {
  it('delivers ascending, without duplicates, every stream message and every announcement in time, nothing else', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { delivered, counts, readAt, announcedAt, gaps } = play(s);
        const sequences = delivered.map((n) => n.sequence);
        for (let i = 1; i < sequences.length; i++) expect(sequences[i]).toBeGreaterThan(sequences[i - 1] as number);
        expect(sequences.every((sequence) => sequence > s.startAfter)).toBe(true);

        // Every message read from the stream is delivered, as read.
        for (const sequence of readAt.keys()) {
          expect(delivered.find((n) => n.sequence === sequence)?.payload, `stream message ${sequence}`).toBe('stream');
        }
        // Everything delivered was read or announced.
        for (const sequence of sequences) expect(readAt.has(sequence) || announcedAt.has(sequence)).toBe(true);
        // An announcement is delivered when it arrived before the stream message above it gave up
        // waiting (gapWaitMs after it was read).
        const reads = [...readAt.entries()].sort((a, b) => a[0] - b[0]);
        for (const [sequence, at] of announcedAt) {
          if (readAt.has(sequence)) continue;
          const above = reads.find(([read]) => read > sequence);
          if (above === undefined) continue; // waits for a stream message that never came: still kept
          if (at < above[1] + GAP_WAIT_MS) expect(sequences, `announced ${sequence} at ${at}`).toContain(sequence);
        }

        const last = sequences.at(-1) as number;
        expect(last).toBe(Math.max(...readAt.keys()));
        expect(gaps.lastDelivered).toBe(last);
        expect(counts.filled).toBe(delivered.filter((n) => n.payload === 'announcement').length);
        expect(counts.skipped).toBe(last - s.startAfter - delivered.length);
        expect(gaps.holdDeadline).toBeUndefined();
      }),
      { numRuns: 1_000 },
    );
  });
});
