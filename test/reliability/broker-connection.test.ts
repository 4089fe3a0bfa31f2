import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, BackendUnderTest, type BackendKind } from '../support/backends.js';
import { UUID_V4, postJson, request, type JsonResponse } from '../support/http.js';
import { startNatsServer, type NatsServerProcess } from '../support/nats-server.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * D33 (docs/design/rules/reference-0.13.md §8): one request must never cut the broker connection. nats-server closes
 * the whole connection on a control line over 4 KiB (a long subject) and refuses a message over
 * its `max_payload`; before D33 a replay with a few-kilobyte identifier value did the first, and
 * every request in flight failed. Each hostile request here must get its documented 4xx, and
 * afterwards a notify must succeed and reach the watch that was open all along, with no NATS
 * disconnect logged by aviso-ts and no "maximum control line" logged by nats-server.
 *
 * The server is not strict, so generic event types are accepted and a wipe of a name outside the
 * schema really reaches the backend (strict mode answers those without asking it). Its body limit
 * is above NATS's default 1 MiB `max_payload`, so a notification too large for the broker can
 * arrive.
 */

const MAX_BODY_BYTES = 2 * 1024 * 1024;
const DISS = (destination: string) => ({ event_type: 'dissemination', identifier: { destination, class: 'od' } });
const LIMIT_MESSAGE = /^Identifier values are too long: the topic would be \d+ bytes, the limit is 2048$/;

function expectError(response: JsonResponse, status: number, code: string, message: string | RegExp): void {
  expect(response.status, response.text).toBe(status);
  expect(response.json.code).toBe(code);
  if (typeof message === 'string') expect(response.json.message).toBe(message);
  else expect(response.json.message).toMatch(message);
  if ('details' in response.json) expect(response.json.details).toBe(response.json.message);
  expect(response.headers.get('x-request-id')).toMatch(UUID_V4);
}

function expectAdmin404(response: JsonResponse, name: string): void {
  expect(response.status, response.text).toBe(404);
  expect(response.json.success).toBe(false);
  expect(response.json.message).toBe(
    `Stream not found: ${name}. Known event types: dissemination, extreme_event, mars, sensor_cloud, test_polygon`,
  );
}

