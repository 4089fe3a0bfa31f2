import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { randomUUID } from 'node:crypto';
import { connect, headers as natsHeaders } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyRecordKey, notificationFingerprint } from '../../src/idempotency/fingerprint.js';
import { parseNotificationRequest } from '../../src/http/routes/request-body.js';
import { prepareNotification } from '../../src/schema/notify-identifier.js';
import { SchemaRegistry } from '../../src/schema/schema-registry.js';
import type { EventSchemaSource } from '../../src/schema/event-schema.js';
import { BACKEND_KINDS, BackendUnderTest } from '../support/backends.js';
import { UUID_V4, postJson, request, type JsonResponse } from '../support/http.js';
import { eventually } from '../support/eventually.js';
import { metricSum } from '../support/metric-sum.js';
import { findFreePort } from '../support/ports.js';
import { TEST_SCHEMAS } from '../support/schemas.js';
import { startServer, type LogLine, type RunningServer } from '../support/server-process.js';
import { SseClient, withoutHeartbeats } from '../support/sse-client.js';

/** Every answer of docs/api.md "Idempotent notify", on both backends, through the real server process. */

const DISS = (tag: string, extra: Record<string, unknown> = {}) => ({
  event_type: 'dissemination',
  identifier: { destination: tag, class: 'od' },
  payload: { note: tag },
  ...extra,
});
const marsBody = (tag: string, date: string) => ({
  event_type: 'mars',
  identifier: { class: 'od', expver: '0001', domain: 'g', date, time: '1200', stream: tag, step: '1' },
  payload: { a: 1, b: 2 },
});

function notify(server: RunningServer, body: unknown, key?: string, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return postJson(`${server.url}/api/v1/notification`, body, { ...(key === undefined ? {} : { 'idempotency-key': key }), ...headers });
}

/** A POST with headers as node writes them: an array value is that header sent once per item. */
function rawPost(url: string, body: string, headers: OutgoingHttpHeaders): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** How many notifications the server holds for a filter: a replay from the start, counted. */
async function storedCount(server: RunningServer, eventType: string, identifier: Record<string, unknown>): Promise<number> {
  const client = await SseClient.open(`${server.url}/api/v1/replay`, { event_type: eventType, identifier, from_id: '0' });
  expect(client.status, client.errorBody).toBe(200);
  const events = withoutHeartbeats(await client.rest());
  return events.filter((event) => event.json.type !== undefined && event.json.specversion !== undefined).length;
}

const dissCount = (server: RunningServer, tag: string) => storedCount(server, 'dissemination', { destination: tag, class: 'od' });

function expectSuccess(response: JsonResponse, replayed: boolean): void {
  expect(response.status, response.text).toBe(200);
  expect(Object.keys(response.json)).toEqual(['status', 'request_id', 'processed_at']);
  expect(response.json.request_id).toBe(response.headers.get('x-request-id'));
  expect(response.json.request_id).toMatch(UUID_V4);
  expect(response.headers.get('idempotent-replayed')).toBe(String(replayed));
}

function expectError(response: JsonResponse, status: number, code: string, message: string): void {
  expect(response.status, response.text).toBe(status);
  expect(response.json).toMatchObject({ code, message, request_id: response.headers.get('x-request-id') });
  expect(response.headers.get('idempotent-replayed')).toBeNull();
}

const eventName = (line: LogLine) => line.attributes?.['event.name'];
const processedLine = (server: RunningServer, requestId: unknown) =>
  server.logs.find((line) => eventName(line) === 'api.notification.processed' && line.attributes?.request_id === requestId);

const KEY_MESSAGE = 'Idempotency-Key must be one value of 1 to 255 visible ASCII characters';
const REUSED_MESSAGE = 'Idempotency-Key was already used for a different notification';
const IN_PROGRESS_MESSAGE = 'A request with this Idempotency-Key is still being processed';

