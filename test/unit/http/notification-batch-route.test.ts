import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { NotificationBackend, StoredNotification } from '../../../src/backend/backend.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';
import { createLogger } from '../../../src/logging/logger.js';
import { createPrometheusMetrics } from '../../../src/metrics/prometheus-metrics.js';
import { FaultyBackend } from '../../support/faulty-backend.js';
import { metricSum } from '../../support/metric-sum.js';
import { ManualClock } from '../../support/manual-clock.js';
import { MARS_EXAMPLE } from '../../support/schemas.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Batch notify (D48, docs/api.md#batch-notify-decision-d48) in process: each item answered and stored exactly
 * as the same notification sent alone to the single endpoint, every malformed batch refused whole
 * with nothing stored, and a store failure leaving stored exactly what the answer says.
 */

const apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map(({ app }) => app.close()));
});

async function testApp(options: Parameters<typeof buildTestApp>[0] = {}): Promise<TestApp> {
  const built = await buildTestApp(options);
  apps.push(built);
  return built;
}

function postBatch(app: TestApp, payload: string, headers: Record<string, string> = {}) {
  return app.app.inject({ method: 'POST', url: '/api/v1/notification/batch', payload, headers });
}

/** Every notification the backend holds, of every test schema, in sequence order per base. */
async function everythingStored(backend: NotificationBackend): Promise<StoredNotification[]> {
  const all: StoredNotification[] = [];
  for (const base of ['mars', 'diss', 'extreme_event', 'polygon', 'sensor_cloud']) {
    for (let tokens = 0; tokens <= 7; tokens++) {
      const pattern = new TopicPattern([base, ...Array<string>(tokens).fill('*')]);
      const batch = await backend.fetchBatch({ pattern, start: { kind: 'sequence', sequence: 0 }, limit: 10_000, upperBound: 1e9 });
      all.push(...batch.messages);
    }
  }
  const baseOf = (notification: StoredNotification) => notification.topic.split('.')[0] ?? '';
  return all.sort((a, b) => baseOf(a).localeCompare(baseOf(b)) || a.sequence - b.sequence);
}

const mars = (change: Record<string, unknown>) => ({ ...MARS_EXAMPLE, identifier: { ...MARS_EXAMPLE.identifier, ...change } });

/** Items a batch may carry: valid ones (some on the same topic) and one of each kind of refusal. */
const VALID_ITEMS: readonly unknown[] = [
  mars({ step: 1 }),
  mars({ step: 2 }),
  mars({ step: 1 }),
  { ...mars({ step: 3 }), payload: { z: 1.5, a: [1, 'x', null] } },
  { event_type: 'dissemination', identifier: { destination: 'FOO', class: 'od' } },
  { event_type: 'dissemination', identifier: { destination: 'BAR', class: 'rd' }, payload: 'x' },
  { event_type: 'extreme_event', identifier: { region: 'north', run_time: '12', severity: 4, polygon: '(0,0,0,1,1,1,0,0)' } },
];
const INVALID_ITEMS: readonly unknown[] = [
  mars({ class: 'odd' }),
  mars({ step: { gte: 4 } }),
  mars({ point: '52.5,13.4' }),
  mars({ colour: 'red' }),
  { ...MARS_EXAMPLE, to_id: '4' },
  { ...MARS_EXAMPLE, extra: 1 },
  { event_type: 7, identifier: {} },
  { identifier: {} },
  { event_type: 'nope', identifier: {} },
  { event_type: 'dissemination', identifier: { destination: 'FOO' } },
];

