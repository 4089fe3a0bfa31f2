import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UUID_V4, postJson } from '../support/http.js';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, withoutHeartbeats } from '../support/sse-client.js';
import {
  TRANSCRIPT_REQUEST,
  TRANSCRIPT_TOPIC,
  expectClose,
  expectCloudEvent,
  expectControl,
  frameLabel,
  noteOrLabel,
  transcriptNotification,
} from '../support/transcript.js';

/**
 * docs/design/rules/streaming.md §15, against the real server process, on both backends. Sequences 1 and 2 go to the
 * same stream on a topic the transcript request does not match (time 0000), so the three
 * transcript notifications get sequences 3, 4 and 5 as in the spec, on both backends (each numbers
 * a stream base on its own, D28).
 */
async function seed(server: RunningServer): Promise<void> {
  for (const note of ['other-1', 'other-2']) {
    const other = transcriptNotification(note);
    await postJson(`${server.url}/api/v1/notification`, { ...other, identifier: { ...other.identifier, time: '0000' } });
  }
  for (const note of ['a', 'b', 'c']) {
    expect((await postJson(`${server.url}/api/v1/notification`, transcriptNotification(note))).status).toBe(200);
  }
}

const clients: SseClient[] = [];
async function open(server: RunningServer, path: string, body: unknown): Promise<SseClient> {
  const client = await SseClient.open(`${server.url}${path}`, body);
  clients.push(client);
  return client;
}
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

function publish(server: RunningServer, note: string) {
  return postJson(`${server.url}/api/v1/notification`, transcriptNotification(note));
}

