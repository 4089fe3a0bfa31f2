import { afterEach, describe, expect, it } from 'vitest';
import type { NotificationBackend } from '../../../src/backend/backend.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { ManualClock } from '../../support/manual-clock.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/**
 * D33 on /watch and /replay: a subject pattern over 2,048 bytes is a 400 with the endpoint's code
 * and the D24 message, checked after the identifier is validated and before any backend call.
 */

let testApp: TestApp | undefined;
afterEach(async () => {
  await testApp?.app.close();
  testApp = undefined;
});

/** An in-memory backend that fails the test if a stream touches it. */
function untouchableBackend(): { backend: NotificationBackend; calls: string[] } {
  const memory = new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 100, clock: new ManualClock() });
  const calls: string[] = [];
  const record = (name: string) => async () => {
    calls.push(name);
    throw new Error(`${name} must not be called`);
  };
  const backend: NotificationBackend = Object.assign(Object.create(memory) as NotificationBackend, {
    subscribe: record('subscribe'),
    captureHistoryBound: record('captureHistoryBound'),
    fetchBatch: record('fetchBatch'),
    openReplay: record('openReplay'),
  });
  return { backend, calls };
}

async function post(endpoint: 'watch' | 'replay', body: unknown) {
  const response = await (testApp as TestApp).app.inject({ method: 'POST', url: `/api/v1/${endpoint}`, payload: JSON.stringify(body) });
  return { status: response.statusCode, json: response.json<Record<string, unknown>>() };
}

// `diss.<destination>.od`: 8 bytes besides the destination.
const destinationOf = (topicBytes: number) => 'd'.repeat(topicBytes - 8);

describe.each([
  ['watch', 'INVALID_WATCH_REQUEST', 'Invalid Watch Request', {}],
  ['replay', 'INVALID_REPLAY_REQUEST', 'Invalid Replay Request', { from_id: '1' }],
] as const)('POST /api/v1/%s with a pattern over 2,048 bytes (D33)', (endpoint, code, label, cursor) => {
  it('is 400 with the D24 message in message and details, and no backend call', async () => {
    const { backend, calls } = untouchableBackend();
    testApp = await buildTestApp({ backend });
    const response = await post(endpoint, {
      event_type: 'dissemination',
      identifier: { destination: destinationOf(2049), class: 'od' },
      ...cursor,
    });
    const message = 'Identifier values are too long: the topic would be 2049 bytes, the limit is 2048';
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code, error: label, message, details: message });
    expect(calls).toEqual([]);
  });

  it('lets exactly 2,048 bytes through to the backend, a wildcard counted as `*`', async () => {
    const { backend, calls } = untouchableBackend();
    testApp = await buildTestApp({ backend });
    // `diss.<2,041 bytes>.*` is 2,048 bytes; `od` instead of `*` would be 2,049.
    const response = await post(endpoint, {
      event_type: 'dissemination',
      identifier: { destination: destinationOf(2049), class: '*' },
      ...cursor,
    });
    expect(calls.length).toBeGreaterThan(0);
    expect(response.json.code).toBe('SSE_STREAM_INITIALIZATION_FAILED');
  });

  it('comes after identifier validation: an unknown field is reported first', async () => {
    testApp = await buildTestApp({ backend: untouchableBackend().backend });
    const response = await post(endpoint, {
      event_type: 'dissemination',
      identifier: { destination: destinationOf(5000), class: 'od', bogus: 'x' },
      ...cursor,
    });
    expect(response.status).toBe(400);
    expect(response.json.message).toBe(`Unknown field 'bogus' provided for ${endpoint} operation`);
  });
});
