import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/time/clock.js';
import { HttpStreamSink } from '../../../src/http/transport/http-stream-sink.js';
import { BufferBudget } from '../../../src/streaming/buffer-budget.js';
import type { ConnectionEvents } from '../../../src/streaming/connection-watch.js';
import { SseConnection, type ConnectionLimits } from '../../../src/streaming/sse-connection.js';
import { StallWatchdog } from '../../../src/streaming/stall-watchdog.js';
import { eventually } from '../../support/eventually.js';
import { ManualClock } from '../../support/manual-clock.js';

/**
 * One stream's buffer in front of a real socket (docs/streaming.md "Slow consumers"): its bounds in
 * frames and bytes, the process budget, and the no-silent-stall rule (D37): a stream whose socket
 * takes nothing while bytes wait is reported stalled, and a closed stream whose client does not
 * read its end within the bound is reset, so the client learns it at once.
 */

const BOUND_MS = 300;
const LIMITS: ConnectionLimits = { maxQueuedFrames: 1_000, maxHeldBytes: 64 * 1024 * 1024 };

/** What a connection reported to its stream. */
class Recorder implements ConnectionEvents {
  stalls: number[] = [];
  resets = 0;
  stalled(stalledMs: number): void {
    this.stalls.push(stalledMs);
  }
  reset(): void {
    this.resets++;
  }
}

function guards(budgetBytes = 1024 * 1024 * 1024): { budget: BufferBudget; watchdog: StallWatchdog } {
  return { budget: new BufferBudget(budgetBytes), watchdog: new StallWatchdog(systemClock, BOUND_MS) };
}

function connectionOf(
  response: ServerResponse,
  options: { limits?: Partial<ConnectionLimits>; shared?: ReturnType<typeof guards>; events?: Recorder } = {},
): { connection: SseConnection; events: Recorder; shared: ReturnType<typeof guards> } {
  const events = options.events ?? new Recorder();
  const shared = options.shared ?? guards();
  const connection = new SseConnection(new HttpStreamSink(response), { ...LIMITS, ...options.limits }, shared, events);
  return { connection, events, shared };
}

/** One turn of the event loop: the connection writes what was queued in it (sse-connection.ts). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Fills a paused client's kernel buffers and Node's, a frame a turn, so further frames stay queued. */
async function fill(connection: SseConnection, frame: string | Buffer, count = 200): Promise<number> {
  let sent = 0;
  while (sent < count && connection.send(frame)) {
    sent++;
    await nextTurn();
  }
  return sent;
}

const BIG_FRAME = `event: live-notification\ndata: ${'x'.repeat(64 * 1024)}\n\n`;
const CLOSE_FRAME = 'event: connection-closing\ndata: {"reason":"end_of_stream"}\n\n';

