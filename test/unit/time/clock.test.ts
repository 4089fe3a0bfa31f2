import { describe, expect, it } from 'vitest';
import { MAX_TIMER_DELAY_MS, setTimeoutAt, systemClock } from '../../../src/time/clock.js';
import { ManualClock } from '../../support/manual-clock.js';

describe('setTimeoutAt', () => {
  it('fires once when the clock reaches the instant, not before', () => {
    const clock = new ManualClock();
    const fired: number[] = [];
    setTimeoutAt(clock, clock.now() + 5000, () => fired.push(clock.now()));
    clock.advance(4999);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([Date.UTC(2026, 2, 1, 12, 0, 5)]);
    clock.advance(60_000);
    expect(fired).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('an instant already past fires on the next timer turn, never synchronously', () => {
    const clock = new ManualClock();
    let fired = 0;
    setTimeoutAt(clock, clock.now() - 10_000, () => fired++);
    expect(fired).toBe(0);
    clock.advance(0);
    expect(fired).toBe(1);
  });

  it('reaches an instant beyond the longest Node timer delay in steps, without firing early', () => {
    const clock = new ManualClock();
    const at = clock.now() + 3 * MAX_TIMER_DELAY_MS + 7;
    let fired = 0;
    setTimeoutAt(clock, at, () => fired++);
    clock.advance(3 * MAX_TIMER_DELAY_MS);
    expect(fired).toBe(0);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(7);
    expect(fired).toBe(1);
  });

  it('cancel stops it, also after it re-armed', () => {
    const clock = new ManualClock();
    let fired = 0;
    const handle = setTimeoutAt(clock, clock.now() + 2 * MAX_TIMER_DELAY_MS, () => fired++);
    clock.advance(MAX_TIMER_DELAY_MS);
    handle.cancel();
    clock.advance(2 * MAX_TIMER_DELAY_MS);
    expect(fired).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('with the system clock, a far instant does not fire at once (Node would cap the delay to 1 ms)', async () => {
    let fired = 0;
    const handle = setTimeoutAt(systemClock, Date.now() + 365 * 86_400_000, () => fired++);
    await new Promise((resolve) => setTimeout(resolve, 20));
    handle.cancel();
    expect(fired).toBe(0);
  });

  it('the system clock honours a timeout longer than Node allows (a 30-day watch lifetime)', async () => {
    let fired = 0;
    const handle = systemClock.setTimeout(() => fired++, 30 * 86_400_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    handle.cancel();
    expect(fired).toBe(0);
  });

  it('the system clock honours an interval longer than Node allows (no 1 ms heartbeat storm)', async () => {
    let fired = 0;
    const handle = systemClock.setInterval(() => fired++, 30 * 86_400_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    handle.cancel();
    expect(fired).toBe(0);
  });

  it('the system clock still fires ordinary delays', async () => {
    const fired = await new Promise<number>((resolve) => {
      const started = Date.now();
      systemClock.setTimeout(() => resolve(Date.now() - started), 5);
    });
    expect(fired).toBeGreaterThanOrEqual(4);
  });
});