describe('batch notify answers and stores each item as the single endpoint would', () => {
  it('gives each item the single endpoint answer and stores the valid ones in order (property)', async () => {
    const item = fc.oneof(fc.constantFrom(...VALID_ITEMS), fc.constantFrom(...INVALID_ITEMS));
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 12 }), async (items) => {
        const batched = await testApp();
        const single = await testApp();
        const response = await postBatch(batched, JSON.stringify(items));
        const requestId = response.headers['x-request-id'];
        const answer = response.json<{
          request_id: string;
          status: string;
          stored: number;
          failed: number;
          results: Record<string, unknown>[];
        }>();

        const expected: Record<string, unknown>[] = [];
        for (const [index, one] of items.entries()) {
          const alone = await single.app.inject({ method: 'POST', url: '/api/v1/notification', payload: JSON.stringify(one) });
          // The single answer with the batch's request id and the item's index first.
          expected.push({ index, ...alone.json<Record<string, unknown>>(), request_id: requestId });
        }
        expect(answer.results).toEqual(expected);
        for (const result of answer.results) expect(Object.keys(result)[0]).toBe('index');
        const stored = expected.filter((result) => result.status === 'success').length;
        expect(answer).toMatchObject({ request_id: requestId, stored, failed: items.length - stored });
        expect(Object.keys(answer)).toEqual(['request_id', 'status', 'stored', 'failed', 'results']);
        const [status, code] = stored === items.length ? ['success', 200] : stored > 0 ? ['partial', 207] : ['error', 400];
        expect([answer.status, response.statusCode]).toEqual([status, code]);
        expect(await everythingStored(batched.backend)).toEqual(await everythingStored(single.backend));
        await Promise.all(apps.splice(0).map(({ app }) => app.close()));
      }),
      { numRuns: 40 },
    );
  });

  it('reads application/x-ndjson, one notification a line, blank lines skipped', async () => {
    const app = await testApp();
    const lines = `${JSON.stringify(mars({ step: 1 }))}\r\n\n  \n${JSON.stringify(mars({ step: 2 }))}\n`;
    const response = await postBatch(app, lines, { 'content-type': 'application/x-ndjson; charset=utf-8' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ status: 'success', stored: 2, failed: 0 });
    expect((await everythingStored(app.backend)).map((n) => n.sequence)).toEqual([1, 2]);
  });
});