describe.each(BACKEND_KINDS)('Idempotency-Key on the %s backend', (kind) => {
  const backend = new BackendUnderTest(kind);
  let server: RunningServer;
  let metricsPort: number;
  let counter = 0;
  const tag = () => `${kind === 'jetstream' ? 'J' : 'M'}${++counter}`;

  beforeAll(async () => {
    await backend.start();
    metricsPort = await findFreePort();
    server = await startServer({ config: backend.config({ metrics: { enabled: true, port: metricsPort } }) });
  });
  afterAll(async () => {
    await server?.stop();
    await backend.stop();
  });

  it('stores the first request and answers a retry from it: own request_id, original processed_at, nothing stored', async () => {
    const t = tag();
    const key = randomUUID();
    const first = await notify(server, DISS(t), key);
    expectSuccess(first, false);
    const retry = await notify(server, DISS(t), key);
    expectSuccess(retry, true);
    expect(retry.json.request_id).not.toBe(first.json.request_id);
    expect(retry.json.processed_at).toBe(first.json.processed_at);
    expect(await dissCount(server, t)).toBe(1);
  });

  it('treats a retry spelled differently (date format, key order, whitespace) as the same notification', async () => {
    const t = tag();
    const key = `spelling-${t}`;
    expectSuccess(await notify(server, marsBody(t, '2025-07-06'), key), false);
    const respelled = `{ "payload": {"b":2, "a":1},
      "identifier": {"step":"1","stream":"${t}","time":"1200","date":"20250706","domain":"g","expver":"0001","class":"od"},
      "event_type": "mars" }`;
    expectSuccess(await notify(server, respelled, key), true);
    expect(await storedCount(server, 'mars', { class: 'od', stream: t })).toBe(1);
  });

  it('refuses the key with a different notification: 422 IDEMPOTENCY_KEY_REUSED, nothing stored', async () => {
    const t = tag();
    const key = `reuse-${t}`;
    expectSuccess(await notify(server, DISS(t), key), false);
    const other = await notify(server, DISS(t, { payload: { note: 'changed' } }), key);
    expectError(other, 422, 'IDEMPOTENCY_KEY_REUSED', REUSED_MESSAGE);
    expect(other.json.error).toBe('idempotency_key_reused');
    expect(await dissCount(server, t)).toBe(1);
  });

  it('scopes the key to the event type: the same key on another event type stores again', async () => {
    const t = tag();
    const key = `scope-${t}`;
    expectSuccess(await notify(server, DISS(t), key), false);
    expectSuccess(await notify(server, marsBody(t, '20250706'), key), false);
    expect(await dissCount(server, t)).toBe(1);
    expect(await storedCount(server, 'mars', { class: 'od', stream: t })).toBe(1);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['with a space', 'a b'],
    ['with a non-ASCII character', 'cl\u00e9'],
    ['a broken sf-string', '"abc'],
  ])('refuses a key that is %s with 400 INVALID_IDEMPOTENCY_KEY', async (_name, key) => {
    const response = await rawPost(`${server.url}/api/v1/notification`, JSON.stringify(DISS(tag())), {
      'content-type': 'application/json',
      'idempotency-key': Buffer.from(key, 'latin1').toString('latin1'),
    });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code: 'INVALID_IDEMPOTENCY_KEY', error: 'invalid_idempotency_key', message: KEY_MESSAGE });
  });

  it('refuses the header sent twice', async () => {
    const t = tag();
    const response = await rawPost(`${server.url}/api/v1/notification`, JSON.stringify(DISS(t)), {
      'content-type': 'application/json',
      'idempotency-key': ['same', 'same'],
    });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code: 'INVALID_IDEMPOTENCY_KEY', message: KEY_MESSAGE });
    expect(await dissCount(server, t)).toBe(0);
  });

  it("checks the key's form before the body: its 400 wins over a body error", async () => {
    const response = await notify(server, '{not json', 'a b');
    expectError(response, 400, 'INVALID_IDEMPOTENCY_KEY', KEY_MESSAGE);
  });

  it('accepts the key as an sf-string: "k" and k are one key', async () => {
    const t = tag();
    expectSuccess(await notify(server, DISS(t), `"sf-${t}"`), false);
    expectSuccess(await notify(server, DISS(t), `sf-${t}`), true);
  });

  it('keeps no record of a 4xx: the corrected retry with the same key is stored', async () => {
    const t = tag();
    const key = `fail-${t}`;
    const invalid = await notify(server, { event_type: 'dissemination', identifier: { destination: t } }, key);
    expect(invalid.status).toBe(400);
    expect(invalid.json.code).toBe('INVALID_NOTIFICATION_REQUEST');
    expect(invalid.headers.get('idempotent-replayed')).toBeNull();
    expectSuccess(await notify(server, DISS(t), key), false);
    expect(await dissCount(server, t)).toBe(1);
  });

  it('leaves a request without the header unchanged: no Idempotent-Replayed, every request stored', async () => {
    const t = tag();
    const first = await notify(server, DISS(t));
    const second = await notify(server, DISS(t));
    for (const response of [first, second]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(await dissCount(server, t)).toBe(2);
  });

  it('logs a replay as idempotent_replayed, never the key, and counts it', async () => {
    const t = tag();
    const key = `secret-${randomUUID()}`;
    const first = await notify(server, DISS(t), key);
    const retry = await notify(server, DISS(t), key);
    const line = await eventually("the replay's log line", () => processedLine(server, retry.json.request_id), { timeoutMs: 5_000 });
    expect(line.attributes).toMatchObject({ idempotent_replayed: true });
    expect(processedLine(server, first.json.request_id)?.attributes).toMatchObject({ idempotent_replayed: false });
    expect(JSON.stringify(server.logs)).not.toContain(key);
    const exposition = (await request(`http://127.0.0.1:${metricsPort}/metrics`)).text;
    expect(metricSum(exposition, 'aviso_idempotency_replays_total', { event_type: 'dissemination' })).toBeGreaterThanOrEqual(1);
    expect(
      metricSum(exposition, 'aviso_idempotency_conflicts_total', { event_type: 'dissemination', reason: 'reused' }),
    ).toBeGreaterThanOrEqual(1);
    expect(metricSum(exposition, 'aviso_idempotency_evictions_total')).toBe(0);
  });

  describe('with a 1s window', () => {
    let short: RunningServer;
    beforeAll(async () => {
      short = await startServer({ config: backend.config({ idempotency: { window: '1s' } }) });
    });
    afterAll(async () => {
      await short?.stop();
    });

    it('forgets the key after the window: a later retry stores again', async () => {
      const t = tag();
      const key = `window-${t}`;
      expectSuccess(await notify(short, DISS(t), key), false);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expectSuccess(await notify(short, DISS(t), key), false);
      expect(await dissCount(short, t)).toBe(2);
    });
  });
});

