import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import type { SequenceJournal } from '../../../src/backend/memory/sequence-journal.js';
import { ManualClock } from '../../support/manual-clock.js';
import { SseClient, type SseEvent } from '../../support/sse-client.js';
import { buildTestApp, listen, type TestApp } from '../../support/test-app.js';
import { framesWithoutHeartbeats as frames, historyLabel as label } from '../../support/stream-frames.js';

/**
 * What a stream says of history it cannot deliver, through the real app over HTTP: a `history_gap`
 * before the first notification after a gap (D42), and a `sequence_reset` when the request starts
 * beyond the stream's numbering (D41). Both are `replay-control` frames after the opening, which the
 * aviso client ignores; the close vocabulary is unchanged.
 */

let testApp: TestApp | undefined;
const clients: SseClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await testApp?.app.close();
  testApp = undefined;
});

async function start(backend: MemoryBackend): Promise<string> {
  testApp = await buildTestApp({ backend, clock: new ManualClock() });
  return listen(testApp.app);
}

const identifier = (step: number) => ({
  class: 'od',
  expver: '1',
  domain: 'g',
  date: '20250706',
  time: '1200',
  stream: 'enfo',
  step: String(step),
});

async function notify(url: string, step: number): Promise<void> {
  const response = await fetch(`${url}/api/v1/notification`, {
    method: 'POST',
    body: JSON.stringify({ event_type: 'mars', identifier: identifier(step), payload: `step ${step}` }),
  });
  expect(response.status).toBe(200);
}

async function stream(url: string, path: string, body: Record<string, unknown>): Promise<SseClient> {
  const client = await SseClient.open(`${url}${path}`, { event_type: 'mars', ...body });
  clients.push(client);
  expect(client.status).toBe(200);
  return client;
}

describe('history gaps on a stream (D42)', () => {
  it('a replay over lost history says so once, before the first notification after the gap', async () => {
    const url = await start(new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 100, clock: new ManualClock() }));
    // Steps 1, 1, 2, 1: the first two of step 1 are superseded.
    for (const step of [1, 1, 2, 1]) await notify(url, step);
    const client = await stream(url, '/api/v1/replay', { identifier: { class: 'od' }, from_id: '1' });
    expect((await frames(client)).map(label)).toEqual([
      'replay_started',
      'gap 1-2 lost=2 request',
      'replay mars@3',
      'replay mars@4',
      'replay_completed',
      'close end_of_stream',
    ]);
  });

  it('the frame names the range, the count, the scope and a message, keys sorted', async () => {
    const url = await start(new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 100, clock: new ManualClock() }));
    for (const step of [1, 1]) await notify(url, step);
    const client = await stream(url, '/api/v1/replay', { identifier: { class: 'od' }, from_id: '0' });
    const gap = (await frames(client)).find((event) => event.json.type === 'history_gap') as SseEvent;
    expect(gap.json).toEqual({
      first_sequence: 1,
      last_sequence: 1,
      lost: 1,
      message: '1 notification of this request in sequence 1 is no longer stored',
      request_id: gap.json.request_id,
      scope: 'request',
      timestamp: gap.json.timestamp,
      topic: 'mars.od.*.*.*.*.*.*',
      type: 'history_gap',
    });
    expect(gap.data).toBe(JSON.stringify(gap.json, Object.keys(gap.json).sort()));
  });

  it("a replay that lost nothing gets no gap frame, and other topics' losses are not its own", async () => {
    const url = await start(new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 100, clock: new ManualClock() }));
    for (const step of [1, 1, 2]) await notify(url, step);
    const client = await stream(url, '/api/v1/replay', { identifier: { class: 'od', step: 2 }, from_id: '1' });
    expect((await frames(client)).map(label)).toEqual(['replay_started', 'replay mars@3', 'replay_completed', 'close end_of_stream']);
  });

  it('a watch says the gap in its replay phase, then goes live', async () => {
    const url = await start(new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 100, clock: new ManualClock() }));
    for (const step of [1, 1]) await notify(url, step);
    const client = await stream(url, '/api/v1/watch', { identifier: { class: 'od' }, from_id: '1' });
    const opening = await frames(client, 4);
    await notify(url, 3);
    const live = await frames(client, 1);
    expect([...opening, ...live].map(label)).toEqual([
      'replay_started',
      'gap 1-1 lost=1 request',
      'replay mars@2',
      'replay_completed',
      'live-notification mars@3',
    ]);
  });

  it("after a restart the previous process's range is said lost, its topics unknown", async () => {
    const url = await start(
      new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 100, clock: new ManualClock(), journal: restoredJournal({ MARS: 3 }) }),
    );
    await notify(url, 1);
    const behind = await stream(url, '/api/v1/replay', { identifier: { class: 'od' }, from_id: '2' });
    expect((await frames(behind)).map(label)).toEqual([
      'replay_started',
      'gap 2-3 lost=null stream',
      'replay mars@4',
      'replay_completed',
      'close end_of_stream',
    ]);
    const caughtUp = await stream(url, '/api/v1/replay', { identifier: { class: 'od' }, from_id: '4' });
    expect((await frames(caughtUp)).map(label)).toEqual(['replay_started', 'replay mars@4', 'replay_completed', 'close end_of_stream']);
  });
});

