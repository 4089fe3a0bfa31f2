import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../support/test-app.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';

/** D24: whatever a client sends, notify answers 200 or a documented 4xx, never a 5xx. */
let testApp: TestApp;
beforeAll(async () => {
  testApp = await buildTestApp();
});
afterAll(async () => {
  await testApp.app.close();
});

const DOCUMENTED_4XX = new Set([
  'INVALID_JSON',
  'UNKNOWN_FIELD',
  'INVALID_REQUEST_SHAPE',
  'UNKNOWN_EVENT_TYPE',
  'INVALID_NOTIFICATION_REQUEST',
  'PAYLOAD_TOO_LARGE',
]);

const eventTypes = fc.constantFrom(...Object.keys(TEST_SCHEMAS), 'unknown', '');
const fieldNames = fc.constantFrom(...new Set(Object.values(TEST_SCHEMAS).flatMap((s) => Object.keys(s.identifier))), 'point', 'colour');
const scalar = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('', '*', '1.5', '-0', '2025-02-29', '24:00', '١٢:٣٠', '1e400', '(0,0,0,1,1,1,0,0)', 'NaN'),
);
const value = fc.oneof(
  scalar,
  fc.array(fc.array(fc.oneof(fc.double(), fc.integer(), fc.string()), { maxLength: 3 }), { maxLength: 6 }),
  fc.dictionary(fc.constantFrom('eq', 'in', 'gte', 'between', 'x'), scalar, { maxKeys: 2 }),
);
const body = fc.record(
  {
    event_type: eventTypes,
    identifier: fc.dictionary(fieldNames, value, { maxKeys: 9 }),
    payload: fc.jsonValue(),
  },
  { requiredKeys: ['event_type', 'identifier'] },
);

describe('notify under arbitrary input', () => {
  it('answers 200 or a documented 400 for random identifier values', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (request) => {
        const response = await testApp.app.inject({
          method: 'POST',
          url: '/api/v1/notification',
          payload: JSON.stringify(request),
        });
        if (response.statusCode === 200) return;
        expect(response.statusCode).toBe(400);
        expect(DOCUMENTED_4XX.has(response.json().code)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('answers a documented 400 for random bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (bytes) => {
        const response = await testApp.app.inject({
          method: 'POST',
          url: '/api/v1/notification',
          payload: Buffer.from(bytes),
        });
        expect(response.statusCode).toBe(400);
        expect(DOCUMENTED_4XX.has(response.json().code)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
