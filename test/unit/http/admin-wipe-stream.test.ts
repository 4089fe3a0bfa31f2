import { afterEach, describe, expect, it } from 'vitest';
import type { NotificationBackend } from '../../../src/backend/backend.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { ManualClock } from '../../support/manual-clock.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/**
 * D30 (docs/design/rules/reference-0.13.md §6) through the real routes on the in-memory backend; the schema-less
 * message (no list) is covered end to end in test/e2e/admin.test.ts.
 */

let testApp: TestApp | undefined;
afterEach(async () => {
  await testApp?.app.close();
  testApp = undefined;
});

const KNOWN = 'dissemination, extreme_event, mars, sensor_cloud, test_polygon';

/** An in-memory backend that records the names wipeStream was asked for. */
function recordingBackend(): { backend: NotificationBackend; wiped: string[] } {
  const memory = new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 100, clock: new ManualClock() });
  const wiped: string[] = [];
  const backend: NotificationBackend = Object.assign(Object.create(memory) as NotificationBackend, {
    wipeStream: (name: string) => {
      wiped.push(name);
      return memory.wipeStream(name);
    },
  });
  return { backend, wiped };
}

async function wipe(app: TestApp, name: string) {
  const response = await app.app.inject({
    method: 'DELETE',
    url: '/api/v1/admin/wipe/stream',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ stream_name: name }),
  });
  return { status: response.statusCode, text: response.body, requestId: response.headers['x-request-id'] };
}

describe('DELETE /api/v1/admin/wipe/stream of an unknown stream (D30)', () => {
  it('is 404 with the sorted event types, in the admin field order, without asking the backend in strict mode', async () => {
    const { backend, wiped } = recordingBackend();
    testApp = await buildTestApp({ backend });
    const response = await wipe(testApp, 'nope');
    expect(response.status).toBe(404);
    expect(response.text).toBe(
      JSON.stringify({ success: false, message: `Stream not found: nope. Known event types: ${KNOWN}`, request_id: response.requestId }),
    );
    expect(wiped).toEqual([]);
  });

  it.each([['mars'], ['MARS'], ['Dissemination'], ['diss'], ['DISS'], ['polygon'], ['Test_Polygon']])(
    'matches %s case-insensitively as an event type or a base, and wipes that base even when nothing was stored',
    async (name) => {
      const { backend, wiped } = recordingBackend();
      testApp = await buildTestApp({ backend });
      const response = await wipe(testApp, name);
      expect(response.status, response.text).toBe(200);
      expect(JSON.parse(response.text).message).toBe(`Successfully wiped stream: ${name}`);
      expect(wiped).toHaveLength(1);
      expect(['mars', 'diss', 'polygon']).toContain(wiped[0]?.toLowerCase());
    },
  );

  it('not strict: asks the backend, which knows only bases it stored', async () => {
    const { backend, wiped } = recordingBackend();
    testApp = await buildTestApp({ backend, strict: false });
    await backend.publish({ topic: 'generic_base.v', payload: 'null' });
    expect((await wipe(testApp, 'GENERIC_BASE')).status).toBe(200);
    const missing = await wipe(testApp, 'other_base');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text).message).toBe(`Stream not found: other_base. Known event types: ${KNOWN}`);
    expect(wiped).toEqual(['GENERIC_BASE', 'other_base']);
  });
});