describe('a malformed batch is refused whole and stores nothing', () => {
  const valid = JSON.stringify(mars({ step: 1 }));
  it.each([
    ['not JSON', `[${valid},`, {}, 400, 'INVALID_JSON'],
    ['an object', valid, {}, 400, 'BATCH_NOT_AN_ARRAY'],
    ['an empty array', '[]', {}, 400, 'BATCH_EMPTY'],
    ['an item that is not an object', `[${valid},"x"]`, {}, 400, 'BATCH_ITEM_NOT_AN_OBJECT'],
    ['an item that is an array', `[${valid},[]]`, {}, 400, 'BATCH_ITEM_NOT_AN_OBJECT'],
    ['too many items', `[${valid},${valid},${valid},${valid}]`, {}, 413, 'BATCH_TOO_MANY_ITEMS'],
    ['an NDJSON line that is not JSON', `${valid}\n{`, { 'content-type': 'application/x-ndjson' }, 400, 'INVALID_JSON'],
    ['an NDJSON line that is not an object', `${valid}\n3`, { 'content-type': 'application/x-ndjson' }, 400, 'BATCH_ITEM_NOT_AN_OBJECT'],
    ['an empty NDJSON body', '\n\n', { 'content-type': 'application/x-ndjson' }, 400, 'BATCH_EMPTY'],
    ['a malformed Idempotency-Key', `[${valid}]`, { 'idempotency-key': 'two words' }, 400, 'INVALID_IDEMPOTENCY_KEY'],
    ['a body over max_batch_bytes', `[${Array<string>(40).fill(valid).join(',')}]`, {}, 413, 'PAYLOAD_TOO_LARGE'],
  ])('%s', async (_what, payload, headers, status, code) => {
    const app = await testApp({ notificationEndpoint: { max_batch_items: 3, max_batch_bytes: 4096 } });
    const response = await postBatch(app, payload, headers);
    expect(response.statusCode, response.body).toBe(status);
    const body = response.json<Record<string, unknown>>();
    expect(body).toMatchObject({ code, request_id: response.headers['x-request-id'] });
    expect(typeof body.message).toBe('string');
    expect(await everythingStored(app.backend)).toEqual([]);
  });

  it('names the batch limit in the 413 of an oversized body, and the item count in BATCH_TOO_MANY_ITEMS', async () => {
    const app = await testApp({ notificationEndpoint: { max_batch_items: 3, max_batch_bytes: 4096 } });
    const big = await postBatch(app, `[${Array<string>(40).fill(valid).join(',')}]`);
    expect(big.json<{ message: string }>().message).toBe('Request body exceeds the limit of 4096 bytes');
    const many = await postBatch(app, `[${valid},${valid},${valid},${valid}]`);
    expect(many.json<{ message: string }>().message).toBe(
      'The batch holds 4 notifications, more than notification_endpoint.max_batch_items (3)',
    );
  });

  it('holds each item to application.max_body_bytes as if it were sent alone (JSON and NDJSON)', async () => {
    const app = await testApp({ maxBodyBytes: 1024 });
    const big = { ...mars({ step: 2 }), payload: 'x'.repeat(1100) };
    const alone = await app.app.inject({ method: 'POST', url: '/api/v1/notification', payload: JSON.stringify(big) });
    expect(alone.statusCode).toBe(413);
    for (const [payload, headers] of [
      [` [ ${JSON.stringify(mars({ step: 1 }))} ,\n ${JSON.stringify(big)} ] `, {}],
      [`${JSON.stringify(mars({ step: 1 }))}\n${JSON.stringify(big)}\n`, { 'content-type': 'application/x-ndjson' }],
    ] as const) {
      const response = await postBatch(app, payload, headers);
      expect(response.statusCode, response.body).toBe(207);
      const results = response.json<{ results: Record<string, unknown>[] }>().results;
      expect(results[1]).toEqual({ index: 1, ...alone.json<Record<string, unknown>>(), request_id: response.headers['x-request-id'] });
    }
    // Exactly the limit is accepted, as on notify: the item's bytes are counted from its first to its last.
    const fits = { ...mars({ step: 3 }), payload: '' };
    const padding = 1024 - Buffer.byteLength(JSON.stringify(fits));
    const exact = JSON.stringify({ ...fits, payload: 'é'.repeat(Math.floor(padding / 2)) + 'x'.repeat(padding % 2) });
    expect(Buffer.byteLength(exact)).toBe(1024);
    expect((await postBatch(app, `[${exact}]`)).statusCode).toBe(200);
    expect((await postBatch(app, `[${exact.replace('"payload":"', '"payload":"x')}]`)).statusCode).toBe(400);
  });

  it('takes a body larger than application.max_body_bytes up to max_batch_bytes', async () => {
    const app = await testApp({ maxBodyBytes: 1024, notificationEndpoint: { max_batch_bytes: 65_536 } });
    const items = Array.from({ length: 20 }, (_, step) => mars({ step }));
    const response = await postBatch(app, JSON.stringify(items));
    expect(response.statusCode, response.body).toBe(200);
    expect((await everythingStored(app.backend)).length).toBe(20);
  });
});

