import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { eventually } from '../../support/eventually.js';
import { FaultyBackend } from '../../support/faulty-backend.js';
import { ManualClock } from '../../support/manual-clock.js';
import { SseClient, withoutHeartbeats } from '../../support/sse-client.js';
import { buildTestApp, listen, type TestApp } from '../../support/test-app.js';
import {
  TRANSCRIPT_REQUEST,
  TRANSCRIPT_TOPIC,
  expectClose,
  SLOW_CONSUMER_CLOSE,
  expectCloudEvent,
  expectControl,
  frameLabel,
  transcriptNotification,
} from '../../support/transcript.js';

/**
 * The stream lifecycle through the real app over real HTTP on a loopback port, with a manual clock
 * for timers and a backend that can be made to fail.
 */
let testApp: TestApp | undefined;
const clients: SseClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await testApp?.app.close();
  testApp = undefined;
});

async function start(options: Parameters<typeof buildTestApp>[0] = {}) {
  const clock = options.clock ?? new ManualClock();
  const faulty = new FaultyBackend(options.backend ?? new MemoryBackend({ maxHistoryPerTopic: 100, maxTopics: 1000, clock }));
  testApp = await buildTestApp({ ...options, clock, backend: faulty });
  const url = await listen(testApp.app);
  return { url, faulty, clock, app: testApp.app };
}

async function open(url: string, path: string, body: unknown) {
  const client = await SseClient.open(`${url}${path}`, body);
  clients.push(client);
  return client;
}

/** Sequences 1 and 2 elsewhere, then the transcript's 3, 4, 5. */
/**
 * Sequences 1 and 2 go to the transcript's stream on a topic its request does not match (time
 * 0000), so the transcript notifications get 3, 4 and 5 as in docs/design/rules/streaming.md §15 (sequences are per
 * stream base, D28).
 */
async function seedTranscript(faulty: FaultyBackend, url: string) {
  for (const note of ['other-1', 'other-2']) {
    const other = transcriptNotification(note);
    const response = await fetch(`${url}/api/v1/notification`, {
      method: 'POST',
      body: JSON.stringify({ ...other, identifier: { ...other.identifier, time: '0000' } }),
    });
    expect(response.status).toBe(200);
  }
  for (const note of ['a', 'b', 'c']) {
    const response = await fetch(`${url}/api/v1/notification`, { method: 'POST', body: JSON.stringify(transcriptNotification(note)) });
    expect(response.status).toBe(200);
  }
  expect((await faulty.stats()).total_messages).toBe(5);
}

/** A released stream (or subscription) offers no event to wait for: poll every 10 ms, for 5 s. */
const RELEASE_WAIT = { timeoutMs: 5_000, intervalMs: 10 };

describe('replay failures (docs/design/rules/streaming.md §9.6)', () => {
  it('15.5: a failing second batch ends the stream with an error frame and end_of_stream', async () => {
    const { url, faulty } = await start({ watchEndpoint: { replay_batch_size: 1 } });
    await seedTranscript(faulty, url);
    faulty.failFetchCalls.add(2);
    const client = await open(url, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '3' });
    const requestId = client.headers.get('x-request-id');
    const events = withoutHeartbeats(await client.rest());
    expect(events.map(frameLabel)).toEqual(['replay_started', 'test_polygon@3', 'stream_processing_failed', 'end_of_stream']);
    expectCloudEvent(events[1], 'replay', 3, 'a');
    expect(events[2]?.event).toBe('error');
    expect(events[2]?.json).toEqual({
      error: 'stream_processing_failed',
      message: 'injected failure of fetch 2',
      request_id: requestId,
      topic: TRANSCRIPT_TOPIC,
    });
    expectClose(events[3], 'end_of_stream', requestId);
  });

  it('a failure during the lookahead is a failure, not a proven truncation', async () => {
    const { url, faulty } = await start({ watchEndpoint: { replay_batch_size: 1, max_historical_notifications: 1 } });
    await seedTranscript(faulty, url);
    faulty.failFetchCalls.add(2);
    const client = await open(url, '/api/v1/watch', { ...TRANSCRIPT_REQUEST, from_id: '3' });
    const events = withoutHeartbeats(await client.rest());
    expect(events.map(frameLabel)).toEqual(['replay_started', 'test_polygon@3', 'stream_processing_failed', 'end_of_stream']);
  });

  it('a notification that cannot be rendered becomes a non-fatal error frame and uses no quota', async () => {
    const { url, faulty } = await start({ baseUrl: 'not a url', watchEndpoint: { max_historical_notifications: 1 } });
    await seedTranscript(faulty, url);
    const client = await open(url, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '0' });
    const events = withoutHeartbeats(await client.rest());
    expect(events.map(frameLabel)).toEqual([
      'replay_started',
      'CloudEvent creation failed',
      'CloudEvent creation failed',
      'CloudEvent creation failed',
      'replay_completed',
      'end_of_stream',
    ]);
    expect(events[1]?.json).toMatchObject({ sequence: 3, topic: 'polygon.20250706.1200' });
    expect(events[1]?.json.request_id).toBe(client.headers.get('x-request-id'));
  });
});

