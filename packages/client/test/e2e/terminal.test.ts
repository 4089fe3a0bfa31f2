import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AvisoClient, HistoryGapError, HttpError, MalformedEventError, StreamProtocolError } from '../../src/index.js';

/**
 * Terminal cases of client.md §3 against a scripted SSE server over real sockets: each script
 * answers one connection; `next()` must reject with the documented error type.
 */
type Script = (res: ServerResponse) => void;
let scripts: Script[] = [];
let server: Server;
let baseUrl: string;
let requests = 0;

const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const established = frame('live-notification', { type: 'connection_established', request_id: 'r', topic: 't', timestamp: 'x', connection_will_close_in_seconds: 60 });
const cloudEvent = (id: string): string =>
  frame('live-notification', { specversion: '1.0', id, type: 'int.ecmwf.aviso.mars', time: '2026-01-01T00:00:00Z', data: { identifier: {}, payload: null } });
const sse = (body: string): Script => (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  res.end(body);
};

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    req.resume();
    const script = scripts.shift();
    if (script) script(res);
    else res.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function failure(list: Script[]): Promise<unknown> {
  scripts = list;
  requests = 0;
  const stream = new AvisoClient({ baseUrl }).watch({ eventType: 'mars', identifier: {} });
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
    const error = await failure([(res) => res.writeHead(400, { 'content-type': 'application/json', 'x-request-id': 'rid' }).end('{"code":"INVALID_WATCH_REQUEST","message":"bad"}')]);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).requestId).toBe('rid');
    expect((error as HttpError).code).toBe('INVALID_WATCH_REQUEST');
    expect(requests).toBe(1);
  });
  it('a 200 that is not text/event-stream is terminal', async () => {
    expect(await failure([(res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>')])).toBeInstanceOf(StreamProtocolError);
  });
  it('a wrong opening frame is terminal', async () => {
    expect(await failure([sse(frame('heartbeat', { timestamp: 'x', topic: 't' }))])).toBeInstanceOf(StreamProtocolError);
  });
  it('an error event is terminal', async () => {
    expect(await failure([sse(established + frame('error', { error: 'stream_processing_failed', message: 'm' }))])).toBeInstanceOf(StreamProtocolError);
  });
  it('an unknown close reason is terminal', async () => {
    expect(await failure([sse(established + frame('connection-closing', { reason: 'slow_consumer', message: 'm' }))])).toBeInstanceOf(StreamProtocolError);
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
      sse(established + frame('replay-control', { type: 'notification_replay_limit_reached', max_allowed: 2, message: 'm', timestamp: 'x', topic: 't' })),
    ]);
    expect((error as HistoryGapError).gap).toEqual({ kind: 'replay_limit_reached', maxAllowed: 2 });
  });
  it('503 with Retry-After and a drop are retried, then the stream resumes from the next sequence', async () => {
    const bodies: string[] = [];
    scripts = [
      (res) => res.writeHead(503, { 'retry-after': '0' }).end(),
      sse(established + cloudEvent('mars@1')),
      (res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(frame('replay-control', { type: 'replay_started', end_sequence: null }) + cloudEvent('mars@2'));
      },
    ];
    const original = server.listeners('request');
    server.prependListener('request', (req) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => bodies.push(text));
    });
    const stream = new AvisoClient({ baseUrl }).watch({ eventType: 'mars', identifier: {} });
    const seen: number[] = [];
    for await (const n of stream) {
      seen.push(n.sequence);
      if (seen.length === 2) break;
    }
    server.removeAllListeners('request');
    for (const listener of original) server.on('request', listener as () => void);
    expect(seen).toEqual([1, 2]);
    expect(JSON.parse(bodies[2]!)).toEqual({ event_type: 'mars', identifier: {}, from_id: '2' });
  });
});
