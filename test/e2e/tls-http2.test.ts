import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queryOf } from '../support/get-streams.js';
import { UUID_V4 } from '../support/http.js';
import { findFreePort } from '../support/ports.js';
import { serverConfig } from '../support/schemas.js';
import { runServerToExit, startServer, type RunningServer } from '../support/server-process.js';
import { withoutHeartbeats } from '../support/sse-client.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { http2Client, https1Client, type ProtocolClient, type ProtocolStream } from '../support/tls-clients.js';
import {
  TRANSCRIPT_REQUEST,
  TRANSCRIPT_TOPIC,
  expectClose,
  expectCloudEvent,
  expectControl,
  frameLabel,
  transcriptNotification,
} from '../support/transcript.js';

/**
 * docs/design/rules/browser.md §3: with `application.tls` the server speaks HTTPS, HTTP/2 by ALPN and HTTP/1.1 on
 * the same port, and every route and stream behaves as over plain HTTP. Runs the streaming
 * behaviour of the e2e suite (live, replay, errors, lifecycle) over both protocols against the
 * real process.
 */
let certificates: TestCertificates;
beforeAll(() => {
  certificates = createTestCertificates();
});
afterAll(() => certificates?.remove());

function tlsConfig(overrides: Record<string, unknown> = {}, application: Record<string, unknown> = {}): Record<string, unknown> {
  return withTls(serverConfig(overrides), certificates, application);
}

const PROTOCOLS = [
  { name: 'HTTP/2', connect: http2Client },
  { name: 'HTTP/1.1 over TLS', connect: https1Client },
] as const;

describe('one TLS port, two protocols', () => {
  let server: RunningServer;
  let origin: string;
  beforeAll(async () => {
    server = await startServer({ config: tlsConfig() });
    origin = `https://localhost:${server.port}`;
  });
  afterAll(async () => {
    await server.stop();
  });

  it('negotiates h2 with an HTTP/2 client and http/1.1 with an HTTPS client (ALPN)', async () => {
    const h2 = http2Client(origin, certificates.ca);
    const h1 = https1Client(origin, certificates.ca);
    try {
      expect(await h2.negotiatedProtocol()).toBe('h2');
      expect(await h1.negotiatedProtocol()).toBe('http/1.1');
      expect((await h2.request('/health')).status).toBe(200);
      expect((await h1.request('/health')).status).toBe(200);
    } finally {
      h2.close();
      h1.close();
    }
  });

  it('logs the protocols it serves at startup', () => {
    const started = server.logs.find((line) => line.attributes?.['event.name'] === 'startup.server.started');
    expect(started?.attributes?.protocols).toBe('h2,http/1.1');
  });

  it('refuses plain HTTP on the TLS port', async () => {
    await expect(fetch(`http://127.0.0.1:${server.port}/health`)).rejects.toThrow();
  });
});

