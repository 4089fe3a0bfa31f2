import type { Clock } from '../../time/clock.js';
import {
  judgeRecord,
  replayOf,
  type IdempotencyBegin,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotencyRecords,
  type StoredOutcome,
} from '../idempotency-records.js';

export interface IdempotencyTableOptions {
  readonly clock: Clock;
  /** `idempotency.window`: a record is forgotten this long after it was last written. */
  readonly windowMs: number;
  /** `idempotency.in_memory_max_keys`. */
  readonly maxKeys: number;
  /** A pending record older than this may be taken over (see `judgeRecord`). */
  readonly staleAfterMs: number;
  /** A record was dropped to make room (`aviso_idempotency_evictions_total`); expiry is not eviction. */
  readonly onEvicted?: () => void;
}

interface Entry {
  readonly record: IdempotencyRecord;
  readonly revision: number;
  readonly writtenAt: number;
}

/**
 * The in-memory backend's records (docs/backends.md "Idempotent notify"): a Map for lookups and a
 * queue of writes in order, so the oldest record (the next to expire, and the first to evict when
 * full) is found at the queue's head. Taking the first key of the Map instead costs time in
 * proportion to the keys deleted before it (V8 keeps their slots until it rehashes), which made
 * every write slower as the table filled. Everything happens synchronously, so `begin` is atomic
 * within the process, which is the only one that can see this table.
 */
export class IdempotencyTable implements IdempotencyRecords {
  private readonly entries = new Map<string, Entry>();
  /** Every write in order; one whose revision is no longer its key's current one is skipped. */
  private queue: { readonly recordKey: string; readonly revision: number }[] = [];
  private head = 0;
  private nextRevision = 1;

  constructor(private readonly options: IdempotencyTableOptions) {}

  get size(): number {
    this.expire();
    return this.entries.size;
  }

  async begin(recordKey: string, fingerprint: string): Promise<IdempotencyBegin> {
    this.expire();
    const now = this.options.clock.now();
    const existing = this.entries.get(recordKey);
    if (existing) {
      const verdict = judgeRecord(existing.record, fingerprint, now, this.options.staleAfterMs);
      if (verdict === 'replay' && existing.record.state === 'done') return replayOf(existing.record);
      if (verdict !== 'take_over') return { kind: verdict === 'reused' ? 'reused' : 'in_progress' };
    }
    const revision = this.write(recordKey, { state: 'pending', fingerprint, since: now });
    return { kind: 'new', claim: { recordKey, fingerprint, revision } };
  }

  async complete(claim: IdempotencyClaim, outcome: StoredOutcome): Promise<void> {
    const current = this.entries.get(claim.recordKey);
    // Taken over meanwhile: the newer claim writes the record. Evicted meanwhile: written again.
    if (current && current.revision !== claim.revision) return;
    this.write(claim.recordKey, {
      state: 'done',
      fingerprint: outcome.fingerprint ?? claim.fingerprint,
      processed_at: outcome.processedAt,
      sequence: outcome.sequence,
    });
  }

  async abandon(claim: IdempotencyClaim): Promise<void> {
    if (this.entries.get(claim.recordKey)?.revision === claim.revision) this.entries.delete(claim.recordKey);
  }

  /** Makes the key the newest, evicting the oldest entries beyond `maxKeys`. */
  private write(recordKey: string, record: IdempotencyRecord): number {
    const revision = this.nextRevision++;
    this.entries.delete(recordKey);
    while (this.entries.size >= this.options.maxKeys) {
      const oldest = this.oldest();
      if (!oldest) break;
      this.entries.delete(oldest.recordKey);
      this.options.onEvicted?.();
    }
    this.entries.set(recordKey, { record, revision, writtenAt: this.options.clock.now() });
    this.queue.push({ recordKey, revision });
    return revision;
  }

  private expire(): void {
    const cutoff = this.options.clock.now() - this.options.windowMs;
    for (let oldest = this.oldest(); oldest && oldest.entry.writtenAt <= cutoff; oldest = this.oldest()) {
      this.entries.delete(oldest.recordKey);
    }
  }

  /** The current entry written longest ago, dropping queue items that no longer are one. */
  private oldest(): { recordKey: string; entry: Entry } | undefined {
    while (this.head < this.queue.length) {
      const { recordKey, revision } = this.queue[this.head] as { recordKey: string; revision: number };
      const entry = this.entries.get(recordKey);
      if (entry?.revision === revision) return { recordKey, entry };
      this.head++;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
    }
    return undefined;
  }
}