function readAll(client: IncomingMessage): { text: () => string; ended: Promise<'end' | Error> } {
  let text = '';
  client.setEncoding('utf8');
  client.on('data', (chunk: string) => (text += chunk));
  const ended = new Promise<'end' | Error>((resolve) => {
    client.once('end', () => resolve('end'));
    client.once('error', (error) => resolve(error));
    client.once('aborted', () => resolve(new Error('aborted')));
  });
  return { text: () => text, ended };
}

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A server with one stream, and a client (with its socket) that reads only when told. */
async function streamPair(): Promise<{ response: ServerResponse; client: IncomingMessage; clientSocket: Socket }> {
  let resolveResponse!: (response: ServerResponse) => void;
  const served = new Promise<ServerResponse>((resolve) => (resolveResponse = resolve));
  const server = createServer((_req, res) => resolveResponse(res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  let clientSocket: Socket | undefined;
  const client = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, resolve);
    req.on('socket', (socket) => (clientSocket = socket));
    req.on('error', reject);
    req.end();
    void served.then((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
  });
  return { response: await served, client, clientSocket: clientSocket as Socket };
}

describe('SseConnection: the end of a stream (D37)', () => {
  it('resets the connection of a client that does not read its end within the bound', async () => {
    const { response, client } = await streamPair();
    client.pause();
    const { connection, events } = connectionOf(response);
    await fill(connection, BIG_FRAME);
    const closed = new Promise<void>((resolve) => response.once('close', () => resolve()));
    const clientError = new Promise<NodeJS.ErrnoException>((resolve) => client.once('error', resolve));
    // Kept queued frames go to the socket too: far more than the kernel buffers of a paused reader.
    connection.finish(CLOSE_FRAME, true);
    expect(response.writableFinished).toBe(false);
    await closed;
    expect(response.destroyed).toBe(true);
    expect(events.resets).toBe(1);
    // The client is told at once: its connection fails, rather than waiting on a silent socket.
    client.resume();
    expect((await clientError).code).toBe('ECONNRESET');
  });

  it('leaves a client that reads the final frame alone, and keeps its connection for further requests', async () => {
    const { response, client, clientSocket } = await streamPair();
    const reader = readAll(client);
    const { connection, events, shared } = connectionOf(response);
    connection.send('event: heartbeat\ndata: {}\n\n');
    connection.finish(CLOSE_FRAME, true);
    expect(await reader.ended).toBe('end');
    expect(reader.text()).toContain('"reason":"end_of_stream"');
    expect(response.writableFinished).toBe(true);
    await eventually('the watchdog to let the connection go', () => shared.watchdog.size === 0);
    expect(events.resets).toBe(0);
    expect(clientSocket.destroyed).toBe(false);
  });

  it('with closeConnection, delivers everything to a client that reads late, then ends the connection', async () => {
    const { response, client, clientSocket } = await streamPair();
    client.pause();
    const { connection, events, shared } = connectionOf(response);
    const sent = await fill(connection, BIG_FRAME, 60);
    connection.finish(CLOSE_FRAME, true, true);
    // The client reads again before the bound: it gets every frame, the close, and the connection's end.
    const socketEnded = new Promise<void>((resolve) => clientSocket.once('end', () => resolve()));
    const reader = readAll(client);
    client.resume();
    expect(await reader.ended).toBe('end');
    await socketEnded;
    expect(reader.text().split('event: live-notification').length - 1).toBe(sent);
    expect(reader.text().endsWith(CLOSE_FRAME)).toBe(true);
    await eventually('the end to be complete', () => shared.watchdog.size === 0 && shared.budget.totalBytes === 0);
    expect(events.resets).toBe(0);
  });

  it('releases what it held from the process budget once its end is complete or cut', async () => {
    const shared = guards();
    for (const read of [true, false]) {
      const { response, client } = await streamPair();
      client.pause();
      const { connection } = connectionOf(response, { shared });
      await fill(connection, BIG_FRAME, 100);
      expect(shared.budget.totalBytes).toBeGreaterThan(0);
      connection.finish(CLOSE_FRAME, false, true);
      if (read) readAll(client);
      if (read) client.resume();
      await eventually('the budget to be released', () => shared.budget.totalBytes === 0 && shared.budget.holdingStreams === 0);
    }
  });
});

describe('SseConnection: a socket that takes nothing (D37)', () => {
  it('reports a stream stalled once its bytes have waited the bound with no write completing', async () => {
    const { response, client } = await streamPair();
    client.pause();
    const { connection, events } = connectionOf(response);
    await fill(connection, BIG_FRAME);
    await eventually('the stall to be reported', () => events.stalls.length === 1);
    expect(events.stalls[0]).toBeGreaterThanOrEqual(BOUND_MS);
    expect(connection.isOpen).toBe(true);
  });

  it('does not report a reader that keeps taking bytes, however slowly', async () => {
    const { response, client } = await streamPair();
    client.pause();
    // A longer bound than the others: the reader's pauses must stay well inside it on a busy machine.
    const shared = { budget: new BufferBudget(1024 * 1024 * 1024), watchdog: new StallWatchdog(systemClock, 1_500) };
    const { connection, events } = connectionOf(response, { shared });
    await fill(connection, BIG_FRAME, 150);
    // Reads a little at a time for several bounds: every write that completes is progress.
    const reader = readAll(client);
    client.pause();
    const trickle = setInterval(() => {
      client.resume();
      setTimeout(() => client.pause(), 20);
    }, 250);
    try {
      await eventually('the queue to drain', () => connection.heldBytes === 0, { timeoutMs: 60_000 });
    } finally {
      clearInterval(trickle);
    }
    expect(reader.text().length).toBeGreaterThan(0);
    expect(events.stalls).toEqual([]);
    await eventually('the watchdog to let it go', () => shared.watchdog.size === 0);
  });

  it('holds nothing and is not watched while its client keeps up', async () => {
    const { response, client } = await streamPair();
    readAll(client);
    const { connection, shared } = connectionOf(response);
    for (let i = 0; i < 100; i++) connection.send(`event: live-notification\ndata: ${i}\n\n`);
    await eventually('everything to reach the kernel', () => connection.heldBytes === 0 && shared.watchdog.size === 0);
    expect(shared.budget.totalBytes).toBe(0);
  });
});

describe('SseConnection: bounds in bytes', () => {
  it('refuses a frame that would pass max_buffered_bytes, and says which bound', async () => {
    const { response, client } = await streamPair();
    client.pause();
    const { connection } = connectionOf(response, { limits: { maxHeldBytes: 2 * 1024 * 1024 } });
    const sent = await fill(connection, BIG_FRAME, 1_000);
    expect(sent).toBeLessThan(1_000);
    expect(connection.lastRefusal).toBe('buffered_bytes');
    expect(connection.heldBytes).toBeLessThanOrEqual(2 * 1024 * 1024);
  });

  it('always takes a frame onto an empty buffer, even one larger than the bound', async () => {
    const { response, client } = await streamPair();
    readAll(client);
    const { connection } = connectionOf(response, { limits: { maxHeldBytes: 1024 } });
    expect(connection.send(BIG_FRAME)).toBe(true);
  });

  it('refuses streams past their share once the process budget is passed, never a stream that keeps up', async () => {
    const budgetBytes = 4 * 1024 * 1024;
    const shared = guards(budgetBytes);
    for (let i = 0; i < 3; i++) {
      const { response, client } = await streamPair();
      client.pause();
      const { connection } = connectionOf(response, { shared });
      await fill(connection, BIG_FRAME, 1_000);
      expect(connection.lastRefusal).toBe('process_buffered_bytes');
    }
    const healthy = await streamPair();
    readAll(healthy.client);
    const { connection } = connectionOf(healthy.response, { shared });
    for (let i = 0; i < 20; i++) {
      await eventually('the healthy stream to hold nothing', () => connection.heldBytes === 0);
      expect(connection.send(BIG_FRAME)).toBe(true);
    }
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
    const write = response.write.bind(response) as (chunk: string | Buffer, callback?: () => void) => boolean;
    (response as unknown as { write: typeof write }).write = (chunk, callback) => {
      writes++;
      return write(chunk, callback);
    };
    const { connection } = connectionOf(response);
    const frames = Array.from({ length: 300 }, (_, i) => Buffer.from(`event: replay\ndata: ${i}\n\n`));
    expect(connection.sendAll(frames.slice(0, 150))).toBe(true);
    expect(connection.send('event: heartbeat\ndata: {}\n\n')).toBe(true);
    expect(connection.sendAll(frames.slice(150))).toBe(true);
    connection.finish('event: connection-closing\ndata: {}\n\n', true);
    await ended;
    const expected =
      frames.slice(0, 150).join('') +
      'event: heartbeat\ndata: {}\n\n' +
      frames.slice(150).join('') +
      'event: connection-closing\ndata: {}\n\n';
    expect(text).toBe(expected);
    expect(writes).toBeLessThan(10);
  });

  it('refuses a batch that does not fit the queue, queueing none of it', async () => {
    const { response, client } = await streamPair();
    client.pause();
    const { connection } = connectionOf(response, { limits: { maxQueuedFrames: 4 } });
    // A paused reader: frames stay queued once the socket is full, until the queue is.
    const big = Buffer.from(`event: replay\ndata: ${'x'.repeat(512 * 1024)}\n\n`);
    await fill(connection, big, 1_000);
    expect(connection.lastRefusal).toBe('buffered_events');
    expect(connection.queuedFrames).toBe(4);
    expect(connection.sendAll([big, big])).toBe(false);
    expect(connection.queuedFrames).toBe(4);
  });
});

describe('SseConnection: the age of its oldest queued frame (D49)', () => {
  it('is 0 while the socket takes everything, grows with the clock while frames wait, and is 0 again once they left', async () => {
    const { response, client } = await streamPair();
    const clock = new ManualClock(1_000_000);
    const shared = { budget: new BufferBudget(1024 * 1024 * 1024), watchdog: new StallWatchdog(clock, 60_000) };
    const { connection } = connectionOf(response, { shared });
    const reader = readAll(client);
    connection.send('event: heartbeat\ndata: {}\n\n');
    expect(connection.queueAge(clock.now())).toBe(0); // queued this turn, not yet aged
    await nextTurn();
    expect(connection.queuedFrames).toBe(0);
    expect(connection.queueAge(clock.now() + 5000)).toBe(0);

    client.pause();
    await fill(connection, BIG_FRAME);
    expect(connection.queuedFrames).toBeGreaterThan(0);
    const queuedAt = clock.now();
    clock.advance(700);
    connection.send(BIG_FRAME); // a newer frame does not make the oldest younger
    clock.advance(300);
    expect(connection.queueAge(clock.now())).toBe(clock.now() - queuedAt);
    client.resume();
    await eventually('the queue to empty', () => connection.queuedFrames === 0);
    expect(connection.queueAge(clock.now())).toBe(0);
    connection.finish(CLOSE_FRAME, true);
    expect(await reader.ended).toBe('end');
  });
});
