import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseConnection } from '../../../src/streaming/sse-connection.js';

/**
 * The final flush of an ended stream: a client that stopped reading must not keep the server's
 * socket (and what is buffered for it) forever after the stream was closed, e.g. with
 * `slow_consumer` (D9), nor hold up shutdown.
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
