import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listStreams, only, type ListedStream } from '../support/admin-streams.js';
import { eventually } from '../support/eventually.js';
import { MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';

/**
 * `buffered_bytes` and `lag_ms` of the admin streams list (D49, docs/api.md#get-apiv1adminstreams)
 * for a client that stops reading, against the real server process: once the socket is full,
 * frames wait in the stream's queue and `lag_ms` is the age of the oldest of them, growing while
 * nothing is read; a watcher that reads stays at 0 for both.
 */

const PAYLOAD = 'l'.repeat(256 * 1024);
const WATCH = JSON.stringify({ event_type: 'mars', identifier: { class: 'od' } });

/** A POST watch on a raw socket that stops reading once the response head arrived; resolves with its request id. */
async function stoppedWatch(port: number): Promise<{ socket: Socket; id: string }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write(
    `POST /api/v1/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(WATCH)}\r\n\r\n${WATCH}`,
  );
  const head = await new Promise<string>((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (!text.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause();
      resolve(text);
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error('closed before the response head')));
  });
  const id = /x-request-id: ([0-9a-f-]+)/i.exec(head)?.[1];
  if (!id) throw new Error(`no request id in ${head}`);
  return { socket, id };
}

describe('lag_ms and buffered_bytes of a client that stopped reading', () => {
  let server: RunningServer;
  let stopped: { socket: Socket; id: string };
  let reading: Socket;
  let readingId = '';

  beforeAll(async () => {
    server = await startServer({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', max_body_bytes: 1024 * 1024 },
        watch_endpoint: {
          max_buffered_events: 100_000,
          max_buffered_bytes: 1024 * 1024 * 1024,
          max_total_buffered_bytes: 2 * 1024 * 1024 * 1024,
          stall_timeout_sec: 600,
        },
      }),
    });
    stopped = await stoppedWatch(server.port);
    const other = await stoppedWatch(server.port);
    reading = other.socket;
    readingId = other.id;
    reading.on('data', () => undefined);
    reading.resume();
  });
  afterAll(async () => {
    stopped.socket.destroy();
    reading.destroy();
    await server.stop();
  });

  it('says how long the oldest queued frame has waited, and 0 for the client that reads', async () => {
    let published = 0;
    const publish = async (): Promise<void> => {
      const response = await fetch(`${server.url}/api/v1/notification`, {
        method: 'POST',
        body: JSON.stringify({ ...MARS_EXAMPLE, payload: { n: published, pad: PAYLOAD } }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      published++;
    };
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const stoppedStream = async (): Promise<ListedStream> => only(await listStreams(server), stopped.id);
    // Until the kernel's buffers (which grow while they fill) are full, the queue still empties
    // into them: publish 2 MiB at a time until frames stay queued while nothing is published.
    const [first, second] = await eventually(
      'frames that stay in the queue of the stopped stream',
      async () => {
        for (let i = 0; i < 8; i++) await publish();
        await pause(300);
        const before = await stoppedStream();
        await pause(400);
        const after = await stoppedStream();
        return before.lag_ms > 0 && after.lag_ms >= before.lag_ms + 350 && [before, after];
      },
      { timeoutMs: 150_000, intervalMs: 0 },
    );
    // The age grows with the wall clock while the client reads nothing; nothing more was queued.
    expect(second.lag_ms).toBeLessThan(first.lag_ms + 2000);
    expect(second.buffered_bytes).toBe(first.buffered_bytes);
    expect(first.buffered_bytes).toBeGreaterThan(256 * 1024);
    expect(second.delivered).toBe(published);
    await eventually('the reading client to hold nothing', async () => {
      const stream = only(await listStreams(server), readingId);
      return stream.delivered === published && stream.buffered_bytes === 0 && stream.lag_ms === 0;
    });
  }, 180_000);
});
