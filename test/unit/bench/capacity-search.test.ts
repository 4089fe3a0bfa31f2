import { describe, expect, it } from 'vitest';
import { searchCapacity, type CapacityStep } from '../../../bench/support/capacity-search.js';

/** A server that holds every rate up to `limit`; `flaky` rates fail on their first attempt only. */
function server(limit: number, flaky: readonly number[] = []): { measure: (rate: number) => Promise<CapacityStep>; rates: number[] } {
  const rates: number[] = [];
  const failedOnce = new Set<number>();
  return {
    rates,
    measure: async (rate) => {
      rates.push(rate);
      if (flaky.includes(rate) && !failedOnce.has(rate)) {
        failedOnce.add(rate);
        return { rate, pass: false };
      }
      return { rate, pass: rate <= limit };
    },
  };
}

describe('searchCapacity', () => {
  it('doubles until a rate fails, then bisects between the last rate held and the first failed', async () => {
    const { measure, rates } = server(50);
    const result = await searchCapacity({ startRate: 10, maxRate: 1_000, bisections: 2, retries: 0 }, measure);
    expect(rates).toEqual([10, 20, 40, 80, 60, 50]);
    expect(result.capacity?.rate).toBe(50);
    expect(result.firstFailure?.rate).toBe(60);
    expect(result.steps.map((step) => step.rate)).toEqual(rates);
  });

  it('measures a failed rate again before counting it as failed', async () => {
    const { measure, rates } = server(50, [20]);
    const result = await searchCapacity({ startRate: 10, maxRate: 1_000, bisections: 0, retries: 1 }, measure);
    expect(rates).toEqual([10, 20, 20, 40, 80, 80]);
    expect(result.capacity?.rate).toBe(40);
  });

  it('finds no capacity when the start rate fails', async () => {
    const { measure, rates } = server(0.5);
    const result = await searchCapacity({ startRate: 1, maxRate: 1_000, bisections: 3, retries: 0 }, measure);
    expect(rates).toEqual([1]);
    expect(result.capacity).toBeUndefined();
    expect(result.firstFailure?.rate).toBe(1);
  });

  it('stops doubling below the rate cap and reports no failure when every rate held', async () => {
    const { measure, rates } = server(Number.POSITIVE_INFINITY);
    const result = await searchCapacity({ startRate: 10, maxRate: 100, bisections: 3, retries: 0 }, measure);
    expect(rates).toEqual([10, 20, 40, 80]);
    expect(result.capacity?.rate).toBe(80);
    expect(result.firstFailure).toBeUndefined();
  });

  it('keeps bisected rates to three significant digits', async () => {
    const { measure, rates } = server(10);
    const result = await searchCapacity({ startRate: 1.1, maxRate: 1_000, bisections: 3, retries: 0 }, measure);
    // 1.1 doubled three times is 8.8000000000000007 in binary floating point.
    expect(rates.slice(5)).toEqual([13.2, 11, 9.9]);
    expect(result.capacity?.rate).toBe(9.9);
  });
});
