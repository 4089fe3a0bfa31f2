import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { serverConfig } from '../../../../test/support/schemas.js';
import { AvisoClient, TransportError, type NotificationStream, type WatchStatus } from '../../src/index.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { ManualClock, until } from '../support/manual-clock.js';

/**
 * The supervisor's timing rules (docs/design/rules/client.md §3) through the fault proxy in front of the real
 * in-memory server, on a manual clock: deadlines, watchdog and waits are reached by advancing
 * the clock, never by sleeping; sockets move on the real event loop.
 */
const EVENT = 'dissemination';
let server: RunningServer;
let direct: AvisoClient;
let proxy: FaultProxy;
let destination = 0;
const open: NotificationStream[] = [];

beforeAll(async () => {
  server = await startServer({ config: serverConfig() });
  direct = new AvisoClient({ baseUrl: server.url });
});
afterAll(async () => {
  await server.stop();
});
afterEach(async () => {
  for (const stream of open.splice(0)) stream.close();
  await proxy.close();
});

interface Watch {
  readonly stream: NotificationStream;
  readonly clock: ManualClock;
  readonly statuses: WatchStatus[];
  readonly identifier: Record<string, string>;
  reconnects(): Extract<WatchStatus, { type: 'reconnecting' }>[];
}

async function watch(
  options: { draw?: number; from?: number; startupTimeoutMs?: number; heartbeatIntervalMs?: number } = {},
): Promise<Watch> {
  proxy = await FaultProxy.start(server.port);
  const clock = new ManualClock(options.draw ?? 0);
  const statuses: WatchStatus[] = [];
  const identifier = { destination: `D${++destination}`, class: 'od' };
  const client = new AvisoClient({ baseUrl: proxy.url, clock });
  const stream = client.watch({
    eventType: EVENT,
    identifier,
    ...(options.from === undefined ? {} : { from: { fromId: options.from } }),
    ...(options.startupTimeoutMs === undefined ? {} : { startupTimeoutMs: options.startupTimeoutMs }),
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 1000,
    onStatus: (status) => statuses.push(status),
  });
  open.push(stream);
  return {
    stream,
    clock,
    statuses,
    identifier,
    reconnects: () => statuses.filter((s): s is Extract<WatchStatus, { type: 'reconnecting' }> => s.type === 'reconnecting'),
  };
}

