import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../../../../test/support/backends.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { AvisoClient, HttpError, MemoryStore } from '../../src/index.js';
import { take } from '../support/take.js';

/** The library against the real server process, on both backends, through real sockets. */
const EVENT = 'dissemination';
const IDENT = { destination: 'A', class: 'od' };

describe.each(BACKEND_KINDS)('client against the %s backend', (kind) => {
  const backend = useBackend(kind);
  let server: RunningServer;
  let client: AvisoClient;
  beforeAll(async () => {
    server = await startServer({
      config: backend.config({ watch_endpoint: { connection_max_duration_sec: 2, sse_heartbeat_interval_sec: 1 } }),
    });
    client = new AvisoClient({ baseUrl: server.url });
    for (let i = 0; i < 5; i++) await client.notify({ eventType: EVENT, identifier: IDENT, payload: { i } });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('notify answers success with the request id', async () => {
    const result = await client.notify({ eventType: EVENT, identifier: IDENT });
    expect(result.status).toBe('success');
    expect(result.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.processedAt).toMatch(/Z$/);
  });

  it('a bad request is an HttpError with status, code and request id (terminal 4xx)', async () => {
    const error = await client.notify({ eventType: 'no_such_type', identifier: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    expect((error as HttpError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a replay range delivers [from, to] exactly and ends', async () => {
    const stream = client.watch({ eventType: EVENT, identifier: IDENT, from: { fromId: 2 }, to: { toId: 4 } });
    const seen: number[] = [];
    for await (const n of stream) seen.push(n.sequence);
    expect(seen).toEqual([2, 3, 4]);
    expect((await stream.ready).kind).toBe('replay_started');
  });

  it('a watch resumes across max_duration_reached: nothing lost, nothing redelivered', async () => {
    const store = new MemoryStore();
    const statuses: string[] = [];
    const stream = client.watch({
      eventType: EVENT,
      identifier: IDENT,
      from: { fromId: 1 },
      stateStore: store,
      heartbeatIntervalMs: 1000,
      onStatus: (status) => statuses.push(status.type === 'reconnecting' ? `reconnecting:${status.reason}` : status.type),
    });
    const first = await take(stream, 6);
    expect(first).toEqual([1, 2, 3, 4, 5, 6]);
    // Published while the first connection is about to hit its 2 s limit and after.
    for (let i = 0; i < 4; i++) {
      await client.notify({ eventType: EVENT, identifier: IDENT });
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    const rest = await take(stream, 4);
    stream.close();
    expect(rest).toEqual([7, 8, 9, 10]);
    expect(statuses).toContain('reconnecting:max_duration_reached');
  });
});
