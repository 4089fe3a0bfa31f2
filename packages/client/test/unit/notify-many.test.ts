import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AvisoClient,
  ConfigError,
  DecodeError,
  HttpError,
  TransportError,
  type Clock,
  type NotifyFailed,
  type NotifyItem,
  type NotifyOutcome,
} from '../../src/index.js';
import { systemClock } from '../../src/clock.js';
import { halvedLimits, nextBatch, notificationBody, serialisedSizes } from '../../src/notify-batches.js';
import { BatchNotifyServer } from '../support/batch-notify-server.js';

/**
 * `notifyMany` (docs/client.md "Batch notify"): how a list is cut into batches, and the calls
 * against a local server that keeps the batch endpoint's contract (test/support/batch-notify-server.ts).
 */

/** Jitter draws 0: a backoff retry does not wait. */
const noJitter: Clock = { ...systemClock, random: () => 0 };

/** `n` notifications of one size each (the step is zero-padded), numbered by `payload.i`. */
function items(n: number, identifier: (i: number) => Record<string, string> = (): Record<string, string> => ({})): NotifyItem[] {
  return Array.from({ length: n }, (_, i) => ({
    eventType: 'mars',
    identifier: { class: 'od', step: String(i).padStart(5, '0'), ...identifier(i) },
    payload: { i },
  }));
}

function failures(outcomes: readonly NotifyOutcome[]): NotifyFailed[] {
  return outcomes.filter((o): o is NotifyFailed => !o.stored);
}

describe('cutting a list into batches', () => {
  const limits = { maxItems: 2, maxBytes: 1000 };

  it('fills each batch up to the item limit, in order', () => {
    const sizes = [10, 10, 10, 10, 10];
    const first = nextBatch(sizes, 0, limits);
    expect(first).toEqual({ start: 0, end: 2, bytes: 2 + 10 + 1 + 10 });
    expect(nextBatch(sizes, 2, limits).end).toBe(4);
    expect(nextBatch(sizes, 4, limits).end).toBe(5);
  });

  it('counts the body as the JSON array it is: brackets and one comma between items', () => {
    const bodies = items(3).map(notificationBody);
    const sizes = serialisedSizes(bodies);
    const batch = nextBatch(sizes, 0, { maxItems: 10, maxBytes: 1 << 20 });
    expect(batch.bytes).toBe(Buffer.byteLength(JSON.stringify(bodies)));
  });

  it('stops before the item that would pass the byte budget', () => {
    expect(nextBatch([10, 10, 10], 0, { maxItems: 10, maxBytes: 23 }).end).toBe(2);
    expect(nextBatch([10, 10, 10], 0, { maxItems: 10, maxBytes: 22 }).end).toBe(1);
  });

  it('sends a notification larger than the budget alone rather than never', () => {
    expect(nextBatch([100, 1], 0, { maxItems: 10, maxBytes: 50 })).toEqual({ start: 0, end: 1, bytes: 102 });
  });

  it('counts UTF-8 bytes, not characters', () => {
    const [ascii, accented] = serialisedSizes([{ s: 'e' }, { s: 'é' }]);
    expect((accented as number) - (ascii as number)).toBe(1);
  });

  it('refuses a notification JSON cannot carry, naming it', () => {
    expect(() => serialisedSizes([{ a: 1 }, { b: 1n }])).toThrow(/notification 1 cannot be sent as JSON/);
  });

  it('halves the items after BATCH_TOO_MANY_ITEMS and the bytes after any other 413', () => {
    const batch = { start: 10, end: 15, bytes: 101 };
    expect(halvedLimits({ maxItems: 1000, maxBytes: 5000 }, batch, 'BATCH_TOO_MANY_ITEMS')).toEqual({ maxItems: 3, maxBytes: 5000 });
    expect(halvedLimits({ maxItems: 1000, maxBytes: 5000 }, batch, 'PAYLOAD_TOO_LARGE')).toEqual({ maxItems: 1000, maxBytes: 50 });
    expect(halvedLimits({ maxItems: 1000, maxBytes: 5000 }, batch, undefined)).toEqual({ maxItems: 1000, maxBytes: 50 });
  });
});

