import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { findFreePort } from '../support/ports.js';
import { MARS_EXAMPLE } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { PausableStream, type StreamTarget } from './support/pausable-stream.js';
import { metricSum } from './support/raw-sse.js';

/**
 * The stall watchdog (D37; docs/streaming.md "Slow consumers") with the buffer bounds set so high
 * that only it can close a stream: while a steady stream of large notifications goes to one
 * filter, a watcher that stops reading entirely and one that reads one byte a second are closed
 * as slow consumers (trigger `stalled`) once their socket took nothing for the bound, and reset
 * once they did not read their end within the bound either; a watcher that pauses for less than
 * the bound at a time, and a normal one, stay open and receive everything.
 */

const STALL_TIMEOUT_SEC = 2;
const PAYLOAD = 'w'.repeat(100 * 1024);
const NOTIFICATIONS = 250;
const PUBLISH_INTERVAL_MS = 40;
const FILTER = { event_type: 'mars', identifier: { class: 'od' } };

describe.each(BACKEND_KINDS)('the stall watchdog (%s)', (kind) => {
  const backend = useBackend(kind);

  it('closes and then resets the streams that do not read; the ones that read keep everything', async () => {
    const metricsPort = await findFreePort();
    const server = await startServer({
      config: backend.config({
        metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
        watch_endpoint: {
          max_buffered_events: 100_000,
          max_buffered_bytes: 1024 * 1024 * 1024,
          max_total_buffered_bytes: 4 * 1024 * 1024 * 1024,
          stall_timeout_sec: STALL_TIMEOUT_SEC,
        },
        ...(kind === 'in_memory'
          ? { notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: NOTIFICATIONS } } }
          : {}),
      }),
    });
    const target: StreamTarget = { origin: server.url, transport: 'http/1.1' };
    const open = (): Promise<PausableStream> => PausableStream.open(target, '/api/v1/watch', FILTER);
    const normal = await open();
    const pausing = await open();
    const stopped = await open();
    const trickle = await ByteTrickleReader.open(server.port, JSON.stringify(FILTER));
    try {
      stopped.pause();
      // Pauses for half the bound, then reads for a moment: never a whole bound without progress.
      const pauser = setInterval(() => {
        pausing.pause();
        setTimeout(() => pausing.resume(), (STALL_TIMEOUT_SEC * 1000) / 2);
      }, STALL_TIMEOUT_SEC * 1000);

      for (let i = 0; i < NOTIFICATIONS; i++) {
        const response = await fetch(`${server.url}/api/v1/notification`, {
          method: 'POST',
          body: JSON.stringify({ ...MARS_EXAMPLE, payload: { i, pad: PAYLOAD } }),
        });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, PUBLISH_INTERVAL_MS));
      }
      clearInterval(pauser);
      pausing.resume();

      await eventually(
        'the normal and the pausing watcher to receive everything',
        () => normal.sequences.length === NOTIFICATIONS && pausing.sequences.length === NOTIFICATIONS,
        { timeoutMs: 120_000 },
      );
      expect(pausing.sequences).toEqual(normal.sequences);
      expect(normal.hasEnded || pausing.hasEnded).toBe(false);

      for (const requestId of [stopped.requestId, trickle.requestId]) {
        await eventually(
          `the stalled close of ${requestId}`,
          () =>
            logged(server, 'stream.slow_consumer.closed', requestId, {
              trigger: 'stalled',
              cause: 'slow_consumer',
              reason: 'end_of_stream',
            }),
          { timeoutMs: 60_000 },
        );
        await eventually(`the reset of ${requestId}`, () => logged(server, 'stream.end.reset', requestId), { timeoutMs: 30_000 });
      }
      expect(logged(server, 'stream.slow_consumer.closed', normal.requestId)).toBe(false);
      expect(logged(server, 'stream.slow_consumer.closed', pausing.requestId)).toBe(false);

      const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const exposition = await scrape();
      expect(metricSum(exposition, 'aviso_sse_slow_consumer_closes_total', { trigger: 'stalled' })).toBe(2);
      expect(metricSum(exposition, 'aviso_sse_stream_resets_total')).toBe(2);
      expect(metricSum(exposition, 'aviso_sse_connections_active')).toBe(2);
      // The reset reaches the stopped client as soon as it reads again: an error, never silence.
      stopped.resume();
      expect(await stopped.ended()).toMatchObject({ kind: 'reset' });
      await eventually('nothing to be held for clients', async () => metricSum(await scrape(), 'aviso_sse_buffered_bytes') === 0, {
        timeoutMs: 20_000,
      });
    } finally {
      for (const stream of [normal, pausing, stopped]) stream.destroy();
      trickle.destroy();
      await server.stop('SIGKILL');
    }
  }, 300_000);
});

function logged(server: RunningServer, eventName: string, requestId: string, attributes: Record<string, unknown> = {}): boolean {
  return server.logs.some(
    (line) =>
      line.attributes?.['event.name'] === eventName &&
      line.attributes.request_id === requestId &&
      Object.entries(attributes).every(([key, value]) => line.attributes?.[key] === value),
  );
}

/** A watch on a raw socket that takes one byte a second off it, once its response head arrived. */
class ByteTrickleReader {
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly socket: Socket,
    readonly requestId: string,
  ) {}

  static async open(port: number, body: string): Promise<ByteTrickleReader> {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `POST /api/v1/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
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
    const requestId = /x-request-id: ([0-9a-f-]+)/i.exec(head)?.[1];
    if (!requestId) throw new Error(`no request id in ${head}`);
    const reader = new ByteTrickleReader(socket, requestId);
    reader.timer = setInterval(() => socket.read(1), 1_000);
    return reader;
  }

  destroy(): void {
    clearInterval(this.timer);
    this.socket.destroy();
  }
}
