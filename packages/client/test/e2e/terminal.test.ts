import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthError,
  AvisoClient,
  BearerAuth,
  HistoryGapError,
  HttpError,
  MalformedEventError,
  MAX_EVENT_BYTES,
  MAX_LINE_BYTES,
  MemoryStore,
  StateStoreError,
  StreamProtocolError,
  type StateStore,
  type WatchRequest,
} from '../../src/internal.js';

/**
 * Terminal cases of docs/design/rules/client.md §3 against a scripted SSE server over real sockets: each script
 * answers one connection; `next()` must reject with the documented error type.
 */
type Script = (res: ServerResponse) => void;
let scripts: Script[] = [];
let server: Server;
let baseUrl: string;
let requests = 0;
let bodies: string[] = [];

const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const established = frame('live-notification', {
  type: 'connection_established',
  request_id: 'r',
  topic: 't',
  timestamp: 'x',
  connection_will_close_in_seconds: 60,
});
const cloudEvent = (id: string): string =>
  frame('live-notification', {
    specversion: '1.0',
    id,
    type: 'int.ecmwf.aviso.mars',
    time: '2026-01-01T00:00:00Z',
    data: { identifier: {}, payload: null },
  });
const sse =
  (body: string): Script =>
  (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    res.end(body);
  };

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => bodies.push(text));
    const script = scripts.shift();
    if (script) script(res);
    else res.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function failure(list: Script[], options: { client?: AvisoClient; request?: Partial<WatchRequest> } = {}): Promise<unknown> {
  scripts = list;
  requests = 0;
  bodies = [];
  const stream = (options.client ?? new AvisoClient({ baseUrl })).watch({ eventType: 'mars', identifier: {}, ...options.request });
  try {
    for await (const _ of stream) void _;
    return undefined;
  } catch (error) {
    return error;
  } finally {
    stream.close();
  }
}

