import { describe, expect, it } from 'vitest';
import { FLUSH_SLICE_MS, scheduleFlush } from '../../../src/streaming/flush-turn.js';

/**
 * A turn's flush is bounded in time: a large fan-out is written in slices, and what the event loop
 * has to do meanwhile runs between them; every connection is still flushed once, in order.
 */

function busy(microseconds: number): void {
  const until = performance.now() + microseconds / 1000;
  while (performance.now() < until);
}

describe('flush turns', () => {
  it('flushes every connection once, in order, in slices that let other work run between them', async () => {
    const flushed: number[] = [];
    const between: number[] = [];
    const count = 4_000;
    for (let i = 0; i < count; i++) scheduleFlush({ flush: () => (busy(20), flushed.push(i)) });
    // Scheduled after the flush: it runs once the first slice gave way.
    setImmediate(() => between.push(flushed.length));
    while (flushed.length < count) await new Promise((resolve) => setImmediate(resolve));
    expect(flushed).toEqual(Array.from({ length: count }, (_, i) => i));
    // 4,000 × 20 µs is 80 ms of flushing: more than one slice of FLUSH_SLICE_MS.
    expect(between).toHaveLength(1);
    expect(between[0]).toBeGreaterThan(0);
    expect(between[0]).toBeLessThan(count);
    expect(FLUSH_SLICE_MS).toBeLessThan(80);
  });

  it('a connection scheduled while a flush is spread over turns waits behind the ones before it', async () => {
    const flushed: string[] = [];
    for (let i = 0; i < 3_000; i++) scheduleFlush({ flush: () => (busy(20), flushed.push('early')) });
    await new Promise((resolve) => setImmediate(resolve));
    scheduleFlush({ flush: () => flushed.push('late') });
    while (!flushed.includes('late')) await new Promise((resolve) => setImmediate(resolve));
    expect(flushed.indexOf('late')).toBe(3_000);
  });
});