describe.each(BACKEND_KINDS)(
  'one request never cuts the broker connection, on the %s backend (D33)',
  { timeout: 120_000 },
  (kind: BackendKind) => {
    let nats: NatsServerProcess | undefined;
    let server: RunningServer;
    let watch: SseClient;

    beforeAll(async () => {
      if (kind === 'jetstream') nats = await startNatsServer();
      const backend = new BackendUnderTest(kind, nats?.url);
      server = await startServer({
        config: backend.config({
          application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', max_body_bytes: MAX_BODY_BYTES },
          notification_schema_strict: false,
        }),
      });
      // A live watch open before any hostile request: it must keep receiving afterwards.
      watch = await SseClient.open(`${server.url}/api/v1/watch`, { ...DISS('*') });
      expect(watch.status, watch.errorBody).toBe(200);
      expect((await watch.next())?.json.type).toBe('connection_established');
      expect((await postJson(`${server.url}/api/v1/notification`, { ...DISS('before'), payload: 1 })).status).toBe(200);
      expect((await watch.nextSignificant())?.json.id).toBe('dissemination@1');
    });

    afterAll(async () => {
      watch?.close();
      await server?.stop();
      await nats?.stop();
    });

    const post = (endpoint: string, body: unknown) => postJson(`${server.url}/api/v1/${endpoint}`, body);
    const wipe = (name: string) =>
      request(`${server.url}/api/v1/admin/wipe/stream`, {
        method: 'DELETE',
        body: JSON.stringify({ stream_name: name }),
        headers: { 'content-type': 'application/json' },
      });

    it.each([3_000, 5_000])('a replay with a %d-byte identifier value is 400 INVALID_REPLAY_REQUEST', async (bytes) => {
      const response = await post('replay', { ...DISS('x'.repeat(bytes)), from_id: '1' });
      expectError(response, 400, 'INVALID_REPLAY_REQUEST', LIMIT_MESSAGE);
    });

    it.each([3_000, 5_000])('a historical watch with a %d-byte identifier value is 400 INVALID_WATCH_REQUEST', async (bytes) => {
      const response = await post('watch', { ...DISS('é'.repeat(bytes / 2)), from_id: '1' });
      expectError(response, 400, 'INVALID_WATCH_REQUEST', LIMIT_MESSAGE);
    });

    it('a live watch and a replay from a date with a long value are 400 as well', async () => {
      expectError(await post('watch', DISS('y'.repeat(4_000))), 400, 'INVALID_WATCH_REQUEST', LIMIT_MESSAGE);
      expectError(
        await post('replay', { ...DISS('y'.repeat(4_000)), from_date: '2025-01-01T00:00:00Z' }),
        400,
        'INVALID_REPLAY_REQUEST',
        LIMIT_MESSAGE,
      );
    });

    it('a schema-less event type whose stream name would exceed 255 bytes is 400 on notify, watch and replay', async () => {
      const eventType = 'g'.repeat(300);
      const message = 'Event type is too long to be used without a schema: its stream name would be 300 bytes, the limit is 255';
      expectError(
        await post('notification', { event_type: eventType, identifier: { k: 'v' } }),
        400,
        'INVALID_NOTIFICATION_REQUEST',
        message,
      );
      expectError(await post('watch', { event_type: eventType, identifier: { k: 'v' } }), 400, 'INVALID_WATCH_REQUEST', message);
      expectError(
        await post('replay', { event_type: eventType, identifier: { k: 'v' }, from_id: '1' }),
        400,
        'INVALID_REPLAY_REQUEST',
        message,
      );
    });

    it.each([
      // Quoted cut to 256 characters (D45).
      ['a 5,000-byte name', 'W'.repeat(5_000), `${'W'.repeat(256)}…(5000 characters)`],
      ['a 300-byte name', 'w'.repeat(300), `${'w'.repeat(256)}…(300 characters)`],
      ['a path separator', 'a/b', 'a/b'],
      ['subject syntax', 'diss.*.>', 'diss.*.>'],
      ['whitespace and control characters', 'a b\tc\u0001', 'a b\tc\u0001'],
    ])('wiping a stream named with %s is 404 Stream not found', async (_what, name, quoted) => {
      expectAdmin404(await wipe(name), quoted);
    });

    it('deleting a notification of a long or odd stream name is a 4xx', async () => {
      // Path segments over 100 bytes are 414 before any handler runs; shorter odd names are not found.
      expect((await request(`${server.url}/api/v1/admin/notification/${'Q'.repeat(5_000)}@1`, { method: 'DELETE' })).status).toBe(414);
      for (const name of ['a/b', 'a.b*>', 'ab c']) {
        const response = await request(`${server.url}/api/v1/admin/notification/${encodeURIComponent(`${name}@1`)}`, { method: 'DELETE' });
        expect(response.status, `${name}: ${response.text}`).toBe(404);
      }
    });

    it('a notification the broker cannot carry in one message is 413 PAYLOAD_TOO_LARGE (JetStream) or stored (memory)', async () => {
      const response = await post('notification', { ...DISS('big'), payload: 'z'.repeat(1_500_000) });
      if (kind === 'jetstream') {
        expectError(
          response,
          413,
          'PAYLOAD_TOO_LARGE',
          /^Notification too large: it would be \d+ bytes with its headers, the broker accepts at most 1048576$/,
        );
        // The shape of D15's body-limit answer, so clients handle both alike.
        expect(Object.keys(response.json).sort()).toEqual(['code', 'error', 'message', 'request_id']);
        expect(response.json.error).toBe('payload_too_large');
      } else {
        // The in-memory backend has no message size limit; max_body_bytes bounds the request.
        expect(response.status, response.text).toBe(200);
        expect((await watch.nextSignificant())?.json.id).toBe('dissemination@2');
      }
    });

    it('afterwards a notify succeeds and reaches the watch that was open all along', async () => {
      expect((await post('notification', { ...DISS('after'), payload: 2 })).status).toBe(200);
      const event = await watch.nextSignificant();
      expect(event?.json.id).toBe(kind === 'jetstream' ? 'dissemination@2' : 'dissemination@3');
      expect((event?.json.data as { identifier: Record<string, string> }).identifier.destination).toBe('after');
    });

    it('no NATS disconnect was logged by aviso-ts, nor a protocol violation by nats-server', () => {
      const natsEvents = server.logs
        .map((line) => String((line.attributes?.['event.name'] as string | undefined) ?? ''))
        .filter((name) => /^backend\.jetstream\.(disconnect|error|connection\.lost|reconnected)$/.test(name));
      expect(natsEvents).toEqual([]);
      if (nats) expect(nats.output()).not.toMatch(/maximum control line exceeded|maximum payload exceeded/i);
    });
  },
);
