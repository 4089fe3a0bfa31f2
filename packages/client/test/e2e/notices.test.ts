import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AvisoClient,
  HistoryGapError,
  MemoryStore,
  resumeKey,
  type Notification,
  type NotificationStream,
  type StateStore,
  type WatchRequest,
  type WatchStatus,
} from '../../src/index.js';
import { until } from '../support/manual-clock.js';

/**
 * The server's `history_gap` and `sequence_reset` (docs/streaming.md "History gaps", "A start
 * beyond the stream") as the library surfaces them, against a scripted SSE server over real
 * sockets: each script answers one connection. A notice is reported as a status when the
 * iteration reaches it and attached to the next notification; a reset moves the position (and
 * the state store's cursor) to the new numbering, so its 1, 2, … are delivered.
 */
type Script = (res: ServerResponse) => void;
let scripts: Script[] = [];
let bodies: Record<string, unknown>[] = [];
let server: Server;
let baseUrl: string;

const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const started = frame('replay-control', { type: 'replay_started', request_id: 'r', topic: 't', timestamp: 'x' });
const established = frame('live-notification', { type: 'connection_established', request_id: 'r', topic: 't', timestamp: 'x' });
const note = (sequence: number, kind: 'replay' | 'live-notification' = 'replay'): string =>
  frame(kind, {
    specversion: '1.0',
    id: `mars@${sequence}`,
    time: '2026-01-01T00:00:00Z',
    data: { identifier: { class: 'od' }, payload: null },
  });
const gapFrame = (first: number, last: number, lost: number | null, scope: 'request' | 'stream'): Record<string, unknown> => ({
  type: 'history_gap',
  first_sequence: first,
  last_sequence: last,
  lost,
  scope,
  message: `lost ${first}-${last}`,
  request_id: 'r',
  timestamp: 'x',
  topic: 't',
});
const gap = (first: number, last: number, lost: number | null = null, scope: 'request' | 'stream' = 'stream'): string =>
  frame('replay-control', gapFrame(first, last, lost, scope));
const resetFrame = (requested: number, last: number): string =>
  frame('replay-control', {
    type: 'sequence_reset',
    requested_sequence: requested,
    last_sequence: last,
    message: `reset ${requested}/${last}`,
    request_id: 'r',
    timestamp: 'x',
    topic: 't',
  });
const closing = (reason: string): string => frame('connection-closing', { reason, message: 'm', timestamp: 'x' });
const completed = frame('replay-control', { type: 'replay_completed' });
const sse =
  (body: string): Script =>
  (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(body);
  };
/** Answers with `body` and keeps the response open; `held` receives it to write or end later. */
const hold =
  (body: string, held: (res: ServerResponse) => void): Script =>
  (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(body);
    held(res);
  };

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      bodies.push(JSON.parse(text) as Record<string, unknown>);
      const script = scripts.shift();
      if (script) script(res);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A watch whose statuses and handed notifications are logged in one list, in the order the consumer met them. */
function watch(list: Script[], request: Partial<WatchRequest>): { stream: NotificationStream; log: string[]; statuses: WatchStatus[] } {
  scripts = list;
  bodies = [];
  const log: string[] = [];
  const statuses: WatchStatus[] = [];
  const stream = new AvisoClient({ baseUrl }).watch({
    eventType: 'mars',
    identifier: { class: 'od' },
    onStatus: (s) => {
      statuses.push(s);
      if (s.type === 'historyGap') log.push(`gap ${s.gap.firstSequence}-${s.gap.lastSequence}`);
      if (s.type === 'sequenceReset') log.push(`reset ${s.reset.requestedSequence}/${s.reset.lastSequence}`);
    },
    ...request,
  });
  return { stream, log, statuses };
}

async function pull(stream: NotificationStream, log: string[], count: number): Promise<Notification[]> {
  const seen: Notification[] = [];
  while (seen.length < count) {
    const next = await stream.next();
    if (next.done) break;
    seen.push(next.value);
    log.push(`n ${next.value.sequence}`);
  }
  return seen;
}

