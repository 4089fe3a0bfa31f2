import { readFileSync } from 'node:fs';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AvisoClient, type NotificationStream } from '../../src/index.js';

/**
 * docs/design/rules/client.md §3: watches to one server share connections, at most 64 per connection. An SSE
 * response holds an HTTP/1.1 connection, so sharing is HTTP/2 multiplexing: a TLS h2 server
 * (self-signed test certificate) counts the sessions the client opens.
 */
const TLS = join(import.meta.dirname, '../support/tls');
const key = readFileSync(join(TLS, 'key.pem'));
const cert = readFileSync(join(TLS, 'cert.pem'));
const opening = 'event: live-notification\ndata: {"type":"connection_established","request_id":"r","topic":"t","timestamp":"x"}\n\n';

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

async function listen(server: Http2SecureServer | HttpsServer): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

function open(client: AvisoClient, count: number): NotificationStream[] {
  const streams = Array.from({ length: count }, () => client.watch({ eventType: 'mars', identifier: {} }));
  closers.push(async () => {
    for (const stream of streams) stream.close();
    await client.close();
  });
  return streams;
}

describe('connection sharing', () => {
  it('65 watches to an h2 server share 2 connections (at most 64 streams on one); later watches reuse the room', async () => {
    const server = createSecureServer({ key, cert, allowHTTP1: true, settings: { maxConcurrentStreams: 1000 } });
    let sessions = 0;
    let maxPerSession = 0;
    server.on('session', (session) => {
      sessions++;
      closers.push(() => Promise.resolve(session.destroy()));
      let streams = 0;
      session.on('stream', (stream) => {
        maxPerSession = Math.max(maxPerSession, ++streams);
        stream.on('close', () => streams--);
      });
    });
    let http1Requests = 0;
    // The compatibility API answers h2 streams and HTTP/1.1 requests alike.
    server.on('request', (req, res) => {
      if (req.httpVersion === '1.1') http1Requests++;
      if (req.url === '/api/v1/notification') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'rid' });
        res.end('{"status":"success","request_id":"rid","processed_at":"2026-01-01T00:00:00Z"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(opening);
    });
    const baseUrl = await listen(server);
    const client = new AvisoClient({ baseUrl, ca: cert.toString() });
    const streams = open(client, 65);
    const openings = await Promise.all(streams.map((s) => s.ready));
    expect(openings.every((o) => o.kind === 'connection_established')).toBe(true);
    expect(sessions).toBe(2);
    expect(maxPerSession).toBe(64);
    // A watch opened later joins the connection with room.
    const [late] = open(client, 1);
    await late!.ready;
    expect(sessions).toBe(2);
    // Streams end out of order on a shared connection; the room they leave is used again.
    streams[3]!.close();
    streams[10]!.close();
    const again = open(client, 2);
    await Promise.all(again.map((s) => s.ready));
    expect(sessions).toBe(2);
    // Request/response exchanges take HTTP/1.1 keep-alive (see docs/client.md), not a session.
    expect((await client.notify({ eventType: 'mars', identifier: {} })).status).toBe('success');
    expect(sessions).toBe(2);
    expect(http1Requests).toBe(1);
  });

  it('an https server that speaks only HTTP/1.1 gets one connection per watch, and every watch opens', async () => {
    let connections = 0;
    const server = createHttpsServer({ key, cert }, (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(opening);
    });
    server.on('secureConnection', () => connections++);
    const baseUrl = await listen(server);
    closers.push(() => Promise.resolve(server.closeAllConnections()));
    const client = new AvisoClient({ baseUrl, ca: cert.toString() });
    const streams = open(client, 3);
    await Promise.all(streams.map((s) => s.ready));
    expect(connections).toBe(3);
  });
});
