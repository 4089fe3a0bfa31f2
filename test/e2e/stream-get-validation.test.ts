import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODE, call, expectShapeA, queryOf, withoutRequestId, type Answer, type Endpoint } from '../support/get-streams.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';

/**
 * The 400s of `GET /api/v1/watch` and `GET /api/v1/replay` (docs/design/rules/browser.md §1) against the real server
 * process: every POST rule answered identically, and what only a query or `Last-Event-ID` can get
 * wrong. Frames, resume and 204: stream-get.test.ts.
 */

const EXTREME = { region: 'north', run_time: '1200', severity: '4' };
const QUERY_FIELDS = '["event_type", "identifier", "from_id", "from_date", "to_id", "to_date"]';

const malformedLastEventId = (value: string): string =>
  `Last-Event-ID must be '<event_type>@<sequence>', the id of a notification of this stream. Got: '${value}'`;
const otherEventType = (value: string, eventType: string): string =>
  `Last-Event-ID '${value}' names another event type than this stream's '${eventType}'`;

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ config: serverConfig() });
});
afterAll(async () => {
  await server.stop();
});

const post = (endpoint: Endpoint, body: unknown): Promise<Answer> =>
  call(`${server.url}/api/v1/${endpoint}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
const get = (endpoint: Endpoint, query: string, headers: Record<string, string> = {}): Promise<Answer> =>
  call(`${server.url}/api/v1/${endpoint}?${query}`, { headers });

describe('GET answers every invalid request exactly as POST does', () => {
  const cases: [string, Endpoint, Record<string, unknown>][] = [
    ['an unknown event type', 'watch', { event_type: 'no_such_type', identifier: {} }],
    ['a missing event_type', 'replay', { identifier: EXTREME, from_id: '1' }],
    ['an identifier that is not an object', 'watch', { event_type: 'extreme_event', identifier: 5 }],
    ['a malformed from_id', 'watch', { event_type: 'extreme_event', identifier: EXTREME, from_id: '-1' }],
    ['a malformed from_date', 'replay', { event_type: 'extreme_event', identifier: EXTREME, from_date: 'not-a-date' }],
    ['both start cursors', 'replay', { event_type: 'extreme_event', identifier: EXTREME, from_id: '1', from_date: '1740509903' }],
    ['a replay without a start cursor', 'replay', { event_type: 'extreme_event', identifier: EXTREME }],
    ['to_id on a watch', 'watch', { event_type: 'extreme_event', identifier: EXTREME, to_id: '5' }],
    ['to_date on a watch', 'watch', { event_type: 'extreme_event', identifier: EXTREME, to_date: '1740509903' }],
    ['to_id below from_id', 'replay', { event_type: 'extreme_event', identifier: EXTREME, from_id: '5', to_id: '3' }],
    ['a missing required identifier field', 'watch', { event_type: 'extreme_event', identifier: { region: 'north' } }],
    ['an enum value out of its list', 'watch', { event_type: 'extreme_event', identifier: { ...EXTREME, region: 'up' } }],
    ['an unknown identifier field', 'replay', { event_type: 'extreme_event', identifier: { ...EXTREME, colour: 'red' }, from_id: '0' }],
  ];

  it.each(cases)('%s (%s)', async (_name, endpoint, body) => {
    const [byPost, byGet] = await Promise.all([post(endpoint, body), get(endpoint, queryOf(body))]);
    expect(byPost.status).toBeGreaterThanOrEqual(400);
    expect(byGet.status).toBe(byPost.status);
    expect(withoutRequestId(byGet)).toBe(withoutRequestId(byPost));
  });

  it('answers a parameter given twice as POST answers a sequence in its place', async () => {
    const byGet = await get('watch', 'event_type=extreme_event&event_type=mars');
    const byPost = await post('watch', { event_type: ['extreme_event', 'mars'], identifier: {} });
    expect(byGet.status).toBe(400);
    expect(withoutRequestId(byGet)).toBe(withoutRequestId(byPost));
  });
});

describe('GET-only rules of the query', () => {
  it.each([['token'], ['access_token'], ['payload'], ['__proto__']])('refuses the parameter %j as an unknown field', async (name) => {
    for (const endpoint of ['watch', 'replay'] as const) {
      const answer = await get(endpoint, `event_type=mars&identifier=%7B%7D&${name}=abc`);
      expectShapeA(
        answer,
        endpoint,
        'UNKNOWN_FIELD',
        `Request contains unknown fields: Unknown field '${name}' in request. Allowed fields: ${QUERY_FIELDS}`,
      );
    }
  });

  it('answers identifier text that is not JSON with the POST body message, naming the parameter', async () => {
    for (const text of ['{"region":', 'north', '']) {
      const byPost = JSON.parse((await post('watch', text)).text) as { message: string };
      expect(byPost.message).toMatch(/^JSON parsing failed: /);
      const reason = byPost.message.slice('JSON parsing failed: '.length);
      const answer = await get('watch', `event_type=extreme_event&identifier=${encodeURIComponent(text)}`);
      expectShapeA(answer, 'watch', 'INVALID_JSON', `JSON parsing failed: query parameter 'identifier': ${reason}`);
    }
  });

  it('takes an omitted identifier as {}', async () => {
    const byGet = await get('watch', 'event_type=extreme_event');
    const byPost = await post('watch', { event_type: 'extreme_event', identifier: {} });
    expect(byGet.status).toBe(400);
    expect(withoutRequestId(byGet)).toBe(withoutRequestId(byPost));
  });

  it('has no HEAD form', async () => {
    const answer = await call(`${server.url}/api/v1/watch?event_type=mars`, { method: 'HEAD' });
    expect(answer.status).toBe(405);
  });
});

describe('Last-Event-ID', () => {
  const MARS = { event_type: 'mars', identifier: { class: 'od' } };

  it.each([['mars'], ['mars@'], ['mars@-1'], ['mars@01'], ['mars@1.5'], ['@5'], ['mars@ 5'], ['mars@18446744073709551615']])(
    'refuses the malformed value %j',
    async (value) => {
      for (const endpoint of ['watch', 'replay'] as const) {
        const answer = await get(endpoint, queryOf({ ...MARS, from_id: '1' }), { 'last-event-id': value });
        expectShapeA(answer, endpoint, CODE[endpoint], malformedLastEventId(value));
      }
    },
  );

  it('refuses the id of another event type', async () => {
    for (const endpoint of ['watch', 'replay'] as const) {
      const answer = await get(endpoint, queryOf({ ...MARS, from_id: '1' }), { 'last-event-id': 'extreme_event@5' });
      expectShapeA(answer, endpoint, CODE[endpoint], otherEventType('extreme_event@5', 'mars'));
    }
  });

  it('judges the URL first: an invalid URL is refused whatever the header says', async () => {
    const answer = await get('replay', queryOf({ ...MARS, from_id: 'x' }), { 'last-event-id': 'mars@3' });
    expectShapeA(
      answer,
      'replay',
      'INVALID_REPLAY_REQUEST',
      "from_id must be a valid positive integer. Got: 'x'. Valid examples: '1', '123', '9999'",
    );
  });

  it('is never read on POST', async () => {
    const answer = await call(`${server.url}/api/v1/replay`, {
      method: 'POST',
      body: JSON.stringify({ ...MARS, from_id: '1' }),
      headers: { 'last-event-id': 'not an id' },
    });
    expect(answer.status).toBe(200);
  });
});
