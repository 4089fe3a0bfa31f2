import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { postJson } from '../support/http.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, withoutHeartbeats } from '../support/sse-client.js';
import { frameLabel } from '../support/transcript.js';

/**
 * D28 (docs/design/rules/reference-0.13.md §4) against the real server process, on both backends: each stream base
 * is numbered on its own, densely from 1. The aviso 2.x client treats a sequence jump on an
 * unfiltered watch (`"identifier": {}`) as a fatal history gap, so the watch on one event type
 * must see 1, 2, 3 while another event type is written in between. Both backends start empty
 * (a private nats-server per block), so the numbers are exact.
 */

/** Two event types whose only field is optional on watch, so `{}` selects everything. */
function schema(base: string): Record<string, unknown> {
  return {
    topic: { base, key_order: ['k'] },
    identifier: { k: { type: 'StringHandler', required: false } },
    payload: { required: false },
  };
}

describe.each(BACKEND_KINDS)('per-base sequences on the %s backend (D28)', (kind) => {
  const backend = useBackend(kind);
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({
      config: backend.config({ notification_schema: { alpha: schema('alpha'), beta: schema('beta') } }),
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const notify = async (eventType: string, k: string): Promise<void> => {
    const response = await postJson(`${server.url}/api/v1/notification`, { event_type: eventType, identifier: { k }, payload: k });
    expect(response.status, response.text).toBe(200);
  };

  it('an unfiltered watch on alpha sees alpha@1, alpha@2, alpha@3 while beta is published in between', async () => {
    const watch = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'alpha', identifier: {} });
    try {
      expect(watch.status, watch.errorBody).toBe(200);
      expect((await watch.next())?.json.type).toBe('connection_established');
      await notify('beta', 'b1');
      await notify('alpha', 'a1');
      await notify('beta', 'b2');
      await notify('beta', 'b3');
      await notify('alpha', 'a2');
      await notify('beta', 'b4');
      await notify('alpha', 'a3');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await watch.nextSignificant())?.json.id as string);
      expect(ids).toEqual(['alpha@1', 'alpha@2', 'alpha@3']);
    } finally {
      watch.close();
    }
  });

  it('a replay and a historical watch of each event type read its own dense numbers', async () => {
    // Continues the store of the test above: alpha 1–3, beta 1–4.
    const replay = await SseClient.open(`${server.url}/api/v1/replay`, { event_type: 'beta', identifier: {}, from_id: '1' });
    expect(replay.status, replay.errorBody).toBe(200);
    const replayed = withoutHeartbeats(await replay.rest()).map(frameLabel);
    expect(replayed).toEqual(['replay_started', 'beta@1', 'beta@2', 'beta@3', 'beta@4', 'replay_completed', 'end_of_stream']);

    const watch = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'alpha', identifier: {}, from_id: '2' });
    try {
      expect(watch.status, watch.errorBody).toBe(200);
      const started = await watch.next();
      expect(started?.json.type).toBe('replay_started');
      expect(started?.json.from_sequence).toBe(2);
      const history: string[] = [];
      for (let i = 0; i < 2; i++) history.push((await watch.nextSignificant())?.json.id as string);
      expect(history).toEqual(['alpha@2', 'alpha@3']);
      expect((await watch.nextSignificant())?.json.type).toBe('replay_completed');
      await notify('beta', 'b5');
      await notify('alpha', 'a4');
      expect((await watch.nextSignificant())?.json.id).toBe('alpha@4');
    } finally {
      watch.close();
    }
  });

  it('admin delete ids are per event type: alpha@1 and beta@1 are two notifications', async () => {
    const del = (id: string) => fetch(`${server.url}/api/v1/admin/notification/${id}`, { method: 'DELETE' });
    expect((await del('beta@1')).status).toBe(200);
    const replay = await SseClient.open(`${server.url}/api/v1/replay`, { event_type: 'alpha', identifier: {}, from_id: '1' });
    const labels = withoutHeartbeats(await replay.rest()).map(frameLabel);
    expect(labels.slice(1, -2)).toEqual(['alpha@1', 'alpha@2', 'alpha@3', 'alpha@4']);
    expect((await del('beta@1')).status).toBe(404);
    expect((await del('alpha@1')).status).toBe(200);
  });
});
