import { afterEach, describe, expect, it } from 'vitest';
import { NotificationTooLargeError, type NotificationBackend, type StoredNotification } from '../../../src/backend/backend.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MARS_EXAMPLE } from '../../support/schemas.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

let testApp: TestApp | undefined;
afterEach(async () => {
  await testApp?.app.close();
  testApp = undefined;
});

async function storedUnder(backend: NotificationBackend, base: string, tokens: number): Promise<StoredNotification[]> {
  const pattern = new TopicPattern([base, ...Array<string>(tokens).fill('*')]);
  const batch = await backend.fetchBatch({ pattern, start: { kind: 'sequence', sequence: 0 }, limit: 100, upperBound: 1e9 });
  return [...batch.messages];
}

async function post(body: unknown) {
  testApp ??= await buildTestApp();
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return testApp.app.inject({ method: 'POST', url: '/api/v1/notification', payload });
}

describe('notify stores what it acknowledges', () => {
  it('stores the spec example under the encoded topic with the payload text (docs/design/rules/api.md §5.3)', async () => {
    const response = await post(MARS_EXAMPLE);
    expect(response.statusCode).toBe(200);
    const [stored] = await storedUnder((testApp as TestApp).backend, 'mars', 7);
    expect(stored?.topic).toBe('mars.od.0001.g.20250706.1200.ens%2Emember%2E7.7');
    expect(stored?.payload).toBe('"forecast complete"');
    expect(stored?.metadata).toEqual({
      aviso_identifier: '{"class":"od","date":"20250706","domain":"g","expver":"0001","step":"7","stream":"ens.member.7","time":"1200"}',
    });
  });

  it('stores an absent payload as null and sorts object payload keys, keeping number text', async () => {
    await post({ event_type: 'dissemination', identifier: { destination: 'FOO', class: 'od' } });
    await post(
      '{"event_type":"dissemination","identifier":{"destination":"FOO","class":"rd"},"payload":{"z":1.50,"a":12345678901234567890}}',
    );
    const stored = await storedUnder((testApp as TestApp).backend, 'diss', 2);
    expect(stored.map((s) => s.payload)).toEqual(['null', '{"a":12345678901234567890,"z":1.50}']);
  });

  it('keeps fields outside key_order in the identifier header (D7)', async () => {
    await post({
      event_type: 'extreme_event',
      identifier: { region: 'NORTH', run_time: '12', severity: 4, anomaly: '42.50', polygon: '(0,0,0,1,1,1,0,0)' },
    });
    const [stored] = await storedUnder((testApp as TestApp).backend, 'extreme_event', 4);
    expect(stored?.topic).toBe('extreme_event.north.1200.4.42%2E5');
    expect(JSON.parse(stored?.metadata?.aviso_identifier ?? '')).toEqual({
      anomaly: '42.5',
      polygon: [
        [0, 0],
        [0, 1],
        [1, 1],
        [0, 0],
      ],
      region: 'north',
      run_time: '1200',
      severity: '4',
    });
    expect(stored?.metadata?.spatial_bbox).toBe('0,0,1,1');
    expect(stored?.metadata?.spatial_geometry).toBe('(0,0,0,1,1,1,0,0)');
  });

  it('writes polygon text to spatial_geometry and the canonical array to the identifier header (D27)', async () => {
    await post(
      '{"event_type":"test_polygon","identifier":{"date":"20250706","time":"1200","polygon":[[0.0,0],[0,1.50],[1,1],[0.0,0]]},"payload":1}',
    );
    const [stored] = await storedUnder((testApp as TestApp).backend, 'polygon', 2);
    expect(stored?.metadata?.spatial_geometry).toBe('(0,0,0,1.5,1,1,0,0)');
    expect(stored?.metadata?.aviso_identifier).toBe('{"date":"20250706","polygon":[[0,0],[0,1.5],[1,1],[0,0]],"time":"1200"}');
  });

  it('stores a polygon sent as a string holding JSON like the array form (D27)', async () => {
    const response = await post({
      event_type: 'test_polygon',
      identifier: { date: '20250707', time: '1200', polygon: '[[0,0],[0,1.5],[1,1],[0,0]]' },
      payload: 1,
    });
    expect(response.statusCode, response.body).toBe(200);
    const stored = (await storedUnder((testApp as TestApp).backend, 'polygon', 2)).find((s) => s.topic === 'polygon.20250707.1200');
    expect(stored?.metadata?.spatial_geometry).toBe('(0,0,0,1.5,1,1,0,0)');
    expect(JSON.parse(stored?.metadata?.aviso_identifier ?? '').polygon).toEqual([
      [0, 0],
      [0, 1.5],
      [1, 1],
      [0, 0],
    ]);
  });

  it('accepts typed JSON numbers for Int and Float handlers (docs/design/rules/reference-0.13.md §9)', async () => {
    const response = await post(
      '{"event_type":"extreme_event","identifier":{"region":"south","run_time":"13","severity":5,"anomaly":42.50,"polygon":"(0,0,0,1,1,1,0,0)"}}',
    );
    expect(response.statusCode, response.body).toBe(200);
    const topics = (await storedUnder((testApp as TestApp).backend, 'extreme_event', 4)).map((s) => s.topic);
    expect(topics).toContain('extreme_event.south.1300.5.42%2E5');
  });

  it('stores a point cloud in its own header with a bounding box', async () => {
    await post({
      event_type: 'sensor_cloud',
      identifier: {
        date: '20250706',
        point_cloud: [
          [52.52, 13.4],
          [48.14, 11.58],
        ],
      },
    });
    const [stored] = await storedUnder((testApp as TestApp).backend, 'sensor_cloud', 1);
    expect(stored?.metadata?.spatial_point_cloud).toBe('[[52.52,13.4],[48.14,11.58]]');
    expect(stored?.metadata?.spatial_bbox).toBe('48.14,11.58,52.52,13.4');
    expect(JSON.parse(stored?.metadata?.aviso_identifier ?? '')).toEqual({ date: '20250706' });
  });

  it('stores nothing when validation fails', async () => {
    const response = await post({ event_type: 'dissemination', identifier: { destination: 'FOO' } });
    expect(response.statusCode).toBe(400);
    expect(await storedUnder((testApp as TestApp).backend, 'diss', 2)).toEqual([]);
  });
});