describe('Idempotency-Key on JetStream: across processes and crashes', () => {
  const backend = new BackendUnderTest('jetstream');
  let one: RunningServer;
  let two: RunningServer;
  let counter = 0;
  const tag = () => `X${++counter}`;
  const registry = new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, true);

  beforeAll(async () => {
    await backend.start();
    [one, two] = await Promise.all([startServer({ config: backend.config() }), startServer({ config: backend.config() })]);
  });
  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    await backend.stop();
  });

  async function withNats<T>(use: (nc: Awaited<ReturnType<typeof connect>>) => Promise<T>): Promise<T> {
    const nc = await connect({ servers: backend.natsUrl });
    try {
      return await use(nc);
    } finally {
      await nc.close();
    }
  }

  /** Writes a record as another process would have left it. */
  async function plantRecord(recordKey: string, record: Record<string, unknown>): Promise<void> {
    await withNats(async (nc) => {
      const kv = await new Kvm(jetstream(nc)).open('AVISO_IDEMPOTENCY');
      await kv.put(recordKey, JSON.stringify(record));
    });
  }

  function fingerprintOf(body: unknown): string {
    const parsed = parseNotificationRequest('notify', Buffer.from(JSON.stringify(body)));
    return notificationFingerprint(parsed.event_type, prepareNotification(registry, parsed));
  }

  it('answers a retry on the other process from the first, and a watch there sees the notification once', async () => {
    const t = tag();
    const key = `cross-${t}`;
    const watch = await SseClient.open(`${two.url}/api/v1/watch`, {
      event_type: 'dissemination',
      identifier: { destination: t, class: 'od' },
    });
    expect(watch.status).toBe(200);
    const first = await notify(one, DISS(t), key);
    expectSuccess(first, false);
    const retry = await notify(two, DISS(t), key);
    expectSuccess(retry, true);
    expect(retry.json.processed_at).toBe(first.json.processed_at);
    const received = [];
    for (;;) {
      const event = await watch.nextSignificant(3_000).catch(() => undefined);
      if (!event) break;
      if (event.json.specversion !== undefined) received.push(event);
    }
    watch.close();
    expect(received).toHaveLength(1);
    expect(await dissCount(one, t)).toBe(1);
  });

  it('of concurrent requests with one key on two processes, one stores and the others replay or get 409 with Retry-After: 1', async () => {
    const t = tag();
    const key = `race-${t}`;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => notify(i % 2 === 0 ? one : two, DISS(t), key)));
    const stored = answers.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') === 'false');
    expect(stored).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 409) {
        expectError(answer, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS', IN_PROGRESS_MESSAGE);
        expect(answer.headers.get('retry-after')).toBe('1');
      } else {
        expect(answer.status).toBe(200);
      }
    }
    expect(await dissCount(one, t)).toBe(1);
  });

  it('answers 409 IDEMPOTENCY_KEY_IN_PROGRESS with Retry-After: 1 while another process holds the key', async () => {
    const t = tag();
    const key = `pending-${t}`;
    await plantRecord(idempotencyRecordKey('dissemination', key), {
      state: 'pending',
      fingerprint: fingerprintOf(DISS(t)),
      since: Date.now(),
    });
    const response = await notify(two, DISS(t), key);
    expectError(response, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS', IN_PROGRESS_MESSAGE);
    expect(response.json.error).toBe('idempotency_key_in_progress');
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await dissCount(one, t)).toBe(0);
  });

  it('takes over a stale pending record left by a process that died before publishing', async () => {
    const t = tag();
    const key = `stale-${t}`;
    await plantRecord(idempotencyRecordKey('dissemination', key), {
      state: 'pending',
      fingerprint: fingerprintOf(DISS(t)),
      since: Date.now() - 60_000,
    });
    expectSuccess(await notify(one, DISS(t), key), false);
    expectSuccess(await notify(two, DISS(t), key), true);
    expect(await dissCount(one, t)).toBe(1);
  });

  it('answers a retry as a replay with the stored time when a process died after publishing and before recording', async () => {
    const t = tag();
    const key = `crash-${t}`;
    const recordKey = idempotencyRecordKey('dissemination', key);
    // What the dead process left: its publish under the key's Nats-Msg-Id, and a pending record long stale.
    const prepared = prepareNotification(registry, parseNotificationRequest('notify', Buffer.from(JSON.stringify(DISS(t)))));
    const storedAt = await withNats(async (nc) => {
      const js = jetstream(nc);
      const headers = natsHeaders();
      for (const [name, value] of Object.entries(prepared.metadata)) headers.set(name, value);
      const ack = await js.publish(prepared.topic, prepared.payload, { msgID: recordKey, headers });
      const jsm = await js.jetstreamManager();
      return (await jsm.streams.getMessage('DISS', { seq: ack.seq }))?.time;
    });
    await plantRecord(recordKey, { state: 'pending', fingerprint: fingerprintOf(DISS(t)), since: Date.now() - 60_000 });
    const retry = await notify(two, DISS(t), key);
    expectSuccess(retry, true);
    expect(retry.json.processed_at).toBe(`${storedAt?.toISOString().slice(0, 19)}Z`);
    expect(await dissCount(one, t)).toBe(1);
    expectSuccess(await notify(one, DISS(t), key), true);
  });

  it('keeps no record of a 5xx: once the stream is usable again the retry is stored', async () => {
    const t = tag();
    const key = `broken-${t}`;
    // A stream of the wrong storage type fails every notify of its event type (docs/backends.md).
    await withNats(async (nc) => {
      const jsm = await jetstream(nc).jetstreamManager();
      await jsm.streams.delete('POLYGON').catch(() => undefined);
      await jsm.streams.add({ name: 'POLYGON', subjects: ['polygon.>'], storage: 'memory' });
    });
    const body = {
      event_type: 'test_polygon',
      identifier: { date: '20250706', time: '1200', polygon: '(0,0,0,1,1,1,0,0)' },
      payload: { t },
    };
    const failed = await notify(one, body, key);
    expect(failed.status).toBe(500);
    expect(failed.json.code).toBe('NOTIFICATION_STORAGE_FAILED');
    await withNats(async (nc) => (await jetstream(nc).jetstreamManager()).streams.delete('POLYGON'));
    expectSuccess(await notify(two, body, key), false);
  });
});