describe('notifyMany against a server of the batch contract', () => {
  const server = new BatchNotifyServer();
  let client: AvisoClient;
  beforeAll(async () => {
    await server.start();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.reset();
    client = new AvisoClient({ baseUrl: server.url, clock: noJitter });
  });
  const storedIndexes = (): number[] => server.stored.map((s) => (s.body.payload as { i: number }).i);

  it('sends 2,500 notifications as batches of 1,000, 1,000 and 500, in order, each under its own key', async () => {
    const outcomes = await client.notifyMany(items(2500));
    expect(server.received.map((r) => r.items)).toEqual([1000, 1000, 500]);
    expect(server.received.every((r) => r.contentType === 'application/json')).toBe(true);
    const keys = server.received.map((r) => r.key);
    expect(new Set(keys).size).toBe(3);
    expect(outcomes).toHaveLength(2500);
    expect(outcomes.map((o) => o.index)).toEqual(Array.from({ length: 2500 }, (_, i) => i));
    expect(failures(outcomes)).toEqual([]);
    expect(storedIndexes()).toEqual(Array.from({ length: 2500 }, (_, i) => i));
    const first = outcomes[0];
    const last = outcomes[2499];
    expect(first).toMatchObject({
      stored: true,
      status: 'success',
      processedAt: '2026-12-05T01:00:00Z',
      idempotencyKey: keys[0],
      replayed: false,
    });
    expect(last).toMatchObject({ stored: true, idempotencyKey: keys[2] });
    expect(first?.requestId).toMatch(/^00000000-0000-4000-8000-/);
  });

  it('keeps every batch within the byte budget, and full up to it', async () => {
    const budget = 2000;
    const list = items(200);
    const itemBytes = serialisedSizes(list.map(notificationBody));
    const largest = Math.max(...itemBytes);
    const outcomes = await client.notifyMany(list, { maxBatchBytes: budget });
    expect(failures(outcomes)).toEqual([]);
    expect(server.received.length).toBeGreaterThan(1);
    for (const batch of server.received) expect(batch.bytes).toBeLessThanOrEqual(budget);
    // Every batch but the last had no room for one more notification.
    for (const batch of server.received.slice(0, -1)) expect(batch.bytes + 1 + largest).toBeGreaterThan(budget);
    expect(storedIndexes()).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it("halves a batch over the server's item limit until it passes, and keeps the lower limit", async () => {
    server.maxItems = 300;
    const outcomes = await client.notifyMany(items(1000));
    expect(server.received.map((r) => r.items)).toEqual([1000, 500, 250, 250, 250, 250]);
    expect(failures(outcomes)).toEqual([]);
    expect(storedIndexes()).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it("halves a batch over the server's byte limit until it passes, and keeps the lower budget", async () => {
    const list = items(1000);
    const whole = Buffer.byteLength(JSON.stringify(list.map(notificationBody)));
    server.maxBytes = Math.floor(whole * 0.4);
    const outcomes = await client.notifyMany(list);
    expect(failures(outcomes)).toEqual([]);
    expect(storedIndexes()).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    // 1,000 refused, then half the bytes (about 500) refused, then batches of at most a quarter.
    const refused = server.received.filter((r) => r.bytes > server.maxBytes);
    expect(refused).toHaveLength(2);
    expect(refused[0]?.items).toBe(1000);
    expect(refused[1]?.bytes).toBeLessThanOrEqual(Math.floor(whole / 2));
    expect(server.received.slice(0, 2)).toEqual(refused);
    for (const batch of server.received.slice(2)) expect(batch.bytes).toBeLessThanOrEqual(Math.floor(whole / 4));
  });

  it("refuses a notification too large even alone with the server's answer, and sends the next ones", async () => {
    server.maxBytes = 400;
    const list = items(3, (i): Record<string, string> => (i === 1 ? { blob: 'x'.repeat(1000) } : {}));
    const outcomes = await client.notifyMany(list);
    expect(outcomes.map((o) => o.stored)).toEqual([true, false, true]);
    expect(outcomes[1]).toMatchObject({
      index: 1,
      reason: 'refused',
      code: 'PAYLOAD_TOO_LARGE',
      message: expect.stringMatching(/^Batch too large: \d+ bytes, the limit is 400$/),
    });
    expect((outcomes[1] as NotifyFailed).requestId).toMatch(/^00000000-/);
    expect(storedIndexes()).toEqual([0, 2]);
  });

  it('gives each refused notification its error in place, in a partial batch and in one where all were refused, and goes on', async () => {
    const refuse = new Set([1, 3, 4, 5]);
    const list = items(9, (i): Record<string, string> => (refuse.has(i) ? { refuse: 'x' } : {}));
    const outcomes = await client.notifyMany(list, { maxBatchItems: 3 });
    expect(server.received.map((r) => r.items)).toEqual([3, 3, 3]);
    expect(outcomes.map((o) => o.stored)).toEqual([true, false, true, false, false, false, true, true, true]);
    for (const failed of failures(outcomes)) {
      expect(failed).toMatchObject({
        reason: 'refused',
        code: 'INVALID_NOTIFICATION_REQUEST',
        message: "Unknown field 'refuse' provided for notify operation",
      });
      expect(failed.error).toBeUndefined();
    }
    expect(outcomes[3]?.requestId).toBe(outcomes[4]?.requestId);
    expect(outcomes[3]?.requestId).not.toBe(outcomes[0]?.requestId);
    expect(storedIndexes()).toEqual([0, 2, 6, 7, 8]);
  });

  it('with retry: true, sends a batch whose answer was lost again under the same key, and it is stored once', async () => {
    server.faults = ['cut-after', { status: 503 }];
    const outcomes = await client.notifyMany(items(5), { retry: true });
    expect(server.received.map((r) => r.key)).toEqual([server.received[0]?.key, server.received[0]?.key, server.received[0]?.key]);
    expect(storedIndexes()).toEqual([0, 1, 2, 3, 4]);
    expect(failures(outcomes)).toEqual([]);
    expect(outcomes.every((o) => o.stored && o.replayed === true && o.idempotencyKey === server.received[0]?.key)).toBe(true);
  });

  it('without retry, against a server not known to deduplicate, sends a cut batch once and nothing after it', async () => {
    server.honoursKeys = false;
    server.faults = ['answer', 'cut-before'];
    const outcomes = await client.notifyMany(items(5), { maxBatchItems: 2 });
    expect(server.received).toHaveLength(2);
    expect(outcomes.map((o) => o.stored)).toEqual([true, true, false, false, false]);
    const [, , cut, alsoCut, after] = outcomes as [NotifyOutcome, NotifyOutcome, NotifyFailed, NotifyFailed, NotifyFailed];
    expect(cut).toMatchObject({ reason: 'unanswered', code: undefined });
    expect(cut.error).toBeInstanceOf(TransportError);
    expect(alsoCut.error).toBe(cut.error);
    expect(after).toMatchObject({ reason: 'not_sent', message: 'not sent: an earlier batch failed' });
    expect(storedIndexes()).toEqual([0, 1]);
  });

  it('once the server has answered Idempotent-Replayed, retries a cut batch under its key without being asked', async () => {
    server.faults = ['answer', 'cut-before'];
    const outcomes = await client.notifyMany(items(4), { maxBatchItems: 2 });
    const keys = server.received.map((r) => r.key);
    expect(keys).toHaveLength(3);
    expect(keys[2]).toBe(keys[1]);
    expect(keys[1]).not.toBe(keys[0]);
    expect(failures(outcomes)).toEqual([]);
    expect(storedIndexes()).toEqual([0, 1, 2, 3]);
  });

  it('a store failure that outlasts the retries refuses its batch; the later ones are not sent', async () => {
    server.faults = ['answer', ...Array.from({ length: 6 }, () => ({ status: 500 }))];
    const outcomes = await client.notifyMany(items(6), { maxBatchItems: 2, retry: true });
    expect(server.received).toHaveLength(1 + 6);
    expect(outcomes.map((o) => (o.stored ? 'stored' : o.reason))).toEqual(['stored', 'stored', 'failed', 'failed', 'not_sent', 'not_sent']);
    const refused = outcomes[2] as NotifyFailed;
    expect(refused).toMatchObject({ code: 'NOTIFICATION_STORAGE_FAILED', message: 'HTTP 500: Failed to store notification' });
    expect(refused.error).toBeInstanceOf(HttpError);
    expect(refused.requestId).toMatch(/^00000000-/);
    expect(outcomes[4]).toMatchObject({
      code: undefined,
      requestId: undefined,
      message: 'not sent: an earlier batch failed',
      error: refused.error,
    });
    expect(storedIndexes()).toEqual([0, 1]);
  });

  it('sends a batch whose store failed part way again under its key, which stores the rest once', async () => {
    server.faults = [{ storeFailsFrom: 2 }];
    const outcomes = await client.notifyMany(items(5));
    const keys = server.received.map((r) => r.key);
    expect(keys).toEqual([keys[0], keys[0]]);
    expect(failures(outcomes)).toEqual([]);
    expect(storedIndexes()).toEqual([0, 1, 2, 3, 4]);
  });

  it('a store failure in the results that is not retried fails those notifications, and the later batches are not sent', async () => {
    server.honoursKeys = false;
    server.faults = [{ storeFailsFrom: 2 }];
    const outcomes = await client.notifyMany(items(7), { maxBatchItems: 5 });
    expect(server.received).toHaveLength(1);
    expect(outcomes.map((o) => (o.stored ? 'stored' : o.reason))).toEqual([
      'stored',
      'stored',
      'failed',
      'failed',
      'failed',
      'not_sent',
      'not_sent',
    ]);
    expect(outcomes[2]).toMatchObject({
      code: 'NOTIFICATION_STORAGE_FAILED',
      message: 'Failed to store notification',
      requestId: expect.stringMatching(/^00000000-/),
    });
    expect(storedIndexes()).toEqual([0, 1]);
  });

  it('takes a batch whose answer cannot be read as maybe stored, and sends nothing after it', async () => {
    server.faults = ['garbled'];
    const outcomes = await client.notifyMany(items(3), { maxBatchItems: 2 });
    expect(server.received).toHaveLength(1);
    expect(outcomes.map((o) => (o.stored ? 'stored' : o.reason))).toEqual(['unanswered', 'unanswered', 'not_sent']);
    expect((outcomes[0] as NotifyFailed).error).toBeInstanceOf(DecodeError);
    expect(outcomes[0]).toMatchObject({ message: 'notify batch: 0 results for 2 notifications' });
    expect(storedIndexes()).toEqual([0, 1]);
  });

  it('against a server without the batch endpoint, fails the first batch with its answer and sends nothing after it', async () => {
    const elsewhere = new AvisoClient({ baseUrl: `${server.url}no-batch/`, clock: noJitter });
    const outcomes = await elsewhere.notifyMany(items(3), { maxBatchItems: 2 });
    expect(outcomes.map((o) => (o.stored ? 'stored' : o.reason))).toEqual(['failed', 'failed', 'not_sent']);
    expect(outcomes[0]).toMatchObject({ code: 'NOT_FOUND', message: 'HTTP 404: Route not found' });
    expect(server.received).toHaveLength(1);
    expect(server.stored).toEqual([]);
  });

  it('sends nothing for an empty list, an aborted signal, or options and notifications it cannot send', async () => {
    expect(await client.notifyMany([])).toEqual([]);
    const aborted = AbortSignal.abort();
    const outcomes = await client.notifyMany(items(2), { signal: aborted });
    expect(outcomes.map((o) => !o.stored && o.reason)).toEqual(['not_sent', 'not_sent']);
    expect((outcomes[0] as NotifyFailed).error).toBe(aborted.reason);
    await expect(client.notifyMany(items(2), { maxBatchItems: 0 })).rejects.toBeInstanceOf(ConfigError);
    await expect(client.notifyMany(items(2), { maxBatchBytes: 1.5 })).rejects.toBeInstanceOf(ConfigError);
    await expect(client.notifyMany([...items(1), { eventType: 'mars', identifier: {}, payload: 1n }])).rejects.toThrow(
      /notification 1 cannot be sent as JSON/,
    );
    expect(server.received).toEqual([]);
  });
});
