import type { NotificationBackend, NotificationToStore, PublishResult } from '../backend/backend.js';
import type { IdempotencyClaim } from '../backend/idempotency-records.js';
import type { Clock } from '../time/clock.js';
import { formatUtcSeconds } from '../time/time-format.js';
import { idempotencyRecordKey, notificationFingerprint } from './fingerprint.js';
import type { ConflictReason } from './idempotency-telemetry.js';

/** How a notify with an `Idempotency-Key` ended well: stored now, or answered from the first success. */
export interface StoredOnce {
  readonly processedAt: string;
  readonly sequence: number;
  readonly replayed: boolean;
  /** The start of the record key (a hash), for logs: the key itself is never logged. */
  readonly recordHash: string;
}

/** The key is held by another notification (`reused`, 422) or by a request still running (`in_progress`, 409). */
export class IdempotencyConflictError extends Error {
  constructor(readonly reason: ConflictReason) {
    super(`Idempotency-Key conflict: ${reason}`);
    this.name = 'IdempotencyConflictError';
  }
}

/** Hex digits of the record key that logs carry. */
export const RECORD_HASH_LENGTH = 12;

/**
 * Stores a validated notification at most once per key and event type within the window
 * (docs/api.md "Idempotent notify"): claim the key, publish under the key's deduplication id, then
 * record the success; a failed publish gives the claim back, so only a stored notification leaves
 * a record. A publish JetStream drops as a duplicate (a first request whose process died before
 * recording) is answered like a replay, from the stored message.
 */
export async function storeOnce(
  backend: NotificationBackend,
  clock: Clock,
  request: { readonly eventType: string; readonly key: string; readonly notification: NotificationToStore },
): Promise<StoredOnce> {
  const { eventType, notification } = request;
  const fingerprint = notificationFingerprint(eventType, notification);
  const recordKey = idempotencyRecordKey(eventType, request.key);
  const recordHash = recordKey.slice(0, RECORD_HASH_LENGTH);
  const begun = await backend.idempotency.begin(recordKey, fingerprint);
  if (begun.kind === 'replay') return { processedAt: begun.processedAt, sequence: begun.sequence, replayed: true, recordHash };
  if (begun.kind !== 'new') throw new IdempotencyConflictError(begun.kind);

  const { claim } = begun;
  let published;
  try {
    published = await backend.publish(notification, { deduplicationId: recordKey });
  } catch (error) {
    await backend.idempotency.abandon(claim);
    throw error;
  }
  return recordStored(backend, clock, { eventType, fingerprint, claim, recordHash }, published);
}

/**
 * Records a claim's publish that succeeded and says how to answer it. A publish JetStream dropped
 * as a duplicate (a first request whose process died before recording) is answered like a
 * replay, from the stored message, or refused as `reused` when that message is another notification.
 */
export async function recordStored(
  backend: NotificationBackend,
  clock: Clock,
  claimed: { readonly eventType: string; readonly fingerprint: string; readonly claim: IdempotencyClaim; readonly recordHash: string },
  published: PublishResult,
): Promise<StoredOnce> {
  const { eventType, fingerprint, claim, recordHash } = claimed;
  const { sequence, duplicateOf } = published;
  if (duplicateOf === undefined) {
    const processedAt = formatUtcSeconds(clock.now());
    await backend.idempotency.complete(claim, { processedAt, sequence });
    return { processedAt, sequence, replayed: false, recordHash };
  }
  // Unreadable (gone from the stream): all that is known is that this id was stored; trust it.
  const storedFingerprint = duplicateOf ? notificationFingerprint(eventType, duplicateOf) : fingerprint;
  const processedAt = formatUtcSeconds(duplicateOf ? Number(duplicateOf.timestampNs / 1_000_000n) : clock.now());
  await backend.idempotency.complete(claim, { processedAt, sequence, fingerprint: storedFingerprint });
  if (storedFingerprint !== fingerprint) throw new IdempotencyConflictError('reused');
  return { processedAt, sequence, replayed: true, recordHash };
}