describe('setup failures (docs/design/rules/streaming.md §2.2)', () => {
  it('answers 500 SSE_STREAM_INITIALIZATION_FAILED with the topic when the subscription fails', async () => {
    const { url, faulty } = await start();
    faulty.failSubscribe = new Error('nats connect failed: timeout');
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST);
    expect(client.status).toBe(500);
    expect(JSON.parse(client.errorBody ?? '')).toEqual({
      code: 'SSE_STREAM_INITIALIZATION_FAILED',
      details: 'nats connect failed: timeout',
      error: 'SSE stream creation failed',
      message: 'Failed to create stream consumer',
      request_id: client.headers.get('x-request-id'),
      topic: TRANSCRIPT_TOPIC,
    });
  });

  it('answers 500 when a replay cannot capture its history bound', async () => {
    const { url, faulty } = await start();
    faulty.failCapture = new Error('stream info failed');
    const client = await open(url, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '0' });
    expect(client.status).toBe(500);
    expect(JSON.parse(client.errorBody ?? '').code).toBe('SSE_STREAM_INITIALIZATION_FAILED');
  });
});

describe('timers (docs/design/rules/streaming.md §8)', () => {
  it('sends a heartbeat at once and then every interval', async () => {
    const { url, clock } = await start({ watchEndpoint: { sse_heartbeat_interval_sec: 30 } });
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST);
    expect((await client.next())?.json.type).toBe('connection_established');
    expectControl(await client.next(), 'heartbeat', { topic: TRANSCRIPT_TOPIC });
    clock.advance(29_999);
    clock.advance(1);
    expect((await client.next())?.event).toBe('heartbeat');
    clock.advance(30_000);
    expect((await client.next())?.event).toBe('heartbeat');
  });

  it('closes a watch with max_duration_reached once the duration has passed', async () => {
    const { url, clock } = await start({ watchEndpoint: { connection_max_duration_sec: 60, sse_heartbeat_interval_sec: 3600 } });
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST);
    await client.next();
    await client.next();
    clock.advance(60_000);
    const events = await client.rest();
    expect(events.map(frameLabel)).toEqual(['max_duration_reached']);
    expectClose(events[0], 'max_duration_reached', client.headers.get('x-request-id'));
  });
});

describe('live subscription ending (D23)', () => {
  it('ends the stream with an error frame then end_of_stream when the subscription fails', async () => {
    const { url, faulty } = await start();
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST);
    await client.next();
    faulty.sinks[0]?.end(new Error('consumer deleted'));
    const events = withoutHeartbeats(await client.rest());
    expect(events.map(frameLabel)).toEqual(['stream_processing_failed', 'end_of_stream']);
    expect(events[0]?.json.message).toBe('consumer deleted');
  });

  it('ends the stream with end_of_stream when the backend shuts down', async () => {
    const { url, faulty } = await start();
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST);
    await client.next();
    await faulty.shutdown();
    const events = withoutHeartbeats(await client.rest());
    expect(events.map(frameLabel)).toEqual(['end_of_stream']);
  });
});