/** Lets the supervisor finish the turn it is in (re-arming its timers) before the clock moves. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

const opened = (w: Watch): number => w.statuses.filter((s) => s.type === 'opened').length;

async function publish(w: Watch, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await direct.notify({ eventType: EVENT, identifier: w.identifier, payload: { i } });
}

async function take(w: Watch, count: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) {
    const next = await w.stream.next();
    if (next.done) break;
    seen.push(next.value.sequence);
  }
  return seen;
}

describe('opening deadline (headers + opening share 10 s)', () => {
  it('before the first confirmation an expired deadline is fatal', async () => {
    proxy = await FaultProxy.start(server.port);
    proxy.setMode({ kind: 'blackhole' });
    const clock = new ManualClock();
    const stream = new AvisoClient({ baseUrl: proxy.url, clock }).watch({
      eventType: EVENT,
      identifier: { destination: 'X', class: 'od' },
    });
    open.push(stream);
    await proxy.waitForConnections(1);
    clock.advance(9_999);
    await settle();
    expect(proxy.accepted).toBe(1);
    clock.advance(1);
    const error = await stream.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toBe('no opening control within 10 s');
    await expect(stream.ready).rejects.toBe(error);
  });

  it('after the first confirmation it is a lost connection: the watch reconnects', async () => {
    const w = await watch();
    await w.stream.ready;
    proxy.setMode({ kind: 'blackhole' });
    proxy.drop();
    await proxy.waitForConnections(2);
    // Only the second connection is black-holed; the one after the deadline goes through.
    proxy.setMode({ kind: 'forward' });
    w.clock.advance(9_999);
    await settle();
    expect(w.reconnects()).toHaveLength(1);
    w.clock.advance(1);
    await until(() => w.reconnects().some((r) => r.reason === 'opening deadline expired'), 'the deadline reconnect');
    await until(() => opened(w) === 2, 'the second opening');
    await publish(w, 1);
    expect(await take(w, 1)).toHaveLength(1);
  });
});

describe('heartbeat watchdog: silence longer than max(3 × interval, interval + 30 s)', () => {
  it('a stalled connection is lost after 31 s at a 1 s interval, not before', async () => {
    const w = await watch({ heartbeatIntervalMs: 1000 });
    await w.stream.ready;
    await settle();
    proxy.stall();
    w.clock.advance(30_999);
    await settle();
    expect(w.reconnects()).toEqual([]);
    w.clock.advance(2);
    await until(() => opened(w) === 2, 'the reconnect after silence');
    expect(w.reconnects().map((r) => r.reason)).toEqual(['no bytes within the heartbeat watchdog']);
  });

  it('at a 60 s interval the bound is 3 × interval (180 s)', async () => {
    const w = await watch({ heartbeatIntervalMs: 60_000 });
    await w.stream.ready;
    await settle();
    proxy.stall();
    w.clock.advance(179_999);
    await settle();
    expect(w.reconnects()).toEqual([]);
    w.clock.advance(2);
    await until(() => opened(w) === 2, 'the reconnect after silence');
  });
});

describe('503 with Retry-After', () => {
  it('honours delay-seconds and an HTTP date, capped at 5 minutes, sending nothing before', async () => {
    proxy = await FaultProxy.start(server.port);
    const clock = new ManualClock();
    const statuses: WatchStatus[] = [];
    proxy.setMode({ kind: 'status', status: 503, retryAfter: '7' });
    const stream = new AvisoClient({ baseUrl: proxy.url, clock }).watch({
      eventType: EVENT,
      identifier: { destination: 'R', class: 'od' },
      onStatus: (s) => statuses.push(s),
    });
    open.push(stream);
    const delays = (): number[] => statuses.flatMap((s) => (s.type === 'reconnecting' ? [s.delayMs] : []));
    await until(() => delays().length === 1, 'the first 503');
    expect(delays()).toEqual([7_000]);
    proxy.setMode({ kind: 'status', status: 503, retryAfter: new Date(clock.now() + 7_000 + 12_000).toUTCString() });
    clock.advance(6_999);
    await settle();
    expect(proxy.accepted).toBe(1);
    clock.advance(1);
    await until(() => delays().length === 2, 'the second 503');
    expect(delays()[1]).toBe(12_000);
    proxy.setMode({ kind: 'status', status: 503, retryAfter: '3600' });
    clock.advance(12_000);
    await until(() => delays().length === 3, 'the third 503');
    expect(delays()[2]).toBe(300_000);
    proxy.setMode({ kind: 'forward' });
    clock.advance(300_000);
    await stream.ready;
    expect(proxy.accepted).toBe(4);
  });
});

describe('startup budget', () => {
  it('fails when the next retry would pass the budget before any confirmed opening', async () => {
    proxy = await FaultProxy.start(server.port);
    proxy.setMode({ kind: 'status', status: 503, retryAfter: '20' });
    const clock = new ManualClock();
    const stream = new AvisoClient({ baseUrl: proxy.url, clock }).watch({
      eventType: EVENT,
      identifier: { destination: 'S', class: 'od' },
      startupTimeoutMs: 30_000,
    });
    open.push(stream);
    await proxy.waitForConnections(1);
    await settle();
    clock.advance(20_000);
    const error = await stream.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toBe('listener startup timeout exceeded: no stream confirmed open within 30000 ms (last: HTTP 503)');
    expect(proxy.accepted).toBe(2);
  });
});

describe('backoff', () => {
  it('grows across failed attempts, connections without an opening included, and resets only after a confirmed opening', async () => {
    // draw 0.999: each delay is just under its ceiling, 250 ms · 2^attempt.
    const w = await watch({ draw: 0.999 });
    await w.stream.ready;
    const delays = (): number[] => w.reconnects().map((r) => r.delayMs);
    proxy.setMode({ kind: 'refuse' });
    proxy.drop();
    await until(() => delays().length === 1, 'the first reconnect');
    w.clock.advance(delays()[0]!);
    await until(() => delays().length === 2, 'the second reconnect');
    // Headers arrive but the opening frame is cut: not a confirmation, so no reset.
    proxy.setMode({ kind: 'forward' });
    proxy.truncateAt('connection_established');
    w.clock.advance(delays()[1]!);
    await until(() => delays().length === 3, 'the third reconnect');
    expect(delays()).toEqual([249, 499, 999]);
    w.clock.advance(999);
    await until(() => opened(w) === 2, 'the confirmed reopening');
    proxy.drop();
    await until(() => delays().length === 4, 'the reconnect after the reopening');
    expect(delays()[3]).toBe(249);
  });
});

describe('truncated frames', () => {
  it('a frame cut mid-way is never delivered; the watch resumes at it and loses nothing', async () => {
    const w = await watch({ from: 1 });
    await w.stream.ready;
    await publish(w, 1);
    // Sequences are per stream base (shared by the tests here), so they are read off the first.
    const [first] = await take(w, 1);
    proxy.truncateAt(`"${EVENT}@${first! + 1}"`);
    await publish(w, 2);
    expect(await take(w, 2)).toEqual([first! + 1, first! + 2]);
    expect(w.reconnects()).toHaveLength(1);
    expect(proxy.accepted).toBe(2);
  });
});
