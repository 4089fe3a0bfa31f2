import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { postJson, request } from '../support/http.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, withoutHeartbeats, type SseEvent } from '../support/sse-client.js';

/**
 * Batch notify against the real server process on both backends (D48): a batch of N is stored and
 * delivered exactly as N single notifies (the same sequences in the same order, the same
 * CloudEvents, the same live frames), and a malformed batch stores nothing. Each comparison sends
 * the N notifications one by one to one event type and as a batch to its twin, whose schema is the
 * same but for its name and base, then compares what watchers and replays of the two receive.
 */

/** The twins' only identifier field is optional on watch, so `{}` selects everything. */
function schema(base: string, keepsOnePerTopic = false): Record<string, unknown> {
  return {
    topic: { base, key_order: ['k'] },
    identifier: { k: { type: 'StringHandler', required: false } },
    payload: { required: false },
    // JetStream only: one notification per topic, each publish naming its topic's predecessor (D42).
    ...(keepsOnePerTopic ? { storage_policy: { allow_duplicates: false } } : {}),
  };
}

/** Topics repeat (the same `k`), so JetStream's pipelined batch has to wait for a topic's ack. */
const KEYS = ['a', 'b', 'a', 'c', 'd', 'b', 'a', 'e', 'f', 'g', 'c', 'h', 'a', 'i', 'j', 'k', 'l', 'b', 'm', 'n'];
const notifications = (eventType: string) =>
  KEYS.map((k, index) => ({ event_type: eventType, identifier: { k }, payload: { index, k, ratio: 1.5 } }));

/**
 * A frame as the other twin would have it: its names swapped, and what differs between any two
 * requests left out (the storage time of a CloudEvent, a control frame's request id and time).
 */
function comparable(event: SseEvent, from: string, to: string): unknown {
  const { time: _time, request_id: _requestId, timestamp: _timestamp, ...rest } = event.json;
  return { event: event.event, json: JSON.parse(JSON.stringify(rest).replaceAll(from, to)) as unknown };
}

