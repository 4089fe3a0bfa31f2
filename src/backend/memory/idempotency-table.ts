import type { Clock } from '../../clock.js';
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
 * The in-memory backend's records (docs/backends.md "Idempotent notify"): a Map in the order entries
 * were last written, so the oldest (the next to expire, and the first to evict when full) is
 * always first. Everything happens synchronously, so `begin` is atomic within the process, which
 * is the only one that can see this table.
 */
export class IdempotencyTable implements IdempotencyRecords {
  private readonly entries = new Map<string, Entry>();
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

  /** Moves the key to the end (newest), evicting the oldest entries beyond `maxKeys`. */
  private write(recordKey: string, record: IdempotencyRecord): number {
    const revision = this.nextRevision++;
    this.entries.delete(recordKey);
    while (this.entries.size >= this.options.maxKeys) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.options.onEvicted?.();
    }
    this.entries.set(recordKey, { record, revision, writtenAt: this.options.clock.now() });
    return revision;
  }

  private expire(): void {
    const cutoff = this.options.clock.now() - this.options.windowMs;
    for (const [key, entry] of this.entries) {
      if (entry.writtenAt > cutoff) break;
      this.entries.delete(key);
    }
  }
}