describe('a store failure in a batch', () => {
  const faulty = () => new FaultyBackend(new MemoryBackend({ maxHistoryPerTopic: 100, maxTopics: 1000, clock: new ManualClock() }));

  it('answers the failed item and every later one with the storage error; what is stored is what the answer says', async () => {
    const backend = faulty();
    // Steps 1, 2 | 1, 3: the repeated topic starts a second wave, which the failure of step 2 stops.
    backend.failPublishCalls = new Set([2]);
    const app = await testApp({ backend });
    const items = [mars({ step: 1 }), mars({ step: 2 }), mars({ step: 1 }), mars({ step: 3 })];
    const response = await postBatch(app, JSON.stringify(items));
    expect(response.statusCode).toBe(207);
    const answer = response.json<{ status: string; stored: number; failed: number; results: Record<string, unknown>[] }>();
    expect(answer).toMatchObject({ status: 'partial', stored: 1, failed: 3 });
    expect(answer.results.map((r) => r.status ?? r.code)).toEqual([
      'success',
      'NOTIFICATION_STORAGE_FAILED',
      'NOTIFICATION_STORAGE_FAILED',
      'NOTIFICATION_STORAGE_FAILED',
    ]);
    expect(answer.results[1]).toEqual({
      index: 1,
      code: 'NOTIFICATION_STORAGE_FAILED',
      details: 'injected failure of publish 2',
      error: 'Notification Storage Failed',
      message: 'Failed to store notification',
      request_id: response.headers['x-request-id'],
    });
    expect(backend.publishCalls).toBe(2);
    expect((await everythingStored(backend)).map((n) => n.topic)).toEqual(['mars.od.0001.g.20250706.1200.ens%2Emember%2E7.1']);
  });

  it('answers 500 when nothing could be stored, and 400 when every item was refused', async () => {
    const backend = faulty();
    backend.failPublishCalls = new Set([1]);
    const app = await testApp({ backend });
    const failed = await postBatch(app, JSON.stringify([mars({ step: 1 }), mars({ class: 'odd' })]));
    expect(failed.statusCode).toBe(500);
    expect(failed.json()).toMatchObject({ status: 'error', stored: 0, failed: 2 });
    const refused = await postBatch(app, JSON.stringify([mars({ class: 'odd' }), { event_type: 'nope', identifier: {} }]));
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ status: 'error', stored: 0, failed: 2 });
  });
});

