import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { idempotencyRecordKey, notificationFingerprint } from '../../../src/idempotency/fingerprint.js';
import { parseNotificationRequest } from '../../../src/http/routes/request-body.js';
import { prepareNotification } from '../../../src/schema/notify-identifier.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';

/** docs/api.md "Idempotent notify": the fingerprint is over what would be stored, not over the body text. */
const registry = new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, true);
const generic = new SchemaRegistry(undefined, false);

function fingerprintOf(bodyText: string, schemas: SchemaRegistry = registry): string {
  const body = parseNotificationRequest('notify', Buffer.from(bodyText));
  return notificationFingerprint(body.event_type, prepareNotification(schemas, body));
}

const MARS = (date: string, extra = '') =>
  `{"event_type":"mars","identifier":{"class":"od","expver":"0001","domain":"g","date":"${date}","time":"1200","stream":"enfo","step":"1"},"payload":{"a":1,"b":[1,2]}${extra}}`;

describe('notificationFingerprint', () => {
  it('is the same for a date written as 2025-07-06 and as 20250706', () => {
    expect(fingerprintOf(MARS('2025-07-06'))).toBe(fingerprintOf(MARS('20250706')));
  });

  it('is the same whatever the key order and whitespace of the body', () => {
    const reordered =
      '{ "payload" : { "b" : [ 1 , 2 ], "a" : 1 },\n "identifier": {"step":"1","stream":"enfo","time":"1200","date":"20250706","domain":"g","expver":"0001","class":"od"}, "event_type":"mars" }';
    expect(fingerprintOf(reordered)).toBe(fingerprintOf(MARS('20250706')));
  });

  it('differs for another identifier value', () => {
    expect(fingerprintOf(MARS('20250707'))).not.toBe(fingerprintOf(MARS('20250706')));
  });

  it('differs for another payload', () => {
    const other = MARS('20250706').replace('"a":1', '"a":2');
    expect(fingerprintOf(other)).not.toBe(fingerprintOf(MARS('20250706')));
  });

  it('differs for another event type with the same identifier and payload', () => {
    const body = (eventType: string) => `{"event_type":"${eventType}","identifier":{"x":"1"}}`;
    expect(fingerprintOf(body('alpha'), generic)).not.toBe(fingerprintOf(body('beta'), generic));
  });

  it('treats an absent payload and null alike (both stored as null)', () => {
    const body = (payload: string) => `{"event_type":"alpha","identifier":{"x":"1"}${payload}}`;
    expect(fingerprintOf(body(''), generic)).toBe(fingerprintOf(body(',"payload":null'), generic));
  });

  it('reads a stored notification the same as the one that was stored', () => {
    const body = parseNotificationRequest('notify', Buffer.from(MARS('2025-07-06')));
    const prepared = prepareNotification(registry, body);
    const stored = { sequence: 3, topic: prepared.topic, payload: prepared.payload, timestampNs: 1n, metadata: { ...prepared.metadata } };
    expect(notificationFingerprint('mars', stored)).toBe(notificationFingerprint('mars', prepared));
  });
});

describe('idempotencyRecordKey', () => {
  it('is the lower-case hex SHA-256 of "<event type>\\n<key>"', () => {
    expect(idempotencyRecordKey('mars', 'k-1')).toBe(createHash('sha256').update('mars\nk-1').digest('hex'));
    expect(idempotencyRecordKey('mars', 'k-1')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('scopes the key to its event type', () => {
    expect(idempotencyRecordKey('mars', 'k-1')).not.toBe(idempotencyRecordKey('diss', 'k-1'));
  });
});
