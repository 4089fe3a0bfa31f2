import { describe, expect, it } from 'vitest';
import { MAX_RESTART_DELAY_MS, STABLE_RUN_MS, quickExitsAfter, restartDelayMs } from '../../../src/runtime/restart-policy.js';

describe('worker replacement (D36)', () => {
  it('replaces a worker that had been running at once', () => {
    expect(quickExitsAfter(5, STABLE_RUN_MS)).toBe(1);
    expect(restartDelayMs(1)).toBe(0);
  });

  it('backs off a worker that keeps dying soon after its start: 1 s, 2 s, 4 s, … at most 30 s', () => {
    let quickExits = 0;
    const delays: number[] = [];
    for (let exit = 0; exit < 9; exit++) {
      quickExits = quickExitsAfter(quickExits, 500);
      delays.push(restartDelayMs(quickExits));
    }
    expect(delays).toEqual([0, 1_000, 2_000, 4_000, 8_000, 16_000, MAX_RESTART_DELAY_MS, MAX_RESTART_DELAY_MS, MAX_RESTART_DELAY_MS]);
  });

  it('forgets the crash loop once a worker ran long enough', () => {
    const looping = quickExitsAfter(quickExitsAfter(quickExitsAfter(0, 10), 10), 10);
    expect(restartDelayMs(looping)).toBeGreaterThan(0);
    expect(restartDelayMs(quickExitsAfter(looping, STABLE_RUN_MS + 1))).toBe(0);
  });
});
