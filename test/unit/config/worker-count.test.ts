import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { resolveWorkerCount } from '../../../src/config/worker-count.js';

describe('resolveWorkerCount (application.workers, D36)', () => {
  it('takes a number as it is', () => {
    expect(resolveWorkerCount(1, () => 16)).toBe(1);
    expect(resolveWorkerCount(6, () => 2)).toBe(6);
  });

  it('resolves auto to the usable CPUs', () => {
    expect(resolveWorkerCount('auto', () => 12)).toBe(12);
  });

  it('reads the usable CPUs from the affinity mask by default', () => {
    expect(resolveWorkerCount('auto')).toBe(availableParallelism());
  });

  it('never resolves auto below one process', () => {
    expect(resolveWorkerCount('auto', () => 0)).toBe(1);
  });
});
