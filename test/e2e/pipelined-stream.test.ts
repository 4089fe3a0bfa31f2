import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { TRANSCRIPT_REQUEST } from '../support/transcript.js';

/**
 * A stream whose request arrives on a keep-alive connection before the previous response there
 * has finished (pipelining, or a client reusing the connection the moment it read the last
 * chunk): Node queues its response without a socket for a moment. The stream must still run its
 * lifecycle (heartbeats, its close frame), not be taken for abandoned.
 */
describe('a stream queued behind another response on the same connection', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      config: serverConfig({ watch_endpoint: { sse_heartbeat_interval_sec: 1, connection_max_duration_sec: 2 } }),
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('runs its whole lifecycle', async () => {
    const body = (extra: Record<string, unknown>) => JSON.stringify({ ...TRANSCRIPT_REQUEST, ...extra });
    const request = (path: string, text: string) =>
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    // Both requests in one write: the second watch's response waits for the first one to end.
    socket.write(request('/api/v1/watch', body({})) + request('/api/v1/watch', body({})));
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (received.split('"reason":"max_duration_reached"').length === 3) resolve();
      };
      socket.on('data', check);
      socket.on('close', () => resolve());
    });
    socket.destroy();
    const secondAt = received.indexOf('HTTP/1.1 200', 1);
    // The first response is whole before the second begins: nothing of one inside the other.
    const first = received.slice(0, secondAt);
    expect(first.endsWith('\r\n0\r\n\r\n')).toBe(true);
    expect(first.split('"reason":"max_duration_reached"').length - 1).toBe(1);
    const second = received.slice(secondAt);
    expect(second).toContain('"type":"connection_established"');
    expect(second.split('event: heartbeat').length - 1).toBeGreaterThanOrEqual(2);
    expect(second).toContain('"reason":"max_duration_reached"');
  });

  it('answers a request sent on the connection while a stream runs only after the stream ended', async () => {
    const text = JSON.stringify(TRANSCRIPT_REQUEST);
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.write(
      `POST /api/v1/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (received.includes('"type":"connection_established"')) resolve();
      };
      socket.on('data', check);
    });
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (received.indexOf('HTTP/1.1 200', 1) >= 0 && received.endsWith('}')) resolve();
      };
      socket.on('data', check);
      socket.on('close', () => resolve());
    });
    socket.destroy();
    const secondAt = received.indexOf('HTTP/1.1 200', 1);
    const stream = received.slice(0, secondAt);
    expect(stream).toContain('"reason":"max_duration_reached"');
    expect(stream.endsWith('\r\n0\r\n\r\n')).toBe(true);
    expect(received.slice(secondAt)).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{/);
  });
});
