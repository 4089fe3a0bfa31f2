import { AvisoClient, HttpError, TransportError } from '../../packages/client/src/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BackendUnderTest } from '../support/backends.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';
import { startCuttingProxy, type CuttingProxy } from './support/cutting-proxy.js';

/**
 * Exactly once under faults (docs/api.md "Idempotent notify"): 1,000 notifications sent by our client
 * library through a proxy that cuts a share of the answers after the server replied and cuts some
 * requests mid-body; each cut is retried with the same key. A watch opened before, straight on a
 * server, sees each of the 1,000 once: in memory; on JetStream with two server processes behind
 * the proxy taking turns; and on JetStream with one of them SIGKILLed mid-run and restarted.
 */

const COUNT = 1_000;
const CONCURRENCY = 16;
const CUT_ANSWERS = 0.15;
const CUT_REQUESTS = 0.1;
/** A notify still failing after this long (its retries included) fails the run. */
const GIVE_UP_MS = 90_000;
const START_TIMEOUT_MS = 60_000;

const WATCH = { event_type: 'dissemination', identifier: { destination: '*', class: 'od' } };

interface Sent {
  replayed: number;
  /** Whole notify calls of the library that failed and were sent again by this test's own rule. */
  outerRetries: number;
}

/**
 * The spec's retry rule on top of the library's own retries: a cut, a timeout, a 5xx or a 409 is
 * sent again with the same key until it succeeds; any other answer fails the run.
 */
async function sendOnce(client: AvisoClient, index: number, runTag: string, sent: Sent): Promise<void> {
  const key = `${runTag}-${index}`;
  const deadline = Date.now() + GIVE_UP_MS;
  for (;;) {
    try {
      const result = await client.notify({
        eventType: 'dissemination',
        identifier: { destination: `${runTag}n${index}`, class: 'od' },
        payload: { index, run: runTag },
        idempotencyKey: key,
        retry: true,
      });
      if (result.replayed === true) sent.replayed++;
      return;
    } catch (error) {
      const retryable = error instanceof TransportError || (error instanceof HttpError && (error.status >= 500 || error.status === 409));
      if (!retryable || Date.now() > deadline) throw error;
      sent.outerRetries++;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function sendAll(client: AvisoClient, runTag: string, onProgress?: (done: number) => void): Promise<Sent> {
  const sent: Sent = { replayed: 0, outerRetries: 0 };
  let nextIndex = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let index = nextIndex++; index < COUNT; index = nextIndex++) {
        await sendOnce(client, index, runTag, sent);
        onProgress?.(++done);
      }
    }),
  );
  return sent;
}

/** Indexes of the notifications the watch delivered, until `COUNT` distinct ones arrived (or it went quiet). */
async function collect(watch: SseClient, runTag: string): Promise<number[]> {
  const indexes: number[] = [];
  const distinct = new Set<number>();
  while (distinct.size < COUNT) {
    const event = await watch.nextSignificant(20_000);
    if (!event) break;
    const data = event.json.data as { payload?: { index?: number; run?: string } } | undefined;
    if (event.json.specversion === undefined || data?.payload?.run !== runTag) continue;
    indexes.push(data.payload.index as number);
    distinct.add(data.payload.index as number);
  }
  // Anything delivered twice would follow its first copy closely: read what else is already there.
  for (;;) {
    const event = await watch.nextSignificant(1_000).catch(() => undefined);
    if (!event) break;
    const data = event.json.data as { payload?: { index?: number; run?: string } } | undefined;
    if (event.json.specversion !== undefined && data?.payload?.run === runTag) indexes.push(data.payload.index as number);
  }
  return indexes;
}

