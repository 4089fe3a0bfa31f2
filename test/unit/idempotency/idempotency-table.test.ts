import { describe, expect, it } from 'vitest';
import { IdempotencyTable } from '../../../src/backend/memory/idempotency-table.js';
import type { IdempotencyClaim } from '../../../src/backend/idempotency-records.js';
import { ManualClock } from '../../support/manual-clock.js';

/** The in-memory backend's records (docs/backends.md "Idempotent notify"), with an injected clock. */
function table(options: { maxKeys?: number; windowMs?: number; staleAfterMs?: number } = {}) {
  const clock = new ManualClock();
  let evictions = 0;
  const records = new IdempotencyTable({
    clock,
    windowMs: options.windowMs ?? 120_000,
    maxKeys: options.maxKeys ?? 100,
    staleAfterMs: options.staleAfterMs ?? 10_000,
    onEvicted: () => evictions++,
  });
  return { records, clock, evictions: () => evictions };
}

async function claimed(records: IdempotencyTable, key: string, fingerprint = 'f1'): Promise<IdempotencyClaim> {
  const begun = await records.begin(key, fingerprint);
  if (begun.kind !== 'new') throw new Error(`expected a new claim, got ${begun.kind}`);
  return begun.claim;
}

async function stored(records: IdempotencyTable, key: string, processedAt = 't1', sequence = 1): Promise<void> {
  await records.complete(await claimed(records, key), { processedAt, sequence });
}

describe('IdempotencyTable', () => {
  it('claims an unknown key', async () => {
    const { records } = table();
    expect((await records.begin('k', 'f1')).kind).toBe('new');
  });

  it('answers a completed key with the same fingerprint from its record', async () => {
    const { records } = table();
    await stored(records, 'k', '2026-03-01T12:00:00Z', 7);
    expect(await records.begin('k', 'f1')).toEqual({ kind: 'replay', processedAt: '2026-03-01T12:00:00Z', sequence: 7 });
  });

  it('refuses a completed key with another fingerprint', async () => {
    const { records } = table();
    await stored(records, 'k');
    expect(await records.begin('k', 'f2')).toEqual({ kind: 'reused' });
  });

  it('says in progress while the first claim is pending, whatever the fingerprint', async () => {
    const { records } = table();
    await claimed(records, 'k');
    expect(await records.begin('k', 'f1')).toEqual({ kind: 'in_progress' });
    expect(await records.begin('k', 'f2')).toEqual({ kind: 'in_progress' });
  });

  it('lets the same notification take over a stale pending claim, and refuses another one', async () => {
    const { records, clock } = table({ staleAfterMs: 10_000 });
    const first = await claimed(records, 'k');
    clock.advance(10_000);
    expect(await records.begin('k', 'f2')).toEqual({ kind: 'reused' });
    const second = await claimed(records, 'k');
    expect(second.revision).not.toBe(first.revision);
    // The first claim lost the record: its late completion changes nothing.
    await records.complete(first, { processedAt: 'late', sequence: 1 });
    await records.complete(second, { processedAt: 'taken', sequence: 2 });
    expect(await records.begin('k', 'f1')).toEqual({ kind: 'replay', processedAt: 'taken', sequence: 2 });
  });

  it('forgets an abandoned claim, so a retry is processed anew', async () => {
    const { records } = table();
    await records.abandon(await claimed(records, 'k'));
    expect((await records.begin('k', 'f2')).kind).toBe('new');
  });

  it('forgets a record the window after its success, not after its claim', async () => {
    const { records, clock } = table({ windowMs: 60_000 });
    const claim = await claimed(records, 'k');
    clock.advance(5_000);
    await records.complete(claim, { processedAt: 't', sequence: 1 });
    clock.advance(59_999);
    expect((await records.begin('k', 'f1')).kind).toBe('replay');
    clock.advance(1);
    expect((await records.begin('k', 'f1')).kind).toBe('new');
  });

  it('holds at most maxKeys records, evicting the oldest first and counting each eviction', async () => {
    const { records, clock, evictions } = table({ maxKeys: 3 });
    for (const key of ['a', 'b', 'c']) {
      await stored(records, key);
      clock.advance(1);
    }
    expect(evictions()).toBe(0);
    await stored(records, 'd');
    expect(records.size).toBe(3);
    expect(evictions()).toBe(1);
    expect((await records.begin('a', 'f1')).kind).toBe('new');
    // Claiming 'a' again evicted 'b', the oldest of the rest.
    expect(evictions()).toBe(2);
    expect((await records.begin('c', 'f1')).kind).toBe('replay');
    expect((await records.begin('b', 'f1')).kind).toBe('new');
  });

  it('does not count expiry as eviction', async () => {
    const { records, clock, evictions } = table({ maxKeys: 2, windowMs: 1_000 });
    await stored(records, 'a');
    await stored(records, 'b');
    clock.advance(1_000);
    await stored(records, 'c');
    await stored(records, 'd');
    expect(evictions()).toBe(0);
    expect(records.size).toBe(2);
  });

  it('writes the record again when a claim completes after its pending entry was evicted', async () => {
    const { records } = table({ maxKeys: 1 });
    const claim = await claimed(records, 'a');
    await stored(records, 'b');
    await records.complete(claim, { processedAt: 'ta', sequence: 4 });
    expect(await records.begin('a', 'f1')).toEqual({ kind: 'replay', processedAt: 'ta', sequence: 4 });
  });

  it('keeps the newest maxKeys of many keys, each rewritten and some abandoned, in write order', async () => {
    const { records, clock, evictions } = table({ maxKeys: 100 });
    let abandoned = 0;
    for (let i = 0; i < 5_000; i++) {
      const claim = await claimed(records, `k${i}`);
      if (i % 7 === 0) {
        await records.abandon(claim);
        abandoned++;
      } else {
        await records.complete(claim, { processedAt: String(i), sequence: i });
      }
      clock.advance(1);
    }
    expect(records.size).toBe(100);
    expect(evictions()).toBe(5_000 - abandoned - 100);
    const kept = Array.from({ length: 5_000 }, (_, i) => i)
      .filter((i) => i % 7 !== 0)
      .slice(-100);
    for (const i of kept) expect(await records.begin(`k${i}`, 'f1')).toEqual({ kind: 'replay', processedAt: String(i), sequence: i });
  });
});
