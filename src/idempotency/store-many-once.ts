import type { BatchPublishOutcome, NotificationBackend, NotificationToStore } from '../backend/backend.js';
import type { IdempotencyClaim } from '../backend/idempotency-records.js';
import type { Clock } from '../time/clock.js';
import { idempotencyRecordKey, notificationFingerprint } from './fingerprint.js';
import type { ConflictReason } from './idempotency-telemetry.js';
import { IdempotencyConflictError, RECORD_HASH_LENGTH, recordStored, type StoredOnce } from './store-once.js';

/** One valid notification of a batch notify with an `Idempotency-Key`, and its place in the batch. */
export interface KeyedItem {
  readonly index: number;
  readonly eventType: string;
  readonly notification: NotificationToStore;
}

export type StoredManyOutcome =
  | ({ readonly kind: 'stored' } & StoredOnce)
  | { readonly kind: 'conflict'; readonly reason: ConflictReason }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * The record key of a batch's item: the batch's key with the item's index, scoped to the item's
 * event type as a single notify's key is. A key has no space (visible ASCII only), so no single
 * notify's key can name an item's record.
 */
function batchItemRecordKey(eventType: string, key: string, index: number): string {
  return idempotencyRecordKey(eventType, `${key} ${index}`);
}

/**
 * `storeOnce` for every item of a batch (D48), each under its own record (`batchItemRecordKey`),
 * so that the key covers the whole batch: every claim is taken first, then the claimed items are
 * stored in order with one `publishMany`, each under its record's deduplication id, then every
 * record is completed or given back. A retry of the batch is answered from each item's first
 * success and stores only what the first attempt did not, never twice.
 */
export async function storeManyOnce(
  backend: NotificationBackend,
  clock: Clock,
  key: string,
  items: readonly KeyedItem[],
): Promise<StoredManyOutcome[]> {
  const claimed = items.map((item) => {
    const fingerprint = notificationFingerprint(item.eventType, item.notification);
    const recordKey = batchItemRecordKey(item.eventType, key, item.index);
    return { item, fingerprint, recordKey, recordHash: recordKey.slice(0, RECORD_HASH_LENGTH) };
  });
  const begun = await Promise.all(claimed.map(({ recordKey, fingerprint }) => backend.idempotency.begin(recordKey, fingerprint)));

  const outcomes: StoredManyOutcome[] = new Array<StoredManyOutcome>(items.length);
  const toStore: { position: number; claim: IdempotencyClaim }[] = [];
  begun.forEach((start, position) => {
    const { recordHash } = claimed[position] as (typeof claimed)[number];
    if (start.kind === 'replay') {
      outcomes[position] = { kind: 'stored', processedAt: start.processedAt, sequence: start.sequence, replayed: true, recordHash };
    } else if (start.kind === 'new') {
      toStore.push({ position, claim: start.claim });
    } else {
      outcomes[position] = { kind: 'conflict', reason: start.kind };
    }
  });
  if (toStore.length === 0) return outcomes;

  const published = await publishClaimed(backend, toStore, claimed);
  await Promise.all(
    toStore.map(async ({ position, claim }, order) => {
      const outcome = published[order] as BatchPublishOutcome;
      const { item, fingerprint, recordHash } = claimed[position] as (typeof claimed)[number];
      if (!outcome.stored) {
        await backend.idempotency.abandon(claim);
        outcomes[position] = { kind: 'failed', error: outcome.error };
        return;
      }
      try {
        outcomes[position] = {
          kind: 'stored',
          ...(await recordStored(backend, clock, { eventType: item.eventType, fingerprint, claim, recordHash }, outcome)),
        };
      } catch (error) {
        if (!(error instanceof IdempotencyConflictError)) throw error;
        outcomes[position] = { kind: 'conflict', reason: error.reason };
      }
    }),
  );
  return outcomes;
}

/** The claimed items' publishes; when the call itself fails, every claim is given back first. */
async function publishClaimed(
  backend: NotificationBackend,
  toStore: readonly { position: number; claim: IdempotencyClaim }[],
  claimed: readonly { item: KeyedItem; recordKey: string }[],
) {
  const chosen = toStore.map(({ position }) => claimed[position] as (typeof claimed)[number]);
  try {
    return await backend.publishMany(
      chosen.map(({ item }) => item.notification),
      { deduplicationIds: chosen.map(({ recordKey }) => recordKey) },
    );
  } catch (error) {
    await Promise.all(toStore.map(({ claim }) => backend.idempotency.abandon(claim)));
    throw error;
  }
}