describe.each(BACKEND_KINDS)('on the %s backend', (kind) => {
  describe('transcripts on default settings', () => {
    const backend = useBackend(kind);
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer({ config: backend.config() });
      await seed(server);
    });
    afterAll(async () => {
      await server.stop();
    });

    it('15.1 live-only watch: headers, connection_established, heartbeat, then only new notifications', async () => {
      const client = await open(server, '/api/v1/watch', TRANSCRIPT_REQUEST);
      expect(client.status).toBe(200);
      expect(client.headers.get('content-type')).toBe('text/event-stream');
      expect(client.headers.get('cache-control')).toBe('no-cache');
      expect(client.headers.get('access-control-allow-origin')).toBe('*');
      expect(client.headers.get('x-accel-buffering')).toBe('no');
      const requestId = client.headers.get('x-request-id');
      expect(requestId).toMatch(UUID_V4);

      expectControl(await client.next(), 'live-notification', {
        connection_will_close_in_seconds: 3600,
        request_id: requestId,
        topic: TRANSCRIPT_TOPIC,
        type: 'connection_established',
      });
      expectControl(await client.next(), 'heartbeat', { topic: TRANSCRIPT_TOPIC });
      const published = await publish(server, 'd');
      expect(published.status).toBe(200);
      const live = await client.nextSignificant();
      expectCloudEvent(live, 'live-notification', Number((live?.json.id as string).split('@')[1]), 'd');
      expect(Number((live?.json.id as string).split('@')[1])).toBeGreaterThan(5);
    });

    it('15.4 replay from a date delivers history at or after the instant, echoed to the second', async () => {
      const cutoff = new Date(Date.now() + 5);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const latest = await publish(server, 'late');
      expect(latest.status).toBe(200);
      const client = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_date: cutoff.toISOString() });
      const requestId = client.headers.get('x-request-id');
      const events = withoutHeartbeats(await client.rest());
      expectControl(events[0], 'replay-control', {
        batch_size: 100,
        end_sequence: null,
        from_date: `${cutoff.toISOString().slice(0, 19)}Z`,
        from_sequence: null,
        request_id: requestId,
        to_date: null,
        topic: TRANSCRIPT_TOPIC,
        type: 'replay_started',
      });
      expect(events).toHaveLength(4);
      expect(events[1]?.json.data).toMatchObject({ payload: { note: 'late' } });
      expectControl(events[2], 'replay-control', { topic: TRANSCRIPT_TOPIC, type: 'replay_completed' });
      expectClose(events[3], 'end_of_stream', requestId);
    });

    it('a replay from a future date completes empty', async () => {
      const client = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_date: '2999-01-01T00:00:00Z' });
      const events = withoutHeartbeats(await client.rest());
      expect(events.map(frameLabel)).toEqual(['replay_started', 'replay_completed', 'end_of_stream']);
    });
  });

  describe('15.2 replay then live, with a publication during catch-up', () => {
    const backend = useBackend(kind);
    let server: RunningServer;
    beforeAll(async () => {
      // One message per batch with a pause between batches leaves time to publish during the replay.
      server = await startServer({
        config: backend.config({ watch_endpoint: { replay_batch_size: 1, replay_batch_delay_ms: 400 } }),
      });
      await seed(server);
    });
    afterAll(async () => {
      await server.stop();
    });

    it('delivers history up to H as replay, then replay_completed, then later sequences live', async () => {
      const client = await open(server, '/api/v1/watch', { ...TRANSCRIPT_REQUEST, from_id: '4' });
      const requestId = client.headers.get('x-request-id');
      expectControl(await client.next(), 'replay-control', {
        batch_size: 1,
        end_sequence: null,
        from_date: null,
        from_sequence: 4,
        request_id: requestId,
        to_date: null,
        topic: TRANSCRIPT_TOPIC,
        type: 'replay_started',
      });
      expectCloudEvent(await client.nextSignificant(), 'replay', 4, 'b');
      // Sequence 6 is stored while the replay phase is still running: it is above H = 5.
      expect((await publish(server, 'd')).status).toBe(200);
      expectCloudEvent(await client.nextSignificant(), 'replay', 5, 'c');
      expectControl(await client.nextSignificant(), 'replay-control', { topic: TRANSCRIPT_TOPIC, type: 'replay_completed' });
      expectCloudEvent(await client.nextSignificant(), 'live-notification', 6, 'd');
      expect((await publish(server, 'e')).status).toBe(200);
      expectCloudEvent(await client.nextSignificant(), 'live-notification', 7, 'e');
    });
  });

  describe('15.3 replay limit with lookahead', () => {
    const backend = useBackend(kind);
    let server: RunningServer;
    beforeAll(async () => {
      const base = backend.config({ watch_endpoint: { max_historical_notifications: 2 } });
      const schemas = base.notification_schema as Record<string, Record<string, unknown>>;
      server = await startServer({
        config: {
          ...base,
          notification_schema: {
            ...schemas,
            // The same stream through a second event type with its own cap.
            capped_polygon: {
              ...schemas.test_polygon,
              topic: { base: 'capped', key_order: ['date', 'time'] },
              max_historical_notifications: 1,
            },
            roomy_polygon: {
              ...schemas.test_polygon,
              topic: { base: 'roomy', key_order: ['date', 'time'] },
              max_historical_notifications: 3,
            },
          },
        },
      });
      await seed(server);
    });
    afterAll(async () => {
      await server.stop();
    });

    it('stops after Q notifications when one more exists, with the limit control and end_of_stream', async () => {
      const client = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '0' });
      const requestId = client.headers.get('x-request-id');
      const events = withoutHeartbeats(await client.rest());
      expect(events).toHaveLength(5);
      expectCloudEvent(events[1], 'replay', 3, 'a');
      expectCloudEvent(events[2], 'replay', 4, 'b');
      expectControl(events[3], 'replay-control', {
        max_allowed: 2,
        message: 'Historical replay limited to 2 messages. Additional historical messages may be available but were not retrieved.',
        topic: TRANSCRIPT_TOPIC,
        type: 'notification_replay_limit_reached',
      });
      expectClose(events[4], 'end_of_stream', requestId);
    });

    it('does the same on a watch, which then never goes live', async () => {
      const client = await open(server, '/api/v1/watch', { ...TRANSCRIPT_REQUEST, from_id: '0' });
      const events = withoutHeartbeats(await client.rest());
      expect(events.map(frameLabel)).toEqual([
        'replay_started',
        'test_polygon@3',
        'test_polygon@4',
        'notification_replay_limit_reached',
        'end_of_stream',
      ]);
    });

    it('completes normally when exactly Q notifications remain', async () => {
      const client = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '4' });
      const events = withoutHeartbeats(await client.rest());
      expect(events.map(frameLabel)).toEqual(['replay_started', 'test_polygon@4', 'test_polygon@5', 'replay_completed', 'end_of_stream']);
    });

    it('uses a schema cap instead of the global one, and reports it as max_allowed', async () => {
      for (const type of ['capped_polygon', 'roomy_polygon']) {
        for (const note of ['x', 'y', 'z']) {
          await postJson(`${server.url}/api/v1/notification`, { ...transcriptNotification(note), event_type: type });
        }
      }
      const capped = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, event_type: 'capped_polygon', from_id: '0' });
      const cappedEvents = withoutHeartbeats(await capped.rest());
      expect(cappedEvents.map(noteOrLabel)).toEqual(['replay_started', 'x', 'notification_replay_limit_reached', 'end_of_stream']);
      expect(cappedEvents[2]?.json.max_allowed).toBe(1);
      const roomy = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, event_type: 'roomy_polygon', from_id: '0' });
      const roomyEvents = withoutHeartbeats(await roomy.rest());
      expect(roomyEvents.map(noteOrLabel)).toEqual(['replay_started', 'x', 'y', 'z', 'replay_completed', 'end_of_stream']);
    });
  });

  describe('maximum duration and heartbeats', () => {
    const backend = useBackend(kind);
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer({
        config: backend.config({ watch_endpoint: { connection_max_duration_sec: 2, sse_heartbeat_interval_sec: 1 } }),
      });
    });
    afterAll(async () => {
      await server.stop();
    });

    it('announces the duration, sends heartbeats at the interval and closes with max_duration_reached', async () => {
      const client = await open(server, '/api/v1/watch', TRANSCRIPT_REQUEST);
      const requestId = client.headers.get('x-request-id');
      const events = await client.rest();
      expect(events[0]?.json.connection_will_close_in_seconds).toBe(2);
      expect(events.filter((e) => e.event === 'heartbeat').length).toBeGreaterThanOrEqual(2);
      expectClose(events.at(-1), 'max_duration_reached', requestId);
    });

    it('sends heartbeats on replay streams too (D2)', async () => {
      const client = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '0' });
      const events = await client.rest();
      expect(events[0]?.json.type).toBe('replay_started');
      expect(events[1]?.event).toBe('heartbeat');
    });
  });

  describe('15.6 shutdown during a watch', () => {
    const backend = useBackend(kind);
    it('closes every open stream with server_shutdown and exits 0', async () => {
      const server = await startServer({ config: backend.config() });
      const live = await SseClient.open(`${server.url}/api/v1/watch`, TRANSCRIPT_REQUEST);
      const replaying = await SseClient.open(`${server.url}/api/v1/watch`, { ...TRANSCRIPT_REQUEST, from_id: '0' });
      await live.next();
      await replaying.next();
      const exit = server.stop('SIGTERM');
      const liveEvents = await live.rest();
      const replayEvents = await replaying.rest();
      expectClose(liveEvents.at(-1), 'server_shutdown', live.headers.get('x-request-id'));
      expectClose(replayEvents.at(-1), 'server_shutdown', replaying.headers.get('x-request-id'));
      expect(await exit).toBe(0);
    });
  });
});