describe('a batch with an Idempotency-Key', () => {
  const items = [mars({ step: 1 }), mars({ step: 2 }), mars({ step: 1 }), mars({ step: 3 }), mars({ class: 'odd' })];
  type Answer = { status: string; stored: number; failed: number; results: Record<string, unknown>[] };

  it('is answered again from the first success, storing nothing twice', async () => {
    const app = await testApp();
    const first = await postBatch(app, JSON.stringify(items), { 'idempotency-key': 'batch-1' });
    expect(first.statusCode, first.body).toBe(207);
    expect(first.headers['idempotent-replayed']).toBe('false');
    app.clock.advance(5000);
    const again = await postBatch(app, JSON.stringify(items), { 'idempotency-key': '"batch-1"' });
    expect(again.statusCode, again.body).toBe(207);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const withoutIds = (answer: Answer) => answer.results.map(({ request_id: _id, ...rest }) => rest);
    expect(withoutIds(again.json<Answer>())).toEqual(withoutIds(first.json<Answer>()));
    expect((await everythingStored(app.backend)).map((n) => n.sequence)).toEqual([1, 2, 3, 4]);
  });

  it('completes a batch cut by a store failure, in order, without duplicates', async () => {
    const backend = new FaultyBackend(new MemoryBackend({ maxHistoryPerTopic: 100, maxTopics: 1000, clock: new ManualClock() }));
    backend.failPublishCalls = new Set([2]);
    const app = await testApp({ backend });
    const first = await postBatch(app, JSON.stringify(items.slice(0, 4)), { 'idempotency-key': 'batch-2' });
    expect(first.json<Answer>()).toMatchObject({ status: 'partial', stored: 1, failed: 3 });
    const again = await postBatch(app, JSON.stringify(items.slice(0, 4)), { 'idempotency-key': 'batch-2' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('false');
    const stored = await everythingStored(backend);
    expect(stored.map((n) => n.topic.split('.').at(-1))).toEqual(['1', '2', '1', '3']);
    expect(stored.map((n) => n.sequence)).toEqual([1, 2, 3, 4]);
  });

  it('refuses each item whose record holds another notification with 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const app = await testApp();
    await postBatch(app, JSON.stringify([mars({ step: 1 }), mars({ step: 2 })]), { 'idempotency-key': 'batch-3' });
    const other = await postBatch(app, JSON.stringify([mars({ step: 1 }), mars({ step: 9 })]), { 'idempotency-key': 'batch-3' });
    expect(other.statusCode, other.body).toBe(207);
    const results = other.json<Answer>().results;
    expect(results[0]).toMatchObject({ index: 0, status: 'success' });
    expect(results[1]).toEqual({
      index: 1,
      code: 'IDEMPOTENCY_KEY_REUSED',
      error: 'idempotency_key_reused',
      message: 'Idempotency-Key was already used for a different notification',
      request_id: other.headers['x-request-id'],
    });
    expect((await everythingStored(app.backend)).length).toBe(2);
  });

  it('never shares a record with a single notify under the same key', async () => {
    const app = await testApp();
    const single = await app.app.inject({
      method: 'POST',
      url: '/api/v1/notification',
      payload: JSON.stringify(mars({ step: 1 })),
      headers: { 'idempotency-key': 'shared' },
    });
    expect(single.statusCode).toBe(200);
    const batch = await postBatch(app, JSON.stringify([mars({ step: 1 })]), { 'idempotency-key': 'shared' });
    expect(batch.statusCode).toBe(200);
    expect(batch.headers['idempotent-replayed']).toBe('false');
    expect((await everythingStored(app.backend)).length).toBe(2);
  });
});

describe('batch notify metrics (docs/metrics.md)', () => {
  it('counts each item in aviso_notifications_total and each batch in aviso_notification_batches_total', async () => {
    const metrics = createPrometheusMetrics({ version: '1', backendKind: 'in_memory', eventTypes: ['mars', 'dissemination'] });
    const backend = metrics.instrumentBackend(new MemoryBackend({ maxHistoryPerTopic: 100, maxTopics: 1000, clock: new ManualClock() }));
    const app = await testApp({ metrics, backend });
    await postBatch(app, JSON.stringify([mars({ step: 1 }), mars({ class: 'odd' }), { event_type: 'nope', identifier: {} }]));
    await postBatch(app, JSON.stringify([mars({ step: 2 })]));
    await postBatch(app, JSON.stringify([mars({ class: 'odd' })]));
    await postBatch(app, '{}');
    const { body } = await metrics.render();
    const notifications = (labels: Record<string, string>) => metricSum(body, 'aviso_notifications_total', labels);
    expect(notifications({ event_type: 'mars', status: 'success' })).toBe(2);
    expect(notifications({ event_type: 'mars', status: 'error' })).toBe(2);
    expect(notifications({ event_type: 'unknown', status: 'rejected' })).toBe(1);
    const batches = (status: string) => metricSum(body, 'aviso_notification_batches_total', { status });
    expect([batches('success'), batches('partial'), batches('error'), batches('refused')]).toEqual([1, 1, 1, 1]);
    expect(metricSum(body, 'aviso_backend_operations_total', { operation: 'publish', outcome: 'ok' })).toBe(2);
  });
});

describe('batch notify log lines (docs/logging.md)', () => {
  it('writes one line per batch with its counts and one per failed item', async () => {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const app = await testApp({ logger: createLogger({ level: 'info', serviceVersion: 'test', env: {}, destination }) });
    await postBatch(app, JSON.stringify([mars({ step: 1 }), mars({ class: 'odd' }), mars({ step: 2 })]));
    const attributes = (event: string) =>
      lines.map((line) => line.attributes as Record<string, unknown>).filter((attributes) => attributes['event.name'] === event);
    expect(attributes('api.notification.batch.processed')).toEqual([
      expect.objectContaining({ outcome: 'partial', items: 3, stored: 2, failed: 1, status_code: 207 }),
    ]);
    expect(attributes('api.notification.batch.item.refused')).toEqual([
      expect.objectContaining({ index: 1, event_type: 'mars', error_code: 'INVALID_NOTIFICATION_REQUEST' }),
    ]);
    expect(attributes('api.notification.batch.item.failed')).toEqual([]);
  });
});
