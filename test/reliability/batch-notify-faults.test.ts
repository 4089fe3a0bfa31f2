import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBackend } from '../support/backends.js';
import { postJson } from '../support/http.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, withoutHeartbeats, type SseEvent } from '../support/sse-client.js';

/**
 * D48 on JetStream when the server dies in the middle of a batch: SIGKILLed once the batch's first
 * notification reached a watcher (a batch of 1,000 on two topics, so a round trip per item and
 * the kill lands while it is stored: 4 stored when this was written), it leaves a part stored and
 * no answer; the same batch sent again
 * with its `Idempotency-Key` to a new process completes it, every notification stored once, in
 * order. The records the killed process left pending go stale after 10 s (PENDING_STALE_AFTER_MS):
 * until then the retry answers those items `409 IDEMPOTENCY_KEY_IN_PROGRESS`, and it is repeated.
 */

const ITEMS = 1000;
const SCHEMA = {
  topic: { base: 'faults', key_order: ['k'] },
  identifier: { k: { type: 'StringHandler', required: false } },
  payload: { required: false },
};

/** The notifications a replay of every `faults` notification delivers. */
async function replayed(server: RunningServer): Promise<SseEvent[]> {
  const replay = await SseClient.open(`${server.url}/api/v1/replay`, { event_type: 'faults', identifier: {}, from_id: '1' });
  expect(replay.status, replay.errorBody).toBe(200);
  return withoutHeartbeats(await replay.rest()).filter((event) => String(event.json.id).startsWith('faults@'));
}

describe('a JetStream batch cut by SIGKILL (D48)', () => {
  const backend = useBackend('jetstream');
  let server: RunningServer | undefined;
  const config = () => backend.config({ notification_schema: { faults: SCHEMA }, notification_endpoint: { max_batch_items: ITEMS } });

  beforeAll(async () => {
    server = await startServer({ config: config() });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('leaves a part stored that a retry with the same key completes without duplicates', { timeout: 120_000 }, async () => {
    const running = server as RunningServer;
    // Two topics taking turns: every item waits for its topic's previous ack (D48's waves), so the
    // batch takes a round trip per item and the kill lands while it is being stored.
    const items = Array.from({ length: ITEMS }, (_, index) => ({
      event_type: 'faults',
      identifier: { k: `n${index % 2}` },
      payload: index,
    }));
    const key = 'batch-killed';
    const watch = await SseClient.open(`${running.url}/api/v1/watch`, { event_type: 'faults', identifier: {} });
    expect(watch.status, watch.errorBody).toBe(200);
    expect((await watch.next())?.json.type).toBe('connection_established');
    const cut = postJson(`${running.url}/api/v1/notification/batch`, items, { 'idempotency-key': key }).then(
      (response) => response.status,
      () => 'no answer',
    );
    // The batch is being stored: kill the process before it can answer.
    expect((await watch.nextSignificant())?.json.id).toBe('faults@1');
    const port = running.port;
    await running.stop('SIGKILL');
    watch.close();
    const firstAnswer = await cut;

    server = await startServer({ config: config(), port });
    const storedBeforeRetry = (await replayed(server)).length;
    // At least what the watcher saw; how much more depends on how far the acks got.
    expect(storedBeforeRetry).toBeGreaterThanOrEqual(1);
    let answer: Record<string, unknown>;
    let attempts = 0;
    for (;;) {
      attempts++;
      const retry = await postJson(`${server.url}/api/v1/notification/batch`, items, { 'idempotency-key': key });
      answer = retry.json;
      if (retry.status === 200) break;
      const codes = new Set((answer.results as Record<string, unknown>[]).map((result) => result.code).filter(Boolean));
      expect([...codes], retry.text.slice(0, 500)).toEqual(['IDEMPOTENCY_KEY_IN_PROGRESS']);
      expect(attempts).toBeLessThan(30);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(answer).toMatchObject({ status: 'success', stored: ITEMS, failed: 0 });

    const payloads = (await replayed(server)).map((event) => (event.json.data as { payload: number }).payload);
    const context = `first answer: ${String(firstAnswer)}, stored before the retry: ${storedBeforeRetry}, retries: ${attempts}`;
    expect(payloads, context).toEqual(items.map((_item, index) => index));
  });
});
