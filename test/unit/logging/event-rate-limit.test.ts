import { describe, expect, it } from 'vitest';
import { EventRateLimit } from '../../../src/logging/event-rate-limit.js';

/** D45: at most N lines a second of each client-error event, the rest counted and reported. */

function limiter(linesPerSecond: number) {
  let now = 1_000_000;
  const timers: { due: number; run: () => void }[] = [];
  const reports: [string, number][] = [];
  const limit = new EventRateLimit({
    linesPerSecond,
    report: (eventName, lines) => reports.push([eventName, lines]),
    now: () => now,
    schedule: (run, ms) => timers.push({ due: now + ms, run }),
  });
  const advance = (ms: number): void => {
    now += ms;
    for (const timer of timers.filter((t) => t.due <= now)) {
      timers.splice(timers.indexOf(timer), 1);
      timer.run();
    }
  };
  return { limit, reports, advance, pendingTimers: () => timers.length };
}

describe('EventRateLimit', () => {
  it('lets N lines of an event through in a second, then counts the rest and reports them once when the second ends', () => {
    const { limit, reports, advance } = limiter(3);
    const admitted = Array.from({ length: 10 }, () => limit.admit('api.request.validation.failed'));
    expect(admitted).toEqual([true, true, true, false, false, false, false, false, false, false]);
    expect(limit.suppressedLines).toBe(7);
    advance(999);
    expect(reports).toEqual([]);
    advance(1);
    expect(reports).toEqual([['api.request.validation.failed', 7]]);
  });

  it('counts each event on its own', () => {
    const { limit, reports, advance } = limiter(1);
    expect([limit.admit('a'), limit.admit('b'), limit.admit('a'), limit.admit('b'), limit.admit('b')]).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    advance(1000);
    expect(reports).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });

  it('starts a new second with N lines again, and reports nothing for a second that held nothing back', () => {
    const { limit, reports, advance, pendingTimers } = limiter(2);
    limit.admit('e');
    limit.admit('e');
    limit.admit('e');
    advance(1000);
    expect([limit.admit('e'), limit.admit('e'), limit.admit('e')]).toEqual([true, true, false]);
    advance(1000);
    expect([limit.admit('e'), limit.admit('e')]).toEqual([true, true]);
    advance(1000);
    expect(reports).toEqual([
      ['e', 1],
      ['e', 1],
    ]);
    expect(pendingTimers()).toBe(0);
    expect(limit.suppressedLines).toBe(2);
  });

  it('holds one timer per second that held lines back, whatever the flood', () => {
    const { limit, pendingTimers } = limiter(5);
    for (let i = 0; i < 100_000; i++) limit.admit('api.request.parse.failed');
    expect(pendingTimers()).toBe(1);
    expect(limit.suppressedLines).toBe(99_995);
  });
});
