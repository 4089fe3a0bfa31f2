import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineTimer } from '../../../../src/backend/jetstream/deadline-timer.js';

describe('DeadlineTimer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('calls back once the deadline has passed, in the turn after the timer (once I/O was read)', () => {
    const timer = new DeadlineTimer();
    const calls: string[] = [];
    timer.set(performance.now() + 100, () => calls.push('passed'));
    vi.advanceTimersByTime(99);
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1);
    // The timeout fired; the callback waits for the immediate that follows the poll phase.
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual(['passed']);
    vi.runAllTimers();
    expect(calls).toEqual(['passed']);
  });

  it('keeps a pending deadline set again, replaces a different one, and cancels', () => {
    const timer = new DeadlineTimer();
    const calls: string[] = [];
    const start = performance.now();
    timer.set(start + 100, () => calls.push('first'));
    timer.set(start + 100, () => calls.push('same deadline'));
    vi.advanceTimersByTime(50);
    timer.set(start + 200, () => calls.push('later'));
    vi.advanceTimersByTime(60);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(90);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual(['later']);

    timer.set(performance.now() + 10, () => calls.push('cancelled'));
    timer.cancel();
    timer.set(performance.now() + 10, () => calls.push('unset'));
    timer.set(undefined, () => calls.push('never'));
    vi.runAllTimers();
    expect(calls).toEqual(['later']);
  });

  it('can be cancelled between the timeout and the callback', () => {
    const timer = new DeadlineTimer();
    const calls: string[] = [];
    timer.set(performance.now() + 10, () => calls.push('passed'));
    vi.advanceTimersByTime(10);
    timer.cancel();
    vi.runAllTimers();
    expect(calls).toEqual([]);
  });
});
