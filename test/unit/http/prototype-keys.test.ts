import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../../support/test-app.js';

/**
 * Identifier keys that name Object.prototype members (`__proto__`, `constructor`, `toString`) on
 * schema-less event types (non-strict mode). `{"__proto__":"x"}` used to be a 500 on notify:
 * the canonical identifier was a plain object, so the key became a prototype write.
 */

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp({ strict: false }));
});
afterAll(() => app.close());

const notify = (identifier: unknown) =>
  app.inject({ method: 'POST', url: '/api/v1/notification', payload: JSON.stringify({ event_type: 'generic_proto', identifier }) });

describe('prototype-named identifier keys on generic event types', () => {
  it.each([
    ['__proto__ with another key', '{"__proto__":"x","a":"b"}'],
    ['__proto__ alone', '{"__proto__":"x"}'],
    ['constructor and toString', '{"constructor":"x","toString":"y"}'],
    ['hasOwnProperty', '{"hasOwnProperty":"1"}'],
  ])('%s: notify is 200 and the key is kept as a key', async (_label, identifierText) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/notification',
      payload: `{"event_type":"generic_proto","identifier":${identifierText},"payload":"p"}`,
    });
    expect(response.statusCode, response.body).toBe(200);
  });

  it('a __proto__ object value is the usual 400, not a prototype write', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/notification',
      payload: '{"event_type":"generic_proto","identifier":{"__proto__":{"a":"b"}}}',
    });
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'INVALID_NOTIFICATION_REQUEST' });
  });

  it('the stored identifier carries __proto__ as an own key', async () => {
    expect((await notify({ a: 'z' })).statusCode).toBe(200);
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/notification',
      payload: '{"event_type":"generic_keys","identifier":{"__proto__":"x"},"payload":"p"}',
    });
    expect(response.statusCode, response.body).toBe(200);
    const replay = await app.inject({
      method: 'POST',
      url: '/api/v1/replay',
      payload: '{"event_type":"generic_keys","identifier":{"__proto__":"x"},"from_id":"1"}',
    });
    expect(replay.statusCode).toBe(200);
    expect(replay.body).toContain('"identifier":{"__proto__":"x"}');
  });
});
