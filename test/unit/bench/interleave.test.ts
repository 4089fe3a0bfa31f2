import { describe, expect, it } from 'vitest';
import { interleaved, pairedSummary, runsVerdict, sidesInRound } from '../../../bench/support/interleave.js';

describe('A/B order and paired summary', () => {
  it('swaps which side goes first every round', () => {
    expect([0, 1, 2, 3].map((r) => sidesInRound(r, 'A', 'B').join(''))).toEqual(['AB', 'BA', 'AB', 'BA']);
  });

  it('runs the sides A B B A A B …, keeping each side its own results in round order', async () => {
    const order: string[] = [];
    const side = (label: string) => (round: number) => {
      order.push(`${label}${round}`);
      return Promise.resolve(`${label}${round}`);
    };
    const results = await interleaved(3, side('A'), side('B'));
    expect(order).toEqual(['A0', 'B0', 'B1', 'A1', 'A2', 'B2']);
    expect(results).toEqual({ measured: ['A0', 'A1', 'A2'], baseline: ['B0', 'B1', 'B2'] });
  });

  it('says the median B ÷ A of the rounds and in how many B cost less', () => {
    expect(pairedSummary([10, 10, 10, 20], [9, 11, 10, 19])).toBe('B ÷ A per round: median 0.95, B lower in 2 of 4 rounds');
  });
});

describe('runs verdict', () => {
  it('lists each run and their median', () => {
    expect(runsVerdict([1.012, 0.9944, 1.1])).toBe('per run: 1.01, 0.994, 1.1; median 1.01');
  });
});