describe.each(PROTOCOLS)('streams and routes over $name', ({ connect }) => {
  let server: RunningServer;
  let client: ProtocolClient;
  const streams: ProtocolStream[] = [];
  beforeAll(async () => {
    server = await startServer({ config: tlsConfig() });
    client = connect(`https://localhost:${server.port}`, certificates.ca);
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  async function open(path: string, body: unknown, headers: Record<string, string> = {}): Promise<ProtocolStream> {
    const stream = await client.stream(path, body, headers);
    streams.push(stream);
    return stream;
  }
  const publish = (note: string) => client.request('/api/v1/notification', { body: transcriptNotification(note) });

  it('answers /health and /api/v1/schema', async () => {
    const health = await client.request('/health');
    expect(health.status).toBe(200);
    const schema = await client.request('/api/v1/schema');
    expect(schema.status).toBe(200);
    expect(schema.headers['content-type']).toMatch(/^application\/json/);
    expect(schema.text).toContain('"test_polygon"');
  });

  it('stores a notification and answers with its request id', async () => {
    const response = await publish('notified');
    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toMatch(UUID_V4);
    expect(response.json.request_id ?? response.headers['x-request-id']).toBe(response.headers['x-request-id']);
  });

  it('a live watch gets its headers, connection_established, a heartbeat, then a new notification', async () => {
    const stream = await open('/api/v1/watch', TRANSCRIPT_REQUEST);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream');
    expect(stream.headers['cache-control']).toBe('no-cache');
    expect(stream.headers['access-control-allow-origin']).toBe('*');
    expect(stream.headers['x-accel-buffering']).toBe('no');
    // HTTP/2 forbids connection-specific headers; HTTP/1.1 keeps the reference's.
    expect(stream.headers.connection).toBe(client.protocol === 'h2' ? undefined : 'keep-alive');
    const requestId = stream.headers['x-request-id'] as string;
    expect(requestId).toMatch(UUID_V4);
    expectControl(await stream.next(), 'live-notification', {
      connection_will_close_in_seconds: 3600,
      request_id: requestId,
      topic: TRANSCRIPT_TOPIC,
      type: 'connection_established',
    });
    expectControl(await stream.next(), 'heartbeat', { topic: TRANSCRIPT_TOPIC });
    const published = await publish('live');
    expect(published.status).toBe(200);
    const live = await stream.nextSignificant();
    expectCloudEvent(live, 'live-notification', Number((live?.json.id as string).split('@')[1]), 'live');
  });

  it('a replay sends replay_started, the history, replay_completed and the end_of_stream close', async () => {
    for (const note of ['r1', 'r2']) expect((await publish(note)).status).toBe(200);
    const stream = await open('/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '1' });
    const requestId = stream.headers['x-request-id'] as string;
    const events = withoutHeartbeats(await stream.rest());
    expect(events[0]?.json).toMatchObject({ type: 'replay_started', from_sequence: 1, request_id: requestId });
    const notes = events
      .filter((event) => event.json.specversion)
      .map((event) => (event.json.data as { payload: { note: string } }).payload.note);
    expect(notes).toEqual(expect.arrayContaining(['r1', 'r2']));
    expect(events.at(-2)?.json.type).toBe('replay_completed');
    expectClose(events.at(-1), 'end_of_stream', requestId);
  });

  it('a GET replay (docs/design/rules/browser.md §1) carries retry: and id: lines, and its Last-Event-ID at the end answers 204', async () => {
    const sequences: number[] = [];
    for (const note of ['g1', 'g2']) {
      expect((await publish(note)).status).toBe(200);
    }
    const first = await open(`/api/v1/replay?${queryOf({ ...TRANSCRIPT_REQUEST, from_id: '1' })}`, undefined);
    expect(first.status).toBe(200);
    const events = withoutHeartbeats(await first.rest());
    expect(first.raw.startsWith('retry: ')).toBe(true);
    for (const event of events.filter((e) => e.json.specversion)) {
      // Every notification frame names itself; control frames carry no id.
      expect(event.id).toBe(event.json.id);
      sequences.push(Number((event.id as string).split('@')[1]));
    }
    expect(events.filter((e) => !e.json.specversion).every((e) => e.id === undefined)).toBe(true);
    expect(events.at(-2)?.json.type).toBe('replay_completed');
    const end = sequences.at(-1) as number;

    const query = queryOf({ ...TRANSCRIPT_REQUEST, from_id: '1', to_id: String(end) });
    const finished = await client.request(`/api/v1/replay?${query}`, { headers: { 'last-event-id': `test_polygon@${end}` } });
    expect(finished.status).toBe(204);
  });

  it('a GET watch resumes after its Last-Event-ID: the history after it, then live', async () => {
    expect((await publish('before')).status).toBe(200);
    const after = await publish('resumed');
    expect(after.status).toBe(200);
    const replay = withoutHeartbeats(await (await open('/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '1' })).rest());
    const resumed = replay.filter((e) => e.json.specversion).at(-1)?.json.id as string;
    const previous = `test_polygon@${Number(resumed.split('@')[1]) - 1}`;
    const stream = await open(`/api/v1/watch?${queryOf(TRANSCRIPT_REQUEST)}`, undefined, { 'last-event-id': previous });
    expect(stream.status).toBe(200);
    const notes: string[] = [];
    for (;;) {
      const event = await stream.nextSignificant();
      if (event?.json.specversion) {
        expect(event.id).toBe(event.json.id);
        notes.push((event.json.data as { payload: { note: string } }).payload.note);
      }
      if (notes.length === 1) break;
    }
    expect(notes).toEqual(['resumed']);
    expect((await publish('live')).status).toBe(200);
    let live = await stream.nextSignificant();
    while (live && !live.json.specversion) live = await stream.nextSignificant();
    expect((live?.json.data as { payload: { note: string } }).payload.note).toBe('live');
  });

  it('a bad stream request is a 400 with the error shape and the request id', async () => {
    const response = await client.request('/api/v1/watch', { body: { event_type: 'no_such_type', identifier: {} } });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code: 'UNKNOWN_EVENT_TYPE', request_id: response.headers['x-request-id'] });
    expect(response.headers['x-request-id']).toMatch(UUID_V4);
  });

  it('an unknown path is the 404 error shape', async () => {
    const response = await client.request('/nowhere');
    expect(response.status).toBe(404);
    expect(response.json.request_id).toBe(response.headers['x-request-id']);
  });

  it('an over-limit body is the 413 error shape, and the connection keeps serving', async () => {
    const response = await client.request('/api/v1/notification', { body: 'x'.repeat(300_000) });
    expect(response.status).toBe(413);
    expect(response.json).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', request_id: response.headers['x-request-id'] });
    expect((await client.request('/health')).status).toBe(200);
  });

  it('prints no warning on stderr (no connection-specific header reached HTTP/2)', () => {
    expect(server.stderr()).toBe('');
  });
});

describe.each(PROTOCOLS)('stream lifecycle over $name', ({ connect }) => {
  let server: RunningServer;
  let client: ProtocolClient;
  beforeAll(async () => {
    server = await startServer({
      config: tlsConfig({ watch_endpoint: { sse_heartbeat_interval_sec: 1, connection_max_duration_sec: 2 } }),
    });
    client = connect(`https://localhost:${server.port}`, certificates.ca);
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it('sends heartbeats and ends a watch with the max_duration_reached close frame', async () => {
    const stream = await client.stream('/api/v1/watch', TRANSCRIPT_REQUEST);
    const requestId = stream.headers['x-request-id'] as string;
    const events = await stream.rest();
    expect(events.map(frameLabel)[0]).toBe('connection_established');
    expect(events.filter((event) => event.event === 'heartbeat').length).toBeGreaterThanOrEqual(2);
    expectClose(events.at(-1), 'max_duration_reached', requestId);
  });

  it('ends open streams with server_shutdown and exits 0 on SIGTERM', async () => {
    const stream = await client.stream('/api/v1/watch', TRANSCRIPT_REQUEST);
    expect((await stream.next())?.json.type).toBe('connection_established');
    const exited = server.stop();
    const events = await stream.rest();
    expectClose(events.at(-1), 'server_shutdown', stream.headers['x-request-id'] as string);
    expect(await exited).toBe(0);
  });
});

describe('HTTP/2 multiplexing', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ config: tlsConfig() });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('keeps 130 watches open on one HTTP/2 session and delivers a notification to each', async () => {
    const client = http2Client(`https://localhost:${server.port}`, certificates.ca);
    try {
      const streams = await Promise.all(Array.from({ length: 130 }, () => client.stream('/api/v1/watch', TRANSCRIPT_REQUEST)));
      expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
      for (const stream of streams) expect((await stream.next())?.json.type).toBe('connection_established');
      expect((await client.request('/api/v1/notification', { body: transcriptNotification('fan-out') })).status).toBe(200);
      const received = await Promise.all(streams.map((stream) => stream.nextSignificant()));
      expect(received.map((event) => (event?.json.data as { payload: { note: string } }).payload.note)).toEqual(
        streams.map(() => 'fan-out'),
      );
      for (const stream of streams) stream.close();
    } finally {
      client.close();
    }
  });
});

describe.each(PROTOCOLS)('transport behaviour of streams over $name', ({ connect }) => {
  let server: RunningServer;
  let client: ProtocolClient;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await findFreePort();
    server = await startServer({
      config: tlsConfig({
        notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: 1000 } },
        metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
      }),
    });
    client = connect(`https://localhost:${server.port}`, certificates.ca);
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  async function activeStreams(): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const lines = text.split('\n').filter((line) => line.startsWith('aviso_sse_connections_active{'));
    return lines.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  }

  it('notices a client that goes away (the stream is released)', async () => {
    const stream = await client.stream('/api/v1/watch', TRANSCRIPT_REQUEST);
    expect((await stream.next())?.json.type).toBe('connection_established');
    await expect.poll(activeStreams).toBe(1);
    stream.close();
    await expect.poll(activeStreams).toBe(0);
  });

  it('delivers a replay far larger than the HTTP/2 flow-control window (backpressure and drain)', async () => {
    const note = 'n'.repeat(2000);
    for (let index = 0; index < 150; index++) {
      const published = await client.request('/api/v1/notification', { body: transcriptNotification(`${index}-${note}`) });
      expect(published.status).toBe(200);
    }
    const stream = await client.stream('/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '1' });
    const events = withoutHeartbeats(await stream.rest());
    const notes = events
      .filter((event) => event.json.specversion)
      .map((event) => (event.json.data as { payload: { note: string } }).payload.note);
    expect(notes).toEqual(Array.from({ length: 150 }, (_, index) => `${index}-${note}`));
    expect(stream.raw.length).toBeGreaterThan(300_000);
    expect(events.at(-2)?.json.type).toBe('replay_completed');
    expectClose(events.at(-1), 'end_of_stream', stream.headers['x-request-id'] as string);
  });
});

describe('startup with unusable TLS files', () => {
  it('a missing certificate file fails startup with one line naming it', async () => {
    const missing = join(certificates.dir, 'missing.pem');
    const result = await runServerToExit({ config: tlsConfig({}, { tls: { cert_file: missing, key_file: certificates.keyFile } }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`aviso-server: configuration error: application.tls.cert_file: cannot read ${missing}: no such file\n`);
  });

  it('an unreadable key file fails startup with one line naming it', async () => {
    // A directory cannot be read as a file, whoever runs the test (root reads past chmod 000).
    const unreadable = join(certificates.dir, 'key-dir');
    mkdirSync(unreadable);
    chmodSync(unreadable, 0o000);
    const result = await runServerToExit({ config: tlsConfig({}, { tls: { cert_file: certificates.certFile, key_file: unreadable } }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`^aviso-server: configuration error: application\\.tls\\.key_file: cannot read ${unreadable}: [^\\n]+\\n$`),
    );
  });

  it('a key that does not belong to the certificate fails startup with one line', async () => {
    const otherKey = join(certificates.dir, 'ca.key');
    const result = await runServerToExit({ config: tlsConfig({}, { tls: { cert_file: certificates.certFile, key_file: otherKey } }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^aviso-server: configuration error: application\.tls: cannot use [^\n]+\n$/);
  });

  it('a blank file name is a configuration error', async () => {
    const result = await runServerToExit({ config: tlsConfig({}, { tls: { cert_file: ' ', key_file: certificates.keyFile } }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('aviso-server: configuration error: application.tls.cert_file: must not be blank\n');
  });
});