describe('terminal cases of the supervisor', () => {
  it('a 4xx other than 401/429 is terminal', async () => {
    const error = await failure([
      (res) =>
        res
          .writeHead(400, { 'content-type': 'application/json', 'x-request-id': 'rid' })
          .end('{"code":"INVALID_WATCH_REQUEST","message":"bad"}'),
    ]);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).requestId).toBe('rid');
    expect((error as HttpError).code).toBe('INVALID_WATCH_REQUEST');
    expect(requests).toBe(1);
  });
  it('a 200 that is not text/event-stream is terminal', async () => {
    expect(await failure([(res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>')])).toBeInstanceOf(StreamProtocolError);
  });
  it('a wrong opening frame is terminal (a heartbeat first is skipped, as by the aviso client: test/e2e/tolerance.test.ts)', async () => {
    expect(await failure([sse(cloudEvent('mars@1'))])).toBeInstanceOf(StreamProtocolError);
    expect(await failure([sse(frame('replay-control', { type: 'replay_started' }))])).toBeInstanceOf(StreamProtocolError);
  });
  it('an error event is terminal', async () => {
    expect(await failure([sse(established + frame('error', { error: 'stream_processing_failed', message: 'm' }))])).toBeInstanceOf(
      StreamProtocolError,
    );
  });
  it('an unknown close reason is terminal', async () => {
    expect(await failure([sse(established + frame('connection-closing', { reason: 'slow_consumer', message: 'm' }))])).toBeInstanceOf(
      StreamProtocolError,
    );
  });
  it('a malformed id and a notification of another event type are terminal', async () => {
    expect(await failure([sse(established + cloudEvent('mars-7'))])).toBeInstanceOf(MalformedEventError);
    expect(await failure([sse(established + cloudEvent('diss@7'))])).toBeInstanceOf(MalformedEventError);
  });
  it('a sequence jump on an unfiltered watch is a history gap', async () => {
    const error = await failure([sse(established + cloudEvent('mars@3') + cloudEvent('mars@5'))]);
    expect(error).toBeInstanceOf(HistoryGapError);
    expect((error as HistoryGapError).gap).toEqual({ kind: 'sequence_jump', expected: 4, observed: 5 });
  });
  it('the limit frame is a history gap', async () => {
    const error = await failure([
      sse(
        established +
          frame('replay-control', { type: 'notification_replay_limit_reached', max_allowed: 2, message: 'm', timestamp: 'x', topic: 't' }),
      ),
    ]);
    expect((error as HistoryGapError).gap).toEqual({ kind: 'replay_limit_reached', maxAllowed: 2 });
  });
  it('503 with Retry-After and a drop are retried, then the stream resumes from the next sequence', async () => {
    scripts = [
      (res) => res.writeHead(503, { 'retry-after': '0' }).end(),
      sse(established + cloudEvent('mars@1')),
      sse(frame('replay-control', { type: 'replay_started', end_sequence: null }) + cloudEvent('mars@2')),
    ];
    bodies = [];
    const stream = new AvisoClient({ baseUrl }).watch({ eventType: 'mars', identifier: {} });
    const seen: number[] = [];
    for await (const n of stream) {
      seen.push(n.sequence);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual([1, 2]);
    expect(JSON.parse(bodies[2]!)).toEqual({ event_type: 'mars', identifier: {}, from_id: '2' });
  });

  it('a second 401 after the refresh is terminal (one refresh, two requests)', async () => {
    let refreshes = 0;
    const auth = new BearerAuth(() => `t${refreshes++}`);
    const unauthorized: Script = (res) =>
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":"UNAUTHORIZED","message":"no"}');
    const error = await failure([unauthorized, unauthorized], { client: new AvisoClient({ baseUrl, auth }) });
    expect(error).toBeInstanceOf(AuthError);
    expect(requests).toBe(2);
    // The first read and the one refresh.
    expect(refreshes).toBe(2);
  });

  it('a state store failure is terminal: on reading the cursor, and on committing it', async () => {
    const broken = (what: 'get' | 'put'): StateStore => {
      const store = new MemoryStore();
      return {
        get: (key) => (what === 'get' ? Promise.reject(new Error('disk gone')) : store.get(key)),
        put: (key, checkpoint) => (what === 'put' ? Promise.reject(new Error('disk full')) : store.put(key, checkpoint)),
      };
    };
    const onGet = await failure([sse(established)], { request: { stateStore: broken('get') } });
    expect(onGet).toBeInstanceOf(StateStoreError);
    expect((onGet as Error).message).toBe('state store get failed: disk gone');
    expect(requests).toBe(0);
    // Commit on next send: pulling the second notification commits the first, which fails.
    const onPut = await failure([sse(established + cloudEvent('mars@1') + cloudEvent('mars@2'))], {
      request: { stateStore: broken('put') },
    });
    expect(onPut).toBeInstanceOf(StateStoreError);
    expect((onPut as Error).message).toBe('state store put failed: disk full');
  });

  it('an SSE line over 16 MiB is terminal', async () => {
    const error = await failure([sse(established + 'data: ' + 'x'.repeat(MAX_LINE_BYTES) + '\n\n')]);
    expect(error).toBeInstanceOf(StreamProtocolError);
    expect((error as Error).message).toBe(`SSE line longer than ${MAX_LINE_BYTES} bytes`);
    expect(requests).toBe(1);
  });

  it('an event over 32 MiB (each line within 16 MiB) is terminal', async () => {
    const line = 'data: ' + 'y'.repeat(MAX_LINE_BYTES - 16) + '\n';
    const error = await failure([sse(established + line + line + line + '\n')]);
    expect(error).toBeInstanceOf(StreamProtocolError);
    expect((error as Error).message).toBe(`SSE event larger than ${MAX_EVENT_BYTES} bytes`);
  });

  it('a replay range pins its first end_sequence, sends it as to_id on reconnect, and stops once the end was delivered', async () => {
    const started = (end: number): string =>
      frame('replay-control', { type: 'replay_started', end_sequence: end, request_id: 'r', topic: 't', timestamp: 'x' });
    scripts = [
      // Dropped after 3, without a close frame.
      sse(started(5) + cloudEvent('mars@3')),
      // The end (5) arrives, then the connection drops again: no further request.
      sse(started(9) + cloudEvent('mars@4') + cloudEvent('mars@5')),
    ];
    requests = 0;
    bodies = [];
    const stream = new AvisoClient({ baseUrl }).watch({
      eventType: 'mars',
      identifier: {},
      from: { fromId: 3 },
      to: { toDate: '2030-01-01T00:00:00Z' },
    });
    const seen: number[] = [];
    for await (const n of stream) seen.push(n.sequence);
    expect(seen).toEqual([3, 4, 5]);
    expect(bodies.map((b) => JSON.parse(b) as unknown)).toEqual([
      { event_type: 'mars', identifier: {}, from_id: '3', to_date: '2030-01-01T00:00:00Z' },
      { event_type: 'mars', identifier: {}, from_id: '4', to_id: '5' },
    ]);
    expect(requests).toBe(2);
  });
});