describe("a start beyond the stream's numbering (D41)", () => {
  it('is said, and the stream replays from the first sequence, then goes live', async () => {
    const url = await start(new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 100, clock: new ManualClock() }));
    for (const step of [1, 2]) await notify(url, step);
    const client = await stream(url, '/api/v1/watch', { identifier: { class: 'od' }, from_id: '4' });
    const opening = await frames(client, 5);
    await notify(url, 3);
    const live = await frames(client, 1);
    expect([...opening, ...live].map(label)).toEqual([
      'replay_started',
      'sequence_reset',
      'replay mars@1',
      'replay mars@2',
      'replay_completed',
      'live-notification mars@3',
    ]);
    const reset = opening[1] as SseEvent;
    expect(reset.json).toEqual({
      last_sequence: 2,
      message:
        "Sequence 4 is beyond this stream's last sequence 2: its numbering was reset, so the stream starts again from its first sequence",
      request_id: reset.json.request_id,
      requested_sequence: 4,
      timestamp: reset.json.timestamp,
      topic: 'mars.od.*.*.*.*.*.*',
      type: 'sequence_reset',
    });
    // replay_started still echoes what was asked.
    expect((opening[0] as SseEvent).json.from_sequence).toBe(4);
  });

  it('the next sequence is not beyond: a client caught up just waits for it', async () => {
    const url = await start(new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 100, clock: new ManualClock() }));
    for (const step of [1, 2]) await notify(url, step);
    const client = await stream(url, '/api/v1/watch', { identifier: { class: 'od' }, from_id: '3' });
    const opening = await frames(client, 2);
    await notify(url, 3);
    expect([...opening, ...(await frames(client, 1))].map(label)).toEqual([
      'replay_started',
      'replay_completed',
      'live-notification mars@3',
    ]);
  });

  it('a replay beyond the numbering replays the new numbering and completes', async () => {
    const url = await start(new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 100, clock: new ManualClock() }));
    await notify(url, 1);
    const client = await stream(url, '/api/v1/replay', { identifier: { class: 'od' }, from_id: '50' });
    expect((await frames(client)).map(label)).toEqual([
      'replay_started',
      'sequence_reset',
      'replay mars@1',
      'replay_completed',
      'close end_of_stream',
    ]);
  });

  it('a GET replay resumed beyond the numbering replays it instead of answering 204', async () => {
    const url = await start(new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 100, clock: new ManualClock() }));
    await notify(url, 1);
    const query = new URLSearchParams({ event_type: 'mars', identifier: JSON.stringify({ class: 'od' }), from_id: '1' });
    const resumed = await SseClient.openGet(`${url}/api/v1/replay?${query.toString()}`, { 'Last-Event-ID': 'mars@9' });
    clients.push(resumed);
    expect(resumed.status).toBe(200);
    expect((await frames(resumed)).map(label)).toEqual([
      'replay_started',
      'sequence_reset',
      'replay mars@1',
      'replay_completed',
      'close end_of_stream',
    ]);
    const atEnd = await fetch(`${url}/api/v1/replay?${query.toString()}`, { headers: { 'Last-Event-ID': 'mars@1' } });
    expect(atEnd.status).toBe(204);
  });
});

function restoredJournal(restored: Record<string, number>): SequenceJournal {
  return { restored: new Map(Object.entries(restored)), afterMachineRestart: false, issued: () => undefined, close: () => undefined };
}
