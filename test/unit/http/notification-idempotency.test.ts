import { afterEach, describe, expect, it } from 'vitest';
import type { NotificationToStore, PublishOptions, PublishResult } from '../../../src/backend/backend.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { ManualClock } from '../../support/manual-clock.js';
import { FaultyBackend } from '../../support/faulty-backend.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/**
 * The in-memory backend stores within one turn of the event loop, so a real process never shows
 * a concurrent retry the pending state; here a publish held open (and one that fails) shows the
 * in-memory answers the end-to-end suite can only reach on JetStream (docs/api.md "Idempotent notify").
 */
class HeldBackend extends FaultyBackend {
  hold: Promise<void> | undefined;
  failPublish: Error | undefined;

  override async publish(notification: NotificationToStore, options?: PublishOptions): Promise<PublishResult> {
    await this.hold;
    if (this.failPublish) throw this.failPublish;
    return super.publish(notification, options);
  }
}

let testApp: TestApp | undefined;
afterEach(async () => {
  await testApp?.app.close();
  testApp = undefined;
});

async function setup(): Promise<{ app: TestApp; backend: HeldBackend }> {
  const clock = new ManualClock();
  const backend = new HeldBackend(new MemoryBackend({ maxHistoryPerTopic: 100, maxTopics: 100, clock }));
  testApp = await buildTestApp({ backend, clock });
  return { app: testApp, backend };
}

const body = JSON.stringify({ event_type: 'dissemination', identifier: { destination: 'A', class: 'od' } });
const post = (app: TestApp, key: string) =>
  app.app.inject({ method: 'POST', url: '/api/v1/notification', payload: body, headers: { 'idempotency-key': key } });

describe('notify with an Idempotency-Key on the in-memory backend', () => {
  it('answers 409 with Retry-After: 1 while the first request is being stored, then replays it', async () => {
    const { app, backend } = await setup();
    let release: () => void = () => undefined;
    backend.hold = new Promise((resolve) => (release = resolve));
    const first = post(app, 'k');
    // Wait for the first request to hold the key: the second then meets its pending record.
    for (let i = 0; i < 100; i++) await new Promise((resolve) => setImmediate(resolve));
    const second = await post(app, 'k');
    expect(second.statusCode).toBe(409);
    expect(second.headers['retry-after']).toBe('1');
    expect(JSON.parse(second.body)).toEqual({
      code: 'IDEMPOTENCY_KEY_IN_PROGRESS',
      error: 'idempotency_key_in_progress',
      message: 'A request with this Idempotency-Key is still being processed',
      request_id: second.headers['x-request-id'],
    });
    backend.hold = undefined;
    release();
    expect((await first).headers['idempotent-replayed']).toBe('false');
    expect((await post(app, 'k')).headers['idempotent-replayed']).toBe('true');
  });

  it('keeps no record of a 5xx: the retry with the same key is stored', async () => {
    const { app, backend } = await setup();
    backend.failPublish = new Error('backend down');
    const failed = await post(app, 'k5');
    expect(failed.statusCode).toBe(500);
    expect(JSON.parse(failed.body).code).toBe('NOTIFICATION_STORAGE_FAILED');
    backend.failPublish = undefined;
    const retry = await post(app, 'k5');
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('false');
  });
});
