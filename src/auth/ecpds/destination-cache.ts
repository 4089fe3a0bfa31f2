import type { Clock } from '../../time/clock.js';
import type { DestinationFetch } from './fetch-outcome.js';

/** docs/design/rules/operations.md §2.10.6: how a check obtained its destination set. */
export type CacheOutcome = 'hit' | 'miss_fetched' | 'miss_coalesced';

/**
 * Known synchronously, so a check can report hit or miss before it waits; on a miss `fetch`
 * settles with the (possibly shared) upstream result.
 */
export type CacheLookup =
  | { readonly cacheOutcome: 'hit'; readonly destinations: ReadonlySet<string> }
  /** `miss_fetched`: this lookup runs the fetch; `miss_coalesced`: it waits on another lookup's fetch. */
  | { readonly cacheOutcome: 'miss_fetched' | 'miss_coalesced'; readonly fetch: Promise<DestinationFetch> };

export interface DestinationCacheOptions {
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly clock: Clock;
}

interface Entry {
  readonly destinations: ReadonlySet<string>;
  readonly expiresAt: number;
}

/**
 * Per-username destination sets with a TTL, a bounded size and single flight (
 * docs/design/rules/operations.md §2.10.6). Only usable fetches are stored, so a failure is retried by the next request, and
 * denials are answered from the stored set without calling ECPDS again.
 *
 * Eviction is LRU, which the spec accepts: a `Map` iterates in insertion order, so re-inserting
 * on every hit keeps the least recently used entry first. Expired entries are dropped when looked
 * up or evicted; until then they count towards the size (as the spec allows for the gauge).
 */
export class DestinationCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<DestinationFetch>>();

  constructor(private readonly options: DestinationCacheOptions) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * The user's set from the cache, or from `fetch` on a miss. Concurrent misses for one user share
   * one `fetch` and all receive its result, success or failure. Synchronous, so the in-flight slot
   * is taken before any caller can yield.
   */
  lookup(username: string, fetch: () => Promise<DestinationFetch>): CacheLookup {
    const cached = this.fresh(username);
    if (cached !== undefined) return { cacheOutcome: 'hit', destinations: cached.destinations };

    const pending = this.inFlight.get(username);
    if (pending !== undefined) return { cacheOutcome: 'miss_coalesced', fetch: pending };

    const started = this.run(username, fetch);
    this.inFlight.set(username, started);
    return { cacheOutcome: 'miss_fetched', fetch: started };
  }

  private async run(username: string, fetch: () => Promise<DestinationFetch>): Promise<DestinationFetch> {
    try {
      // Yield once so `lookup` has registered the in-flight slot before `fetch` runs: a fetch that
      // threw synchronously would otherwise release the slot before it was taken, leaving it stuck.
      await Promise.resolve();
      const result = await fetch();
      // Stored before the in-flight slot is released, so no lookup in between can miss both.
      if (result.ok) this.store(username, result.destinations);
      return result;
    } finally {
      this.inFlight.delete(username);
    }
  }

  private fresh(username: string): Entry | undefined {
    const entry = this.entries.get(username);
    if (entry === undefined) return undefined;
    this.entries.delete(username);
    if (this.options.clock.now() >= entry.expiresAt) return undefined;
    this.entries.set(username, entry);
    return entry;
  }

  private store(username: string, destinations: ReadonlySet<string>): void {
    this.entries.delete(username);
    this.entries.set(username, { destinations, expiresAt: this.options.clock.now() + this.options.ttlMs });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) break;
      this.entries.delete(oldest);
    }
  }
}
