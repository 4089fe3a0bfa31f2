import { describe, expect, it } from 'vitest';
import { DueQueue } from '../../../src/streaming/due-queue.js';
import { ManualClock } from '../../support/manual-clock.js';

/** One timer for every stream's heartbeat and maximum duration (docs/architecture.md "Live dispatch"). */
describe('DueQueue', () => {
  it('fires each entry one period after it was added, in order, and repeats from when it fired', () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    const queue = new DueQueue<string>(clock, 1_000, true, (value) => fired.push(`${value}@${clock.now() % 100_000}`));
    const start = clock.now() % 100_000;
    queue.add('a');
    clock.advance(300);
    queue.add('b');
    clock.advance(700);
    expect(fired).toEqual([`a@${start + 1_000}`]);
    clock.advance(300);
    expect(fired).toEqual([`a@${start + 1_000}`, `b@${start + 1_300}`]);
    clock.advance(1_000);
    expect(fired.slice(2)).toEqual([`a@${start + 2_000}`, `b@${start + 2_300}`]);
  });

  it('fires a one-shot entry once', () => {
    const clock = new ManualClock();
    let fired = 0;
    const queue = new DueQueue<number>(clock, 500, false, () => fired++);
    queue.add(1);
    clock.advance(5_000);
    expect(fired).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('removes an entry in O(1), also while others are firing, and keeps no timer when empty', () => {
    const clock = new ManualClock();
    const fired: number[] = [];
    let removeSecond: () => void = () => undefined;
    const queue = new DueQueue<number>(clock, 1_000, true, (value) => {
      fired.push(value);
      if (value === 1) removeSecond(); // the first stream's heartbeat closes the second stream
    });
    const removeFirst = queue.add(1);
    removeSecond = queue.add(2);
    const removeThird = queue.add(3);
    clock.advance(1_000);
    expect(fired).toEqual([1, 3]);
    removeFirst();
    removeFirst();
    removeThird();
    expect(clock.pendingTimers).toBe(0);
    clock.advance(10_000);
    expect(fired).toEqual([1, 3]);
  });

  it('holds periods longer than a Node timer can (weeks)', () => {
    const clock = new ManualClock();
    let fired = 0;
    const queue = new DueQueue<number>(clock, 40 * 24 * 3_600_000, false, () => fired++);
    queue.add(1);
    clock.advance(39 * 24 * 3_600_000);
    expect(fired).toBe(0);
    clock.advance(24 * 3_600_000);
    expect(fired).toBe(1);
  });
});