describe('notify when the backend fails', () => {
  it('answers 500 NOTIFICATION_STORAGE_FAILED with the cause in details', async () => {
    const memory = new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 1, clock: new ManualClock() });
    const failing: NotificationBackend = Object.assign(Object.create(memory) as NotificationBackend, {
      publish: async () => {
        throw new Error('stream MARS unavailable');
      },
    });
    testApp = await buildTestApp({ backend: failing });
    const response = await testApp.app.inject({
      method: 'POST',
      url: '/api/v1/notification',
      payload: JSON.stringify({ event_type: 'dissemination', identifier: { destination: 'FOO', class: 'od' } }),
    });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({
      code: 'NOTIFICATION_STORAGE_FAILED',
      details: 'stream MARS unavailable',
      error: 'Notification Storage Failed',
      message: 'Failed to store notification',
      request_id: response.headers['x-request-id'],
    });
  });
});

describe('generic event types in non-strict mode', () => {
  it('builds the topic from the values of the sorted keys (docs/design/rules/schema-and-validation.md §3.3)', async () => {
    testApp = await buildTestApp({ strict: false });
    await testApp.app.inject({
      method: 'POST',
      url: '/api/v1/notification',
      payload: JSON.stringify({ event_type: 'scratch', identifier: { b: 2, a: 'x.y' } }),
    });
    const [stored] = await storedUnder(testApp.backend, 'scratch', 2);
    expect(stored?.topic).toBe('scratch.x%2Ey.2');
    expect(stored?.metadata).toEqual({ aviso_identifier: '{"a":"x.y","b":"2"}' });
  });

  it('refuses a schema-less event type that names a configured topic base', async () => {
    testApp = await buildTestApp({ strict: false });
    const response = await testApp.app.inject({
      method: 'POST',
      url: '/api/v1/notification',
      payload: JSON.stringify({ event_type: 'diss', identifier: { a: 'x' } }),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('INVALID_NOTIFICATION_REQUEST');
  });

  it('refuses an event type whose stream name would exceed 255 bytes, encoded (D33), and stores nothing', async () => {
    const app = await buildTestApp({ strict: false });
    testApp = app;
    const post = (eventType: string) =>
      app.app.inject({
        method: 'POST',
        url: '/api/v1/notification',
        payload: JSON.stringify({ event_type: eventType, identifier: { a: 'x' } }),
      });
    // 85 dots encode to 255 bytes (%2E each): the longest name JetStream accepts.
    expect((await post('.'.repeat(85))).statusCode).toBe(200);
    const response = await post(`${'.'.repeat(85)}x`);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe(
      'Event type is too long to be used without a schema: its stream name would be 256 bytes, the limit is 255',
    );
    expect(await storedUnder(app.backend, `${'.'.repeat(85)}x`, 1)).toEqual([]);
  });
});

describe('notify when the broker cannot carry the notification (D33)', () => {
  it('answers 413 PAYLOAD_TOO_LARGE with the sizes, in the D15 shape', async () => {
    const memory = new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 1, clock: new ManualClock() });
    const tooLarge: NotificationBackend = Object.assign(Object.create(memory) as NotificationBackend, {
      publish: async () => {
        throw new NotificationTooLargeError(1_048_700, 1_048_576);
      },
    });
    testApp = await buildTestApp({ backend: tooLarge });
    const response = await testApp.app.inject({
      method: 'POST',
      url: '/api/v1/notification',
      payload: JSON.stringify({ event_type: 'dissemination', identifier: { destination: 'FOO', class: 'od' } }),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      error: 'payload_too_large',
      message: 'Notification too large: it would be 1048700 bytes with its headers, the broker accepts at most 1048576',
      request_id: response.headers['x-request-id'],
    });
  });
});

describe('notify when the notification alone is larger than the in-memory max_total_size', () => {
  it('answers 413 PAYLOAD_TOO_LARGE with the counted size, and stores nothing', async () => {
    // Below the floor startup enforces, as only a backend built without the configuration can be.
    const memory = new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 10, maxTotalBytes: 2048, clock: new ManualClock() });
    testApp = await buildTestApp({ backend: memory });
    const response = await testApp.app.inject({
      method: 'POST',
      url: '/api/v1/notification',
      payload: JSON.stringify({ event_type: 'dissemination', identifier: { destination: 'FOO', class: 'od' }, payload: 'x'.repeat(2000) }),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      error: 'payload_too_large',
      request_id: response.headers['x-request-id'],
    });
    expect(response.json().message).toMatch(
      /^Notification too large: it would count \d+ bytes in memory, the in-memory history holds at most 2048 \(max_total_size\)$/,
    );
    expect(await storedUnder(memory, 'diss', 2)).toEqual([]);
  });
});