function expectEachOnce(indexes: readonly number[]): void {
  const counts = new Map<number, number>();
  for (const index of indexes) counts.set(index, (counts.get(index) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1).map(([index]) => index);
  const missing = Array.from({ length: COUNT }, (_, i) => i).filter((i) => !counts.has(i));
  expect({ twice, missing, delivered: indexes.length }).toEqual({ twice: [], missing: [], delivered: COUNT });
}

function expectFaultsHappened(proxy: CuttingProxy, sent: Sent, run: string): void {
  // What docs/api.md quotes as measured.
  console.info(`idempotent-notify-faults ${run}: ${JSON.stringify({ turns: proxy.counts, ...sent })}`);
  // The proof means nothing unless answers were lost after processing and requests cut mid-body.
  expect(proxy.counts.answer).toBeGreaterThan(50);
  expect(proxy.counts.request).toBeGreaterThan(30);
  expect(sent.replayed).toBeGreaterThan(50);
}

let proxy: CuttingProxy | undefined;
let client: AvisoClient | undefined;
let watch: SseClient | undefined;
afterEach(async () => {
  watch?.close();
  await client?.close();
  await proxy?.close();
  watch = undefined;
  client = undefined;
  proxy = undefined;
});

function clientFor(port: number): AvisoClient {
  return new AvisoClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 10_000 });
}

describe('exactly once through a cutting proxy, in memory', () => {
  let server: RunningServer;
  const backend = new BackendUnderTest('in_memory');
  beforeAll(async () => {
    server = await startServer({ config: backend.config(), startTimeoutMs: START_TIMEOUT_MS });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('delivers each of 1,000 notifications once', { timeout: 240_000 }, async () => {
    const runTag = `m${Date.now().toString(36)}`;
    watch = await SseClient.open(`${server.url}/api/v1/watch`, WATCH);
    expect(watch.status).toBe(200);
    proxy = await startCuttingProxy({ upstreams: () => [server.port], cutAnswers: CUT_ANSWERS, cutRequests: CUT_REQUESTS });
    client = clientFor(proxy.port);
    const sent = await sendAll(client, runTag);
    expectEachOnce(await collect(watch, runTag));
    expectFaultsHappened(proxy, sent, 'in_memory');
  });
});

describe('exactly once through a cutting proxy, on JetStream with two server processes', () => {
  const backend = new BackendUnderTest('jetstream');
  let one: RunningServer;
  let two: RunningServer;
  beforeAll(async () => {
    await backend.start();
    [one, two] = await Promise.all([
      startServer({ config: backend.config(), startTimeoutMs: START_TIMEOUT_MS }),
      startServer({ config: backend.config(), startTimeoutMs: START_TIMEOUT_MS }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    await backend.stop();
  });

  it('delivers each of 1,000 notifications once with the processes taking turns', { timeout: 240_000 }, async () => {
    const runTag = `j${Date.now().toString(36)}`;
    watch = await SseClient.open(`${two.url}/api/v1/watch`, WATCH);
    expect(watch.status).toBe(200);
    proxy = await startCuttingProxy({ upstreams: () => [one.port, two.port], cutAnswers: CUT_ANSWERS, cutRequests: CUT_REQUESTS, seed: 7 });
    client = clientFor(proxy.port);
    const sent = await sendAll(client, runTag);
    expectEachOnce(await collect(watch, runTag));
    expectFaultsHappened(proxy, sent, 'jetstream, two processes');
  });

  it('still delivers each once when one process is SIGKILLed mid-run and restarted', { timeout: 300_000 }, async () => {
    const runTag = `k${Date.now().toString(36)}`;
    watch = await SseClient.open(`${two.url}/api/v1/watch`, WATCH);
    expect(watch.status).toBe(200);
    proxy = await startCuttingProxy({
      upstreams: () => [one.port, two.port],
      cutAnswers: CUT_ANSWERS,
      cutRequests: CUT_REQUESTS,
      seed: 11,
    });
    client = clientFor(proxy.port);
    let killed: Promise<void> | undefined;
    const sent = await sendAll(client, runTag, (done) => {
      if (done !== Math.floor(COUNT / 3) || killed) return;
      killed = (async () => {
        const port = one.port;
        await one.stop('SIGKILL');
        one = await startServer({ config: backend.config(), port, startTimeoutMs: START_TIMEOUT_MS });
      })();
    });
    await killed;
    expect(killed).toBeDefined();
    expectEachOnce(await collect(watch, runTag));
    expectFaultsHappened(proxy, sent, 'jetstream, one SIGKILLed');
    expect(proxy.counts.unreachable).toBeGreaterThan(0);
  });
});
