import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { compileCFloor, findCCompiler, startCFloor, type CFloorServer } from '../../../bench/support/c-floor.js';
import { fanoutCloudEvent, fanoutWatchBody } from '../../../bench/support/notifications.js';
import { openRawSse } from '../../../bench/support/raw-sse-stream.js';
import { reapOnExit } from '../../support/child-reaper.js';
import { eventually } from '../../support/eventually.js';

/**
 * The C floor of `fanout_capacity` (bench/baselines/c-fanout-server.c), compiled with the machine's
 * `cc` as the bench compiles it (no compiler: the test fails with the install hint), read by the
 * fleet's raw-socket reader as the bench reads it.
 */

const SOURCE = resolve(import.meta.dirname, '../../../bench/baselines/c-fanout-server.c');

interface Received {
  /** Every frame after the opening one, as `event` and `data`. */
  readonly frames: { event: string; data: string }[];
  opened: boolean;
  closed: boolean;
  destroy(): void;
}

function open(server: CFloorServer, method: 'GET' | 'POST', body: string): Promise<Received> {
  return new Promise((resolveOpen, rejectOpen) => {
    const headers: Record<string, string> = method === 'POST' ? { 'content-type': 'application/json' } : { accept: 'text/event-stream' };
    const received: Received = { frames: [], opened: false, closed: false, destroy: () => handle.destroy() };
    const handle = openRawSse(
      { host: '127.0.0.1', port: server.port, path: '/api/v1/watch', method, headers, body },
      {
        onEvent: (event, data) => {
          if (received.opened) received.frames.push({ event, data });
          else {
            received.opened = true;
            resolveOpen(received);
          }
        },
        onComment: () => {},
        onRefused: (status, text) => rejectOpen(new Error(`refused: ${status} ${text}`)),
        onClose: (error) => {
          received.closed = true;
          rejectOpen(error ?? new Error('closed before the opening frame'));
        },
      },
    );
  });
}

/** A plain TCP client: `send` what is given, collect what comes back as text. */
function rawClient(port: number): Promise<{ socket: Socket; text: () => string; ended: Promise<void> }> {
  return new Promise((resolveClient, rejectClient) => {
    let text = '';
    const socket = connect({ host: '127.0.0.1', port }, () => resolveClient({ socket, text: () => text, ended }));
    const ended = new Promise<void>((resolveEnd) => socket.once('close', () => resolveEnd()));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.once('error', rejectClient);
  });
}

/**
 * Three `count` round trips: the first two make sure the floor has handled every byte sent to it
 * before (a socket's and the command pipe's events may come in one batch, in any order), the third
 * that whatever it wrote then has reached this process's sockets.
 */
async function settled(server: CFloorServer): Promise<void> {
  for (let i = 0; i < 3; i++) await server.clients();
}

/** The floor, ended with the test run should a test not stop it. */
const startFloor = (program: string): Promise<CFloorServer> => startCFloor(program, reapOnExit);

const notifications = (received: Received): string[] =>
  received.frames.filter((frame) => frame.event === 'live-notification').map((frame) => frame.data);

describe('the C floor', () => {
  let dir: string;
  let program: string;
  let server: CFloorServer | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aviso-c-floor-test-'));
    program = compileCFloor(SOURCE, dir);
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the packages to install when there is no cc', () => {
    expect(() => findCCompiler('/nonexistent')).toThrow(/cc \(a C compiler\) is not installed.*gcc and libc6-dev.*npm test/);
  });

  it('writes every published frame once to every stream, and counts the streams it holds', async () => {
    server = await startFloor(program);
    const streams = [
      await open(server, 'POST', fanoutWatchBody(0)),
      await open(server, 'POST', fanoutWatchBody(1)),
      await open(server, 'GET', ''),
    ];
    expect(await server.clients()).toBe(3);
    // The bare server's second opening frame.
    for (const stream of streams)
      expect(stream.frames).toEqual([{ event: 'heartbeat', data: expect.stringContaining('"topic":"extreme_event.north.1200.*.*"') }]);

    const sent = [fanoutCloudEvent(0, 1_000.5), fanoutCloudEvent(1, 2_000.25)];
    for (const json of sent) server.publish(json);
    await eventually('both frames on every stream', () => streams.every((stream) => notifications(stream).length >= 2), {
      timeoutMs: 5_000,
    });
    await settled(server);
    for (const stream of streams) expect(notifications(stream)).toEqual(sent);

    streams[1]?.destroy();
    await eventually('two streams held', async () => (await (server as CFloorServer).clients()) === 2, { timeoutMs: 5_000 });
    server.publish(fanoutCloudEvent(2, 3_000));
    await eventually(
      'the third frame on the two open streams',
      () => [streams[0], streams[2]].every((stream) => notifications(stream as Received).length === 3),
      {
        timeoutMs: 5_000,
      },
    );
    expect(notifications(streams[1] as Received)).toEqual(sent);
  });

  it('reads a body that arrives after its head before it answers', async () => {
    server = await startFloor(program);
    const client = await rawClient(server.port);
    const body = fanoutWatchBody(2);
    client.socket.write(
      `POST /api/v1/watch HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    client.socket.write(body.slice(0, 10));
    await settled(server);
    // Not answered while the body is incomplete.
    expect(client.text()).toBe('');
    expect(await server.clients()).toBe(0);
    client.socket.write(body.slice(10));
    await eventually('the response', () => client.text().includes('connection_established'), { timeoutMs: 5_000 });
    expect(client.text()).toMatch(/^HTTP\/1\.1 200 OK\r\ncontent-type: text\/event-stream\r\n[^]*Transfer-Encoding: chunked\r\n\r\n/);
    expect(await server.clients()).toBe(1);
    client.socket.destroy();
  });

  it('refuses a request body without a length', async () => {
    server = await startFloor(program);
    const client = await rawClient(server.port);
    client.socket.write('POST /api/v1/watch HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n');
    await client.ended;
    expect(client.text()).toMatch(/^HTTP\/1\.1 411 Length Required\r\n/);
    expect(await server.clients()).toBe(0);
  });

  it('closes a client that stops reading once 1 MiB waits for it, and goes on with the others', async () => {
    server = await startFloor(program);
    const reading = await open(server, 'POST', fanoutWatchBody(0));
    const stalled = await rawClient(server.port);
    stalled.socket.write('GET /sub HTTP/1.1\r\nhost: x\r\n\r\n');
    await eventually('both streams held', async () => (await (server as CFloorServer).clients()) === 2, { timeoutMs: 5_000 });
    stalled.socket.pause();
    // 10 KB frames until the stalled client's socket buffers and 1 MiB of its own are full.
    const padding = 'x'.repeat(10_000);
    let published = 0;
    // 200 KB at a time, which the floor may write as one batch: far below what the reading client's socket takes.
    for (let round = 0; round < 1_000 && (await server.clients()) === 2; round++) {
      for (let i = 0; i < 20; i++) server.publish(JSON.stringify({ payload: { i: published++, padding } }));
    }
    expect(await server.clients()).toBe(1);
    await eventually('every frame on the reading stream', () => notifications(reading).length === published, { timeoutMs: 10_000 });
    expect(notifications(reading).map((data) => (JSON.parse(data) as { payload: { i: number } }).payload.i)).toEqual(
      Array.from({ length: published }, (_, i) => i),
    );
    stalled.socket.destroy();
  });
});
