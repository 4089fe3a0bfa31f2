import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AvisoClient, MemoryStore, resumeKey, StreamProtocolError, type WatchStatus } from '../../src/index.js';
import { eventually } from '../../../../test/support/eventually.js';
import { take } from '../support/take.js';

/**
 * The aviso client's tolerance on the wire, against a scripted SSE server: what it skips before
 * the opening control and ignores after it does not end or disturb the stream, and the
 * notifications around it arrive in order. What it treats as fatal still is.
 */
const frame = (event: string, data: unknown): string =>
  `event: ${event}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const note = (sequence: number): string =>
  frame('live-notification', { specversion: '1.0', id: `mars@${sequence}`, data: { identifier: { class: 'od' }, payload: null } });

let server: Server;
let baseUrl: string;
let script: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of script) res.write(chunk);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("tolerance of the wire (the aviso client's opening and drain rules)", () => {
  it('skips heartbeats and unknown events before the opening, ignores unknown events and controls after it', async () => {
    script = [
      ': a comment\n\n',
      frame('heartbeat', ''),
      frame('progress', 'not json at all'),
      frame('live-notification', { type: 'connection_established', request_id: 'r1' }),
      frame('progress', { pct: 50 }),
      frame('replay-control', { type: 'replay_paused' }),
      frame('live-notification', { type: 'connection_established', request_id: 'r1' }),
      note(1),
      frame('heartbeat', 'still here'),
      frame('mystery', '{"broken"'),
      note(2),
    ];
    const statuses: WatchStatus[] = [];
    const stream = new AvisoClient({ baseUrl }).watch({
      eventType: 'mars',
      identifier: { class: 'od' },
      onStatus: (s) => statuses.push(s),
    });
    try {
      expect(await take(stream, 2)).toEqual([1, 2]);
      expect(statuses.filter((s) => s.type === 'opened')).toHaveLength(1);
      expect(statuses.filter((s) => s.type === 'reconnecting')).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it('still ends on an error event, even after skipped frames', async () => {
    script = [
      frame('heartbeat', ''),
      frame('live-notification', { type: 'connection_established' }),
      frame('progress', 'x'),
      frame('error', { error: 'Internal', message: 'backend lost' }),
    ];
    const stream = new AvisoClient({ baseUrl }).watch({ eventType: 'mars', identifier: {} });
    await expect(take(stream, 1)).rejects.toThrow(
      new StreamProtocolError('the server ended the stream with an error: Internal: backend lost'),
    );
  });
});

describe("flushCursorOnExit (the aviso client's flush_cursor_on_exit)", () => {
  /** Takes one notification, breaks out of the loop, and waits for the stream to end. */
  const takeOneAndLeave = async (flushCursorOnExit: boolean): Promise<MemoryStore> => {
    script = [frame('live-notification', { type: 'connection_established' }), note(7)];
    const store = new MemoryStore();
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    const stream = new AvisoClient({ baseUrl, flushCursorOnExit }).watch({
      eventType: 'mars',
      identifier: {},
      stateStore: store,
      onStatus: (s) => s.type === 'ended' && ended(),
    });
    for await (const n of stream) {
      expect(n.sequence).toBe(7);
      break;
    }
    await done;
    return store;
  };
  const saved = async (store: MemoryStore): Promise<number | undefined> =>
    (await store.get(await resumeKey(baseUrl, 'mars', {})))?.lastCommittedSequence;

  it('commits the last handed notification when the stream is closed, when asked', async () => {
    const store = await takeOneAndLeave(true);
    expect(await eventually('the flush on exit', async () => (await saved(store)) === 7)).toBe(true);
  });
  it('leaves it uncommitted by default, so a restart delivers it again', async () => {
    expect(await saved(await takeOneAndLeave(false))).toBeUndefined();
  });
});
