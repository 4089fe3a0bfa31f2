/**
 * The record store behind notify's `Idempotency-Key` (docs/api.md "Idempotent notify",
 * docs/backends.md): one record per key and event type, from the first request that claims it
 * until the window after its success. The backend owns it because on JetStream it lives in NATS,
 * shared by every process; in memory it is a bounded table of this process.
 */

/** The backend's part of the `idempotency` configuration. */
export interface IdempotencySettings {
  /** `idempotency.window` in seconds. */
  readonly windowSec: number;
}

export const DEFAULT_IDEMPOTENCY: IdempotencySettings = { windowSec: 120 };

/**
 * A pending record older than this is stale: its request can no longer be publishing, since a
 * JetStream publish with its retries gives up after 10 s (docs/backends.md "Publishing").
 */
export const PENDING_STALE_AFTER_MS = 10_000;

/** What a record holds, as the JetStream bucket stores it (JSON). */
export type IdempotencyRecord =
  | { readonly state: 'pending'; readonly fingerprint: string; readonly since: number }
  | { readonly state: 'done'; readonly fingerprint: string; readonly processed_at: string; readonly sequence: number };

/** The right to store a notification under a key: held by exactly one request at a time. */
export interface IdempotencyClaim {
  /** `idempotencyRecordKey(event type, key)`: the record's name and the publish's deduplication id. */
  readonly recordKey: string;
  readonly fingerprint: string;
  /** The record's revision this claim wrote; `complete` and `abandon` act only while it is still current. */
  readonly revision: number;
}

export type IdempotencyBegin =
  /** No record (or a stale pending one, taken over): this request stores the notification. */
  | { readonly kind: 'new'; readonly claim: IdempotencyClaim }
  /** The first request succeeded with the same notification: answer from it. */
  | { readonly kind: 'replay'; readonly processedAt: string; readonly sequence: number }
  /** The key was used for a different notification. */
  | { readonly kind: 'reused' }
  /** The first request with this key is still being processed. */
  | { readonly kind: 'in_progress' };

export interface StoredOutcome {
  /** The `processed_at` the first success answered with, replayed verbatim. */
  readonly processedAt: string;
  readonly sequence: number;
  /** The fingerprint of what was stored, when it is not the claim's (a duplicate of another notification). */
  readonly fingerprint?: string;
}

export interface IdempotencyRecords {
  /** Claims the key for `fingerprint`, or says how the request must be answered instead. */
  begin(recordKey: string, fingerprint: string): Promise<IdempotencyBegin>;
  /** The claim's notification was stored: the record answers retries for the window from now. */
  complete(claim: IdempotencyClaim, outcome: StoredOutcome): Promise<void>;
  /** The claim's request failed: its record goes, so a retry is processed anew. */
  abandon(claim: IdempotencyClaim): Promise<void>;
}

/** How a request is answered when the record already exists (a `pending` one may be taken over). */
export type RecordVerdict = 'replay' | 'reused' | 'in_progress' | 'take_over';

/**
 * A pending record older than `staleAfterMs` belongs to a request that can no longer be
 * publishing (its process died, or the publish deadline passed): a retry of the same notification
 * takes it over, and the `Nats-Msg-Id` keeps a publish that did happen from being stored twice.
 * A different notification under that key is refused, since the first one may have been stored.
 */
export function judgeRecord(record: IdempotencyRecord, fingerprint: string, nowMs: number, staleAfterMs: number): RecordVerdict {
  const same = record.fingerprint === fingerprint;
  if (record.state === 'done') return same ? 'replay' : 'reused';
  if (nowMs - record.since < staleAfterMs) return 'in_progress';
  return same ? 'take_over' : 'reused';
}

/** The answer a `done` record gives (`judgeRecord` said `replay`). */
export function replayOf(record: IdempotencyRecord & { state: 'done' }): IdempotencyBegin {
  return { kind: 'replay', processedAt: record.processed_at, sequence: record.sequence };
}
