import { describe, expect, it } from 'vitest';
import type { StoredNotification } from '../../../src/backend/backend.js';
import { HistoryBudget, type HeldNotification } from '../../../src/backend/memory/history-budget.js';

const notification = (sequence: number): StoredNotification => ({ sequence, topic: 'mars.a', payload: 'null', timestampNs: 0n });

describe('HistoryBudget', () => {
  it('answers the oldest held notification in storage order, skipping released ones', () => {
    const budget = new HistoryBudget(100);
    const held = [1, 2, 3].map((sequence) => budget.hold(notification(sequence), 10));
    budget.release(held[0] as HeldNotification);
    budget.release(held[1] as HeldNotification);
    expect(budget.oldest()?.notification.sequence).toBe(3);
    expect(budget.heldBytes).toBe(10);
  });

  it('ignores a second release of the same notification', () => {
    const budget = new HistoryBudget(100);
    const first = budget.hold(notification(1), 30);
    budget.hold(notification(2), 20);
    budget.release(first);
    budget.release(first);
    expect(budget.heldBytes).toBe(20);
    expect(budget.fits(80)).toBe(true);
    expect(budget.fits(81)).toBe(false);
  });

  it('keeps order and totals across the compactions that many out-of-order releases cause', () => {
    const budget = new HistoryBudget(Number.POSITIVE_INFINITY);
    const held = Array.from({ length: 10_000 }, (_, index) => budget.hold(notification(index + 1), index + 1));
    // Every notification whose sequence is not a multiple of 7, newest first: far past the compaction threshold.
    for (const entry of [...held].reverse()) if (entry.notification.sequence % 7 !== 0) budget.release(entry);
    const left = held.filter((entry) => entry.notification.sequence % 7 === 0);
    expect(budget.heldBytes).toBe(left.reduce((sum, entry) => sum + entry.bytes, 0));
    const drained: number[] = [];
    for (let oldest = budget.oldest(); oldest; oldest = budget.oldest()) {
      drained.push(oldest.notification.sequence);
      budget.release(oldest);
    }
    expect(drained).toEqual(left.map((entry) => entry.notification.sequence));
    expect(budget.heldBytes).toBe(0);
  });

  it('forgets everything at once', () => {
    const budget = new HistoryBudget(100);
    const first = budget.hold(notification(1), 40);
    budget.releaseAll();
    expect(budget.heldBytes).toBe(0);
    expect(budget.oldest()).toBeUndefined();
    budget.release(first);
    expect(budget.heldBytes).toBe(0);
  });
});
