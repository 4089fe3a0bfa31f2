import { describe, expect, it } from 'vitest';
import { DestinationCache } from '../../../../src/auth/ecpds/destination-cache.js';
import type { DestinationFetch } from '../../../../src/auth/ecpds/fetch-outcome.js';
import { ManualClock } from '../../../support/manual-clock.js';

const success = (...names: string[]): DestinationFetch => ({ ok: true, outcome: 'success', destinations: new Set(names) });

function cache(options: { ttlMs?: number; maxEntries?: number } = {}) {
  const clock = new ManualClock();
  return { clock, cache: new DestinationCache({ ttlMs: options.ttlMs ?? 1_000, maxEntries: options.maxEntries ?? 10, clock }) };
}

describe('DestinationCache', () => {
  it('reports a hit until the TTL has passed, counted from when the fetch completed', async () => {
    const { cache: subject, clock } = cache({ ttlMs: 1_000 });
    const first = subject.lookup('alice', async () => success('CIP'));
    expect(first.cacheOutcome).toBe('miss_fetched');
    if (first.cacheOutcome !== 'hit') await first.fetch;

    clock.advance(999);
    const hit = subject.lookup('alice', async () => success());
    expect(hit).toEqual({ cacheOutcome: 'hit', destinations: new Set(['CIP']) });

    clock.advance(1);
    expect(subject.lookup('alice', async () => success()).cacheOutcome).toBe('miss_fetched');
  });

  it('stores a degraded any_success fetch but no failed one', async () => {
    const { cache: subject } = cache();
    const degraded: DestinationFetch = { ok: true, outcome: 'http_5xx', destinations: new Set(['CIP']) };
    const failed: DestinationFetch = { ok: false, outcome: 'unreachable' };
    const a = subject.lookup('alice', async () => degraded);
    const b = subject.lookup('bob', async () => failed);
    if (a.cacheOutcome !== 'hit') await a.fetch;
    if (b.cacheOutcome !== 'hit') await b.fetch;

    expect(subject.size).toBe(1);
    expect(subject.lookup('alice', async () => failed).cacheOutcome).toBe('hit');
    expect(subject.lookup('bob', async () => failed).cacheOutcome).toBe('miss_fetched');
  });

  it('coalesces concurrent misses of one user onto one fetch', async () => {
    const { cache: subject } = cache();
    let calls = 0;
    let finish: (result: DestinationFetch) => void = () => undefined;
    const fetch = () => {
      calls += 1;
      return new Promise<DestinationFetch>((resolve) => (finish = resolve));
    };
    const lookups = [subject.lookup('alice', fetch), subject.lookup('alice', fetch), subject.lookup('alice', fetch)];
    expect(lookups.map((lookup) => lookup.cacheOutcome)).toEqual(['miss_fetched', 'miss_coalesced', 'miss_coalesced']);

    await Promise.resolve();
    finish(success('CIP'));
    const results = await Promise.all(lookups.map((lookup) => (lookup.cacheOutcome === 'hit' ? Promise.resolve(undefined) : lookup.fetch)));
    expect(results).toEqual([success('CIP'), success('CIP'), success('CIP')]);
    expect(calls).toBe(1);
  });

  it('hands a rejected fetch to every waiter and frees the slot', async () => {
    const { cache: subject } = cache();
    const boom = () => Promise.reject(new Error('bug'));
    const first = subject.lookup('alice', boom);
    const second = subject.lookup('alice', boom);
    if (first.cacheOutcome === 'hit' || second.cacheOutcome === 'hit') throw new Error('unexpected hit');
    await expect(first.fetch).rejects.toThrow('bug');
    await expect(second.fetch).rejects.toThrow('bug');

    expect(subject.lookup('alice', async () => success()).cacheOutcome).toBe('miss_fetched');
  });

  it('frees the slot when the fetch throws synchronously', async () => {
    const { cache: subject } = cache();
    const first = subject.lookup('alice', () => {
      throw new Error('sync bug');
    });
    if (first.cacheOutcome === 'hit') throw new Error('unexpected hit');
    await expect(first.fetch).rejects.toThrow('sync bug');

    expect(subject.lookup('alice', async () => success()).cacheOutcome).toBe('miss_fetched');
  });

  it('evicts the least recently used entry beyond maxEntries', async () => {
    const { cache: subject } = cache({ maxEntries: 2 });
    const load = async (name: string) => {
      const lookup = subject.lookup(name, async () => success(name));
      if (lookup.cacheOutcome !== 'hit') await lookup.fetch;
      return lookup.cacheOutcome;
    };
    await load('a');
    await load('b');
    expect(await load('a')).toBe('hit');
    await load('c');

    expect(subject.size).toBe(2);
    expect(await load('a')).toBe('hit');
    expect(await load('c')).toBe('hit');
    expect(await load('b')).toBe('miss_fetched');
  });
});