describe('slow consumers (D9, D32)', () => {
  function rawWatch(url: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${url}/api/v1/watch`, { method: 'POST' }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify(TRANSCRIPT_REQUEST));
    });
  }

  it('ends a stream whose client stops reading with end_of_stream (cause slow_consumer), without slowing others; it resumes without a gap', async () => {
    const { url, faulty } = await start({ watchEndpoint: { max_buffered_events: 8 } });
    const stalled = await rawWatch(url);
    stalled.pause();
    const reader = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST);
    await reader.next();
    const big = 'x'.repeat(256 * 1024);
    const total = 80;
    const published: number[] = [];
    const received: string[] = [];
    const readAll = (async () => {
      for (;;) {
        const event = await reader.nextSignificant();
        if (!event) return;
        received.push(event.json.id as string);
        if (received.length === total) return;
      }
    })();
    for (let i = 0; i < total; i++) {
      const stored = await faulty.publish({
        topic: 'polygon.20250706.1200',
        payload: JSON.stringify({ note: big }),
        metadata: { spatial_bbox: '50,10,52,12', spatial_geometry: '(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)' },
      });
      published.push(stored.sequence);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await readAll;
    expect(received).toHaveLength(total);

    let text = '';
    stalled.setEncoding('utf8');
    stalled.on('data', (chunk: string) => (text += chunk));
    stalled.resume();
    await new Promise((resolve) => stalled.on('end', resolve));
    const lastFrame = text.trimEnd().split('\n\n').at(-1) ?? '';
    expect(lastFrame).toMatch(/^event: connection-closing\ndata: /);
    const data = JSON.parse(lastFrame.split('data: ')[1] ?? '') as Record<string, unknown>;
    expect(data).toEqual({
      ...SLOW_CONSUMER_CLOSE,
      request_id: stalled.headers['x-request-id'],
      timestamp: data.timestamp,
      topic: TRANSCRIPT_TOPIC,
    });
    const seen = [...text.matchAll(/"id":"test_polygon@(\d+)"/g)].map((match) => Number(match[1]));
    expect(seen.length).toBeLessThan(total);
    expect(seen).toEqual(published.slice(0, seen.length));

    // The client resumes from its cursor, as the aviso client does on end_of_stream: the rest, once.
    const last = seen.at(-1) ?? 0;
    const resumed = await open(url, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: String(last + 1) });
    const rest = withoutHeartbeats(await resumed.rest());
    const replayed = rest.filter((event) => event.event === 'replay').map((event) => Number(String(event.json.id).split('@')[1]));
    expect([...seen, ...replayed]).toEqual(published);
    expect(rest.at(-1)?.json.reason).toBe('end_of_stream');
  });

  it('slows a replay down for a slow reader instead of dropping it', async () => {
    const { url, faulty } = await start({ watchEndpoint: { max_buffered_events: 4, replay_batch_size: 50 } });
    for (let i = 0; i < 300; i++) {
      await faulty.publish({
        topic: `polygon.${20250000 + i}.1200`,
        payload: JSON.stringify({ i, pad: 'y'.repeat(4096) }),
        metadata: { spatial_bbox: '50,10,52,12', spatial_geometry: '(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)' },
      });
    }
    const client = await open(url, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '0' });
    const events = withoutHeartbeats(await client.rest());
    expect(events.filter((e) => e.event === 'replay')).toHaveLength(300);
    expect(events.at(-1)?.json.reason).toBe('end_of_stream');
  });
});

describe('resources (docs/design/rules/streaming.md §12)', () => {
  it('releases every stream and subscription after many short streams', async () => {
    const { url, faulty, app } = await start();
    await seedTranscript(faulty, url);
    for (let round = 0; round < 40; round++) {
      const replays = Array.from({ length: 5 }, () => open(url, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '0' }));
      const watches = Array.from({ length: 5 }, () => open(url, '/api/v1/watch', { ...TRANSCRIPT_REQUEST, from_id: '4' }));
      for (const client of await Promise.all(replays)) expect((await client.rest()).at(-1)?.json.reason).toBe('end_of_stream');
      for (const client of await Promise.all(watches)) {
        await client.next();
        client.close();
      }
    }
    await eventually('release', async () => app.streams.openStreams === 0 && (await faulty.stats()).live_subscriptions === 0, RELEASE_WAIT);
    expect(app.streams.openStreams).toBe(0);
  });

  it('releases the subscription as soon as the client goes away', async () => {
    const { url, faulty, app } = await start();
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST);
    await client.next();
    expect((await faulty.stats()).live_subscriptions).toBe(1);
    client.close();
    await eventually('unsubscribe', async () => (await faulty.stats()).live_subscriptions === 0, RELEASE_WAIT);
    expect(app.streams.openStreams).toBe(0);
  });

  it('closes open streams with server_shutdown when the app closes', async () => {
    const { url, app } = await start();
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST);
    await client.next();
    const closing = app.close();
    const events = withoutHeartbeats(await client.rest());
    await closing;
    testApp = undefined;
    expect(events.map(frameLabel)).toEqual(['server_shutdown']);
  });
});
