import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseConnection } from '../../../src/streaming/sse-connection.js';

/**
 * The final flush of an ended stream: a client that stopped reading must not keep the server's
 * socket (and what is buffered for it) forever after the stream was closed, e.g. with
 * the slow-consumer close (D9, D32), nor hold up shutdown.
 */

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose one stream is handed to `onStream`, and a client that reads only when told. */
async function streamPair(): Promise<{ response: ServerResponse; client: IncomingMessage }> {
  let resolveResponse!: (response: ServerResponse) => void;
  const served = new Promise<ServerResponse>((resolve) => (resolveResponse = resolve));
  server = createServer((_req, res) => resolveResponse(res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const client = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, resolve);
    req.on('error', reject);
    req.end();
    void served.then((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
  });
  return { response: await served, client };
}

describe('SseConnection final flush', () => {
  it('destroys the socket of a client that does not read its final frame in time', async () => {
    const { response, client } = await streamPair();
    client.pause();
    const connection = new SseConnection(response, 1_000, 200);
    const frame = `event: live-notification\ndata: ${'x'.repeat(64 * 1024)}\n\n`;
    for (let i = 0; i < 200 && connection.send(frame); i++);
    const closed = new Promise<void>((resolve) => response.once('close', () => resolve()));
    // Kept queued frames go to the socket too: far more than the kernel buffers of a paused reader.
    connection.finish('event: connection-closing\ndata: {}\n\n', true);
    expect(response.writableFinished).toBe(false);
    await closed;
    expect(response.destroyed).toBe(true);
  });

  it('leaves a client that reads the final frame alone', async () => {
    const { response, client } = await streamPair();
    let text = '';
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => (text += chunk));
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    const connection = new SseConnection(response, 1_000, 200);
    connection.send('event: heartbeat\ndata: {}\n\n');
    connection.finish('event: connection-closing\ndata: {"reason":"end_of_stream"}\n\n', true);
    await ended;
    expect(text).toContain('"reason":"end_of_stream"');
    expect(response.writableFinished).toBe(true);
  });
});

describe('SseConnection.sendAll', () => {
  it('delivers a batch whole and in order, in fewer writes than frames, mixed with text frames', async () => {
    const { response, client } = await streamPair();
    let text = '';
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => (text += chunk));
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    let writes = 0;
    const write = response.write.bind(response) as (chunk: string | Buffer) => boolean;
    (response as unknown as { write: (chunk: string | Buffer) => boolean }).write = (chunk) => {
      writes++;
      return write(chunk);
    };
    const connection = new SseConnection(response, 1_000, 200);
    const frames = Array.from({ length: 300 }, (_, i) => Buffer.from(`event: replay\ndata: ${i}\n\n`));
    expect(connection.sendAll(frames.slice(0, 150))).toBe(true);
    expect(connection.send('event: heartbeat\ndata: {}\n\n')).toBe(true);
    expect(connection.sendAll(frames.slice(150))).toBe(true);
    connection.finish('event: connection-closing\ndata: {}\n\n', true);
    await ended;
    const expected =
      frames.slice(0, 150).join('') + 'event: heartbeat\ndata: {}\n\n' + frames.slice(150).join('') + 'event: connection-closing\ndata: {}\n\n';
    expect(text).toBe(expected);
    expect(writes).toBeLessThan(10);
  });

  it('refuses a batch that does not fit the queue, queueing none of it', async () => {
    const { response, client } = await streamPair();
    client.pause();
    const connection = new SseConnection(response, 4, 200);
    // A paused reader: fill the socket so frames stay queued.
    const big = Buffer.from(`event: replay\ndata: ${'x'.repeat(512 * 1024)}\n\n`);
    expect(connection.sendAll([big])).toBe(true);
    expect(connection.sendAll([big, big])).toBe(true);
    expect(connection.queuedFrames).toBe(2);
    expect(connection.sendAll([big, big, big])).toBe(false);
    expect(connection.queuedFrames).toBe(2);
  });
});