async function eventuallyStored(store: StateStore, sequence: number): Promise<void> {
  for (let tries = 0; (await stored(store)) !== sequence; tries++) {
    if (tries > 200) throw new Error(`the store never held ${sequence}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const stored = async (store: StateStore): Promise<number | undefined> =>
  (await store.get(await resumeKey(baseUrl, 'mars', { class: 'od' })))?.lastCommittedSequence;

describe('history gaps are surfaced, not fatal', () => {
  it('reports each gap when the iteration reaches it and attaches it to the next notification; one at the end of a replay is still reported', async () => {
    const { stream, log } = watch(
      [sse(started + gap(1, 2, 2, 'request') + note(3) + note(4) + gap(5, 6) + completed + closing('end_of_stream'))],
      {
        from: { fromId: 1 },
        replayOnly: true,
      },
    );
    const seen = await pull(stream, log, 10);
    expect(seen.map((n) => n.sequence)).toEqual([3, 4]);
    expect(log).toEqual(['gap 1-2', 'n 3', 'n 4', 'gap 5-6']);
    expect(seen[0]!.notices).toEqual([
      {
        type: 'history_gap',
        firstSequence: 1,
        lastSequence: 2,
        lost: 2,
        scope: 'request',
        message: 'lost 1-2',
        frame: gapFrame(1, 2, 2, 'request'),
      },
    ]);
    expect(seen[1]!.notices).toBeUndefined();
  });

  it('an unfiltered watch jumps over what a gap said was lost; an unexplained jump still ends it', async () => {
    const said = watch(
      [sse(established + note(1, 'live-notification') + gap(2, 4) + note(5, 'live-notification') + note(6, 'live-notification'))],
      { identifier: {} },
    );
    try {
      expect((await pull(said.stream, said.log, 3)).map((n) => n.sequence)).toEqual([1, 5, 6]);
    } finally {
      said.stream.close();
    }
    const unsaid = watch([sse(established + note(1, 'live-notification') + gap(2, 3) + note(5, 'live-notification'))], { identifier: {} });
    await expect(pull(unsaid.stream, unsaid.log, 3)).rejects.toThrow(
      new HistoryGapError({ kind: 'sequence_jump', expected: 2, observed: 5 }),
    );
  });
});

describe('a sequence reset moves the position to the new numbering', () => {
  it("delivers the new numbering from 1, moves the state store's cursor back deliberately, and resumes in the new numbering", async () => {
    const store = new MemoryStore();
    const held: ServerResponse[] = [];
    const { stream, log } = watch(
      [
        hold(started + note(1) + note(2) + note(3), (res) => held.push(res)),
        // The server restarted with a new numbering: 4 is beyond its last sequence, 2.
        hold(started + resetFrame(4, 2) + note(1) + note(2), (res) => held.push(res)),
        hold(started + note(3), (res) => held.push(res)),
      ],
      { from: { fromId: 1 }, stateStore: store },
    );
    try {
      expect((await pull(stream, log, 3)).map((n) => n.sequence)).toEqual([1, 2, 3]);
      // Asking for the next commits 3; then the connection ends.
      const afterReset = pull(stream, log, 1);
      await until(() => log.length === 3 && held.length === 1, 'the first connection');
      await eventuallyStored(store, 3);
      held[0]!.end(closing('max_duration_reached'));
      const [first] = await afterReset;
      expect(first!.sequence).toBe(1);
      expect(first!.notices).toMatchObject([{ type: 'sequence_reset', requestedSequence: 4, lastSequence: 2, message: 'reset 4/2' }]);
      expect(await stored(store)).toBe(0);
      expect(stream.lastSequence).toBe(1);
      expect((await pull(stream, log, 1))[0]!.sequence).toBe(2);
      // Committing 1 of the new numbering, below the old 3: only the rewind lets it in.
      expect(await stored(store)).toBe(1);
      const last = pull(stream, log, 1);
      await eventuallyStored(store, 2);
      held[1]!.end(closing('max_duration_reached'));
      expect((await last)[0]!.sequence).toBe(3);
      expect(log).toEqual(['n 1', 'n 2', 'n 3', 'reset 4/2', 'n 1', 'n 2', 'n 3']);
      // Resumed after the old 3, then after the new 2.
      expect(bodies.map((b) => b.from_id)).toEqual(['1', '4', '3']);
    } finally {
      stream.close();
    }
  });

  it('without a store: a reconnect after the reset asks for sequence 1 of the new numbering', async () => {
    let open: ServerResponse | undefined;
    const { stream, log, statuses } = watch(
      [
        sse(started + note(1) + note(2) + closing('max_duration_reached')),
        hold(started + resetFrame(3, 0), (res) => (open = res)),
        hold(started + note(1), () => undefined),
      ],
      { from: { fromId: 1 } },
    );
    try {
      expect((await pull(stream, log, 2)).map((n) => n.sequence)).toEqual([1, 2]);
      const next = pull(stream, log, 1);
      await until(() => statuses.some((s) => s.type === 'sequenceReset'), 'the reset');
      expect(stream.lastSequence).toBeUndefined();
      open!.end(closing('max_duration_reached'));
      const [first] = await next;
      expect(first!.sequence).toBe(1);
      expect(first!.notices?.map((n) => n.type)).toEqual(['sequence_reset']);
      expect(bodies.map((b) => b.from_id)).toEqual(['1', '3', '1']);
    } finally {
      stream.close();
    }
  });

  it('a reset the consumer has not met yet survives a reconnect, which already asks for sequence 1', async () => {
    const { stream, log } = watch(
      [
        sse(started + note(1) + note(2) + closing('max_duration_reached')),
        // The reset and a close arrive while the consumer is still busy with 2.
        sse(started + resetFrame(3, 0) + closing('max_duration_reached')),
        hold(started + note(1) + note(2), () => undefined),
      ],
      { from: { fromId: 1 } },
    );
    try {
      expect((await pull(stream, log, 2)).map((n) => n.sequence)).toEqual([1, 2]);
      await until(() => bodies.length === 3, 'the third connection');
      // The consumer meets the reset only now, after the reconnect.
      const seen = await pull(stream, log, 2);
      expect(seen.map((n) => n.sequence)).toEqual([1, 2]);
      expect(log).toEqual(['n 1', 'n 2', 'reset 3/0', 'n 1', 'n 2']);
      expect(bodies.map((b) => b.from_id)).toEqual(['1', '3', '1']);
    } finally {
      stream.close();
    }
  });
});
