import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BufferBudget } from '../../../src/streaming/buffer-budget.js';

/** The process-wide byte bound of all streams (docs/streaming.md "Slow consumers"). */
describe('BufferBudget', () => {
  it('counts what streams report and how many hold anything', () => {
    const budget = new BufferBudget(1000);
    budget.change(0, 300);
    budget.change(0, 200);
    budget.change(300, 100);
    expect(budget.totalBytes).toBe(300);
    expect(budget.holdingStreams).toBe(2);
    budget.change(100, 0);
    expect(budget.holdingStreams).toBe(1);
    budget.change(200, 0);
    expect(budget.totalBytes).toBe(0);
    expect(budget.holdingStreams).toBe(0);
  });

  it('refuses nothing within the bound', () => {
    const budget = new BufferBudget(1000);
    budget.change(0, 900);
    expect(budget.refuses(900, 100)).toBe(false);
  });

  it('past the bound, refuses a stream that would hold more than its share', () => {
    const budget = new BufferBudget(1000);
    budget.change(0, 800);
    budget.change(0, 150);
    // Two holders: a share is 500.
    expect(budget.refuses(800, 100)).toBe(true);
    expect(budget.refuses(150, 100)).toBe(false);
    expect(budget.refuses(150, 400)).toBe(true);
  });

  it('never refuses a stream that holds nothing', () => {
    const budget = new BufferBudget(100);
    budget.change(0, 5_000);
    expect(budget.refuses(0, 10_000)).toBe(false);
  });

  it('keeps its total equal to the sum of what each stream last reported', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(9), fc.nat(10_000)), { maxLength: 200 }), (changes) => {
        const budget = new BufferBudget(50_000);
        const held = new Array<number>(10).fill(0);
        for (const [stream, bytes] of changes) {
          budget.change(held[stream] ?? 0, bytes);
          held[stream] = bytes;
        }
        expect(budget.totalBytes).toBe(held.reduce((sum, bytes) => sum + bytes, 0));
        expect(budget.holdingStreams).toBe(held.filter((bytes) => bytes > 0).length);
      }),
    );
  });
});