describe.each(BACKEND_KINDS)('batch notify on the %s backend (D48)', (kind) => {
  const backend = useBackend(kind);
  let server: RunningServer;
  const twins: [string, string][] = [['single', 'batched']];
  if (kind === 'jetstream') twins.push(['single_one', 'batched_one']);

  beforeAll(async () => {
    server = await startServer({
      config: backend.config({
        notification_schema: {
          single: schema('single'),
          batched: schema('batched'),
          ...(kind === 'jetstream' ? { single_one: schema('single_one', true), batched_one: schema('batched_one', true) } : {}),
        },
      }),
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const watch = async (eventType: string): Promise<SseClient> => {
    const client = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: eventType, identifier: {} });
    expect(client.status, client.errorBody).toBe(200);
    expect((await client.next())?.json.type).toBe('connection_established');
    return client;
  };
  const significant = async (client: SseClient, count: number): Promise<SseEvent[]> => {
    const events: SseEvent[] = [];
    for (let i = 0; i < count; i++) {
      const event = await client.nextSignificant();
      if (!event) throw new Error(`the stream ended after ${i} events`);
      events.push(event);
    }
    return events;
  };
  const replay = async (eventType: string): Promise<SseEvent[]> => {
    const client = await SseClient.open(`${server.url}/api/v1/replay`, { event_type: eventType, identifier: {}, from_id: '1' });
    expect(client.status, client.errorBody).toBe(200);
    return withoutHeartbeats(await client.rest());
  };

  it.each(twins)('a batch of N is stored and delivered as N single notifies (%s / %s)', async (single, batched) => {
    const singleWatch = await watch(single);
    const batchWatch = await watch(batched);
    try {
      for (const notification of notifications(single)) {
        const response = await postJson(`${server.url}/api/v1/notification`, notification);
        expect(response.status, response.text).toBe(200);
      }
      const response = await postJson(`${server.url}/api/v1/notification/batch`, notifications(batched));
      expect(response.status, response.text).toBe(200);
      expect(response.json).toMatchObject({ status: 'success', stored: KEYS.length, failed: 0 });
      const results = response.json.results as Record<string, unknown>[];
      expect(results.map((result) => result.index)).toEqual(KEYS.map((_k, index) => index));
      expect(results.every((result) => result.status === 'success' && result.request_id === response.json.request_id)).toBe(true);

      const live = await significant(batchWatch, KEYS.length);
      expect(live.map((event) => event.json.id)).toEqual(KEYS.map((_k, index) => `${batched}@${index + 1}`));
      const singleLive = await significant(singleWatch, KEYS.length);
      expect(live.map((event) => comparable(event, batched, single))).toEqual(singleLive.map((event) => comparable(event, single, single)));
    } finally {
      singleWatch.close();
      batchWatch.close();
    }
    const replayed = await replay(batched);
    const singleReplayed = await replay(single);
    expect(replayed.length).toBeGreaterThan(2);
    expect(replayed.map((event) => comparable(event, batched, single))).toEqual(
      singleReplayed.map((event) => comparable(event, single, single)),
    );
  });

  it('stores only the valid items of a mixed batch, in order, and answers 207', async () => {
    const before = (await replay('batched')).length;
    const items = [
      { event_type: 'batched', identifier: { k: 'mixed1' } },
      { event_type: 'batched', identifier: { k: 'mixed1' }, extra: true },
      { event_type: 'nope', identifier: {} },
      { event_type: 'batched', identifier: { k: 'mixed2' } },
    ];
    const response = await postJson(`${server.url}/api/v1/notification/batch`, items);
    expect(response.status, response.text).toBe(207);
    expect(response.json).toMatchObject({ status: 'partial', stored: 2, failed: 2 });
    const codes = (response.json.results as Record<string, unknown>[]).map((result) => result.code ?? result.status);
    expect(codes).toEqual(['success', 'UNKNOWN_FIELD', 'UNKNOWN_EVENT_TYPE', 'success']);
    const replayed = (await replay('batched')).filter((event) => String(event.json.id).startsWith('batched@'));
    const keys = replayed.map((event) => (event.json.data as { identifier?: { k?: string } } | undefined)?.identifier?.k);
    expect(keys.slice(-2)).toEqual(['mixed1', 'mixed2']);
    expect((await replay('batched')).length).toBe(before + 2);
  });

  it('a batch sent again with its Idempotency-Key is answered from the first success and stores nothing twice', async () => {
    const before = (await replay('batched')).length;
    const items = ['idem1', 'idem2', 'idem1'].map((k) => ({ event_type: 'batched', identifier: { k } }));
    const first = await postJson(`${server.url}/api/v1/notification/batch`, items, { 'idempotency-key': `batch-${kind}` });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    const again = await postJson(`${server.url}/api/v1/notification/batch`, items, { 'idempotency-key': `batch-${kind}` });
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const processedAt = (answer: Record<string, unknown>) =>
      (answer.results as Record<string, unknown>[]).map((result) => result.processed_at);
    expect(processedAt(again.json)).toEqual(processedAt(first.json));
    expect((await replay('batched')).length).toBe(before + 3);
  });

  it('a batch of which a prefix was stored under its key is completed by sending it whole again, without duplicates', async () => {
    const before = (await replay('batched')).length;
    const items = ['p1', 'p2', 'p1', 'p3', 'p4'].map((k, index) => ({ event_type: 'batched', identifier: { k }, payload: index }));
    const key = `prefix-${kind}`;
    // What a batch cut after its second item leaves: the records of indexes 0 and 1.
    const prefix = await postJson(`${server.url}/api/v1/notification/batch`, items.slice(0, 2), { 'idempotency-key': key });
    expect(prefix.status, prefix.text).toBe(200);
    const whole = await postJson(`${server.url}/api/v1/notification/batch`, items, { 'idempotency-key': key });
    expect(whole.status, whole.text).toBe(200);
    expect(whole.headers.get('idempotent-replayed')).toBe('false');
    const stored = (await replay('batched')).filter((event) => String(event.json.id).startsWith('batched@')).slice(-5);
    expect((await replay('batched')).length).toBe(before + 5);
    expect(stored.map((event) => (event.json.data as { payload: unknown }).payload)).toEqual([0, 1, 2, 3, 4]);
  });

  it('stores nothing of a batch whose connection is cut mid-body', async () => {
    const before = (await replay('batched')).length;
    const body = JSON.stringify(['c1', 'c2', 'c3'].map((k) => ({ event_type: 'batched', identifier: { k } })));
    const { port } = new URL(server.url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        // The whole head and all but the body's last bytes, then the connection goes.
        socket.write(
          `POST /api/v1/notification/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, -10)}`,
          () => setTimeout(() => socket.destroy(), 100),
        );
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    // A notify sent after it is stored, so the cut one had its chance to be.
    const after = await postJson(`${server.url}/api/v1/notification/batch`, [{ event_type: 'batched', identifier: { k: 'after-cut' } }]);
    expect(after.status, after.text).toBe(200);
    const keys = (await replay('batched')).map((event) => (event.json.data as { identifier?: { k?: string } } | undefined)?.identifier?.k);
    expect(keys.filter((k) => k === 'c1' || k === 'c2' || k === 'c3')).toEqual([]);
    expect((await replay('batched')).length).toBe(before + 1);
  });

  it.each([
    ['not an array', '{"event_type":"batched","identifier":{"k":"x"}}', {}, 400, 'BATCH_NOT_AN_ARRAY'],
    ['an empty array', '[]', {}, 400, 'BATCH_EMPTY'],
    ['an item that is not an object', '[{"event_type":"batched","identifier":{"k":"x"}},1]', {}, 400, 'BATCH_ITEM_NOT_AN_OBJECT'],
    ['cut mid-body', '[{"event_type":"batched","identifier":{"k":"x"}},{"event_', {}, 400, 'INVALID_JSON'],
    [
      'an NDJSON line that is not an object',
      '{"event_type":"batched","identifier":{"k":"x"}}\n[]',
      { 'content-type': 'application/x-ndjson' },
      400,
      'BATCH_ITEM_NOT_AN_OBJECT',
    ],
  ])('a batch that is %s answers its 4xx and stores nothing', async (_what, body, headers, status, code) => {
    const before = (await replay('batched')).length;
    const response = await request(`${server.url}/api/v1/notification/batch`, { method: 'POST', body, headers });
    expect(response.status, response.text).toBe(status);
    expect(response.json.code).toBe(code);
    expect(response.json.request_id).toBe(response.headers.get('x-request-id'));
    expect((await replay('batched')).length).toBe(before);
  });
});
