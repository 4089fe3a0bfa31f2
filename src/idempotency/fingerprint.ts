import { createHash } from 'node:crypto';
import { METADATA_KEYS, type Metadata } from '../notification/stored-notification.js';
import { canonicalJson } from '../json/canonical-json.js';

/**
 * What an `Idempotency-Key` is compared by (docs/api.md "Idempotent notify"): SHA-256 over what notify
 * stores, so two requests differing only in spelling (a date written two ways, key order,
 * whitespace) have one fingerprint. The identifier header and the payload are already canonical
 * JSON (src/schema/notify-identifier.ts); one JSON array keeps the three parts apart.
 */
export function notificationFingerprint(eventType: string, stored: { readonly payload: string; readonly metadata?: Metadata }): string {
  const identifier = stored.metadata?.[METADATA_KEYS.identifier] ?? '{}';
  return createHash('sha256')
    .update(canonicalJson([eventType, identifier, stored.payload]))
    .digest('hex');
}

/**
 * The name of a key's record and the `Nats-Msg-Id` of its publish: lower-case hex SHA-256 of
 * `<event type>\n<key>`, so the key is scoped to its event type and never appears in NATS or a log.
 */
export function idempotencyRecordKey(eventType: string, key: string): string {
  return createHash('sha256').update(`${eventType}\n${key}`).digest('hex');
}
