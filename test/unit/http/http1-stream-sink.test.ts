import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { Http1StreamSink } from '../../../src/http/transport/http1-stream-sink.js';
import type { EndListener } from '../../../src/streaming/stream-sink.js';
import { eventually } from '../../support/eventually.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/** A server whose every request becomes a stream on an `Http1StreamSink`. */
interface StreamServer {
  readonly server: Server;
  readonly port: number;
  readonly sinks: Http1StreamSink[];
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function streamServer(
  afterOpen: (sink: Http1StreamSink, response: ServerResponse) => void = () => undefined,
  beforeOpen: (sink: Http1StreamSink) => void = () => undefined,
): Promise<StreamServer> {
  const sinks: Http1StreamSink[] = [];
  const server = createServer((incoming, response) => {
    if (incoming.url === '/plain') {
      response.end('plain');
      return;
    }
    const sink = new Http1StreamSink(response, undefined);
    sinks.push(sink);
    beforeOpen(sink);
    sink.open(200, HEADERS);
    afterOpen(sink, response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, sinks };
}

/** A client's response, with what its body brought so far and whether it ended. */
interface ReadResponse {
  readonly response: IncomingMessage;
  body: string;
  ended: boolean;
}

function get(port: number, path: string, agent: Agent, headers: Record<string, string> = {}): Promise<ReadResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, agent, headers }, (response) => {
      const read: ReadResponse = { response, body: '', ended: false };
      response.setEncoding('utf8');
      response.on('data', (text: string) => (read.body += text));
      response.on('end', () => (read.ended = true));
      resolve(read);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function write(sink: Http1StreamSink, frame: string): Promise<void> {
  return new Promise((resolve) => sink.writer()?.writeAll([frame], resolve));
}

function endListener(): EndListener & { readonly outcome: string[] } {
  const outcome: string[] = [];
  return { outcome, settled: () => outcome.push('settled'), handedOver: () => outcome.push('handed_over') };
}

describe('Http1StreamSink: a plain HTTP/1.1 stream keeps its socket, not the request and response', () => {
  it('lets Node and the framework release the response once the head is out, and keeps streaming', async () => {
    const released: string[] = [];
    const registry = new FinalizationRegistry((name: string) => released.push(name));
    const { port, sinks } = await streamServer((_sink, response) => {
      registry.register(response, 'response');
      registry.register(response.req, 'request');
    });
    const agent = new Agent({ keepAlive: true });
    const read = await get(port, '/stream', agent);
    const sink = sinks[0] as Http1StreamSink;
    await write(sink, 'data: one\n\n');
    await eventually('the first frame', () => read.body === 'data: one\n\n');

    await eventually(
      'the request and the response to be collected',
      () => {
        collectGarbage();
        return released.includes('response') && released.includes('request');
      },
      { timeoutMs: 5_000 },
    );
    await write(sink, 'data: two\n\n');
    await eventually('the second frame', () => read.body === 'data: one\n\ndata: two\n\n');
    expect(read.ended).toBe(false);
    expect(sink.writable).toBe(true);
    agent.destroy();
  });

  it('ends the body with its last chunk and leaves the connection open for the next request', async () => {
    const { port, sinks, server } = await streamServer();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const read = await get(port, '/stream', agent);
    const sink = sinks[0] as Http1StreamSink;
    await write(sink, 'data: one\n\n');
    const end = endListener();
    sink.end('event: connection-closing\ndata: {}\n\n', false, end);
    await eventually('the end of the body', () => read.ended);
    expect(read.body).toBe('data: one\n\nevent: connection-closing\ndata: {}\n\n');
    expect(end.outcome).toEqual(['settled']);
    expect(sink.writable).toBe(false);

    let connections = 0;
    server.on('connection', () => connections++);
    const next = await get(port, '/plain', agent);
    await eventually('the next answer', () => next.ended);
    expect(next.body).toBe('plain');
    expect(connections).toBe(0);
    agent.destroy();
  });

  it('closes the connection after the last chunk when asked to, and says when it handed it over', async () => {
    const { port, sinks } = await streamServer();
    const agent = new Agent({ keepAlive: true });
    const read = await get(port, '/stream', agent);
    const sink = sinks[0] as Http1StreamSink;
    let closed = false;
    read.response.socket.on('close', () => (closed = true));
    const end = endListener();
    sink.end('data: last\n\n', true, end);
    await eventually('the end of the body', () => read.ended);
    expect(read.body).toBe('data: last\n\n');
    await eventually('the connection to close', () => closed);
    await eventually('the end to settle', () => end.outcome.includes('settled'));
    expect(end.outcome).toEqual(['handed_over', 'settled']);
    agent.destroy();
  });

  it('tells the stream when its client goes away, whether it listened before or after the head', async () => {
    const gone: string[] = [];
    const { port, sinks } = await streamServer(
      (sink) => sink.onClientGone(() => gone.push('after head')),
      (sink) => sink.onClientGone(() => gone.push('before head')),
    );
    const agent = new Agent({ keepAlive: true });
    const read = await get(port, '/stream', agent);
    await write(sinks[0] as Http1StreamSink, 'data: one\n\n');
    read.response.destroy();
    await eventually('both client-gone listeners', () => gone.length === 2);
    expect(gone.sort()).toEqual(['after head', 'before head']);
    expect(sinks[0]?.writable).toBe(false);
    agent.destroy();
  });

  it('keeps the response when the request asks for the connection to close', async () => {
    const { port, sinks } = await streamServer();
    const agent = new Agent({ keepAlive: false });
    const read = await get(port, '/stream', agent, { connection: 'close' });
    const sink = sinks[0] as Http1StreamSink;
    await write(sink, 'data: one\n\n');
    const end = endListener();
    sink.end('data: last\n\n', false, end);
    await eventually('the end of the body', () => read.ended);
    expect(read.body).toBe('data: one\n\ndata: last\n\n');
    await eventually('the end to settle', () => end.outcome.includes('settled'));
    agent.destroy();
  });
});
