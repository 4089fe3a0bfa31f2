import { connect } from '@nats-io/transport-node';
import { StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BackendUnderTest } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { UUID_V4, postJson, request, type JsonResponse } from '../support/http.js';
import { findFreePort, startNatsServer, type NatsServerProcess } from '../support/nats-server.js';
import { serverConfig } from '../support/schemas.js';
import type { RunningServer } from '../support/server-process.js';
import { withoutHeartbeats } from '../support/sse-client.js';
import { trackProcesses } from '../support/tracked-processes.js';
import { TRANSCRIPT_REQUEST, TRANSCRIPT_TOPIC, transcriptNotification } from '../support/transcript.js';

/**
 * `GET /ready` (D26, docs/design/rules/reference-0.13.md §2) and the JetStream connection and stream rules of
 * docs/design/rules/reference-0.13.md §6 (storage mismatch, `max_reconnect_attempts`, `enable_auto_reconnect`),
 * against the real server process. Each JetStream case runs on a private nats-server so stopping
 * it disturbs nobody.
 */

const READY = '{"backend_connected":true,"status":"ready"}';
const NOT_READY = '{"backend_connected":false,"status":"not_ready"}';

const { start, open } = trackProcesses();

async function ready(server: RunningServer): Promise<JsonResponse> {
  return request(`${server.url}/ready`);
}

/** Waits until `/ready` answers `status`, and returns that answer. */
async function readyBecomes(server: RunningServer, status: 200 | 503): Promise<JsonResponse> {
  return eventually(`/ready to answer ${status}`, async () => {
    const response = await ready(server);
    return response.status === status ? response : undefined;
  });
}

function logEvents(server: RunningServer, name: string) {
  return server.logs.filter((line) => line.attributes?.['event.name'] === name);
}

function jetstreamConfig(natsUrl: string, jetstream: Record<string, unknown> = {}): Record<string, unknown> {
  const config = new BackendUnderTest('jetstream', natsUrl).config() as { notification_backend: { jetstream: Record<string, unknown> } };
  Object.assign(config.notification_backend.jetstream, { timeout_seconds: 2, reconnect_delay_ms: 100, ...jetstream });
  return config;
}

describe('GET /ready on the in-memory backend', () => {
  it('is always 200 ready, with the exact body, next to an unchanged /health', async () => {
    const server = await start(serverConfig());
    const response = await ready(server);
    expect(response.status).toBe(200);
    expect(response.text).toBe(READY);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-request-id')).toMatch(UUID_V4);
    const health = await request(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(health.text).toBe('{"status":"ok"}');
  });

  it('never needs credentials, and ignores invalid ones, with auth enabled', async () => {
    const server = await start(
      serverConfig({
        auth: { enabled: true, mode: 'trusted_proxy', jwt_secret: 'readiness-secret', admin_roles: { localrealm: ['admin'] } },
      }),
    );
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer not-a-jwt' }, { authorization: 'Basic Zm9vOmJhcg==' }];
    for (const headers of attempts) {
      const response = await request(`${server.url}/ready`, { headers });
      expect(response.status, JSON.stringify(headers)).toBe(200);
      expect(response.text).toBe(READY);
      expect(response.headers.get('www-authenticate')).toBeNull();
    }
  });

  it('is measured like /health and logs its access line at debug', async () => {
    const metricsPort = await findFreePort();
    const server = await start(serverConfig({ logging: { level: 'debug' }, metrics: { enabled: true, port: metricsPort } }));
    expect((await ready(server)).status).toBe(200);
    const exposition = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(exposition).toMatch(/^aviso_http_requests_total\{[^}]*route="\/ready"[^}]*\} 1$/m);
    expect(exposition).toMatch(/^aviso_http_request_duration_seconds_count\{[^}]*route="\/ready"[^}]*\} 1$/m);
    const access = await eventually('the /ready access line', () =>
      logEvents(server, 'http.request.completed').find((line) => line.attributes?.route === '/ready'),
    );
    expect(access.severityText).toBe('DEBUG');
    expect(access.attributes?.status_code).toBe(200);
  });
});

describe('GET /ready on JetStream', () => {
  let nats: NatsServerProcess;
  let natsDown = false;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  // A case that failed mid-outage leaves NATS down: bring it back for the next one.
  beforeEach(async () => {
    if (natsDown) await restartNats();
  });
  afterAll(async () => {
    await nats.stop();
  });

  async function killNats(): Promise<void> {
    natsDown = true;
    await nats.kill();
  }

  async function restartNats(): Promise<void> {
    await nats.restart();
    natsDown = false;
  }

  it('answers 200, then 503 while NATS is down (with /health still 200), then 200 once it is back', async () => {
    const server = await start(jetstreamConfig(nats.url));
    const before = await ready(server);
    expect(before.status).toBe(200);
    expect(before.text).toBe(READY);

    await killNats();
    const down = await readyBecomes(server, 503);
    expect(down.text).toBe(NOT_READY);
    expect(down.headers.get('content-type')).toMatch(/^application\/json/);
    expect(down.headers.get('x-request-id')).toMatch(UUID_V4);
    const health = await request(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(health.text).toBe('{"status":"ok"}');

    await restartNats();
    expect((await readyBecomes(server, 200)).text).toBe(READY);
    expect((await postJson(`${server.url}/api/v1/notification`, transcriptNotification('back'))).status).toBe(200);
    expect(server.process.exitCode).toBeNull();
  }, 90_000);

  it('with max_reconnect_attempts > 0, gives up for good: /ready stays 503 and requests fail cleanly after NATS is back', async () => {
    const server = await start(jetstreamConfig(nats.url, { max_reconnect_attempts: 2 }));
    expect((await ready(server)).status).toBe(200);
    const watcher = await open(server, '/api/v1/watch', TRANSCRIPT_REQUEST);
    expect((await watcher.nextSignificant())?.json.type).toBe('connection_established');

    await killNats();
    const lost = await eventually('the client to give up', () => logEvents(server, 'backend.jetstream.connection.lost')[0]);
    expect(lost.severityText).toBe('ERROR');
    expect(lost.body).toContain('max_reconnect_attempts (2) exhausted');
    // The open watch cannot continue and says so, then ends (D23).
    const finals = withoutHeartbeats(await watcher.rest(30_000));
    expect(finals.map((event) => `${event.event}:${String(event.json.error ?? event.json.reason)}`)).toEqual([
      'error:stream_processing_failed',
      'connection-closing:end_of_stream',
    ]);
    await restartNats();

    // NATS answers again, and the process stays down: nothing would reconnect it.
    const probe = await connect({ servers: nats.url });
    await probe.close();
    const connectedBefore = logEvents(server, 'backend.jetstream.connected').length;
    // Several reconnect delays (100 ms) pass while we watch: /ready never turns 200.
    for (let i = 0; i < 10; i++) {
      const response = await ready(server);
      expect(response.status).toBe(503);
      expect(response.text).toBe(NOT_READY);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(logEvents(server, 'backend.jetstream.connected')).toHaveLength(connectedBefore);

    const notify = await postJson(`${server.url}/api/v1/notification`, transcriptNotification('after'));
    expect(notify.status).toBe(500);
    expect(notify.json).toMatchObject({ code: 'NOTIFICATION_STORAGE_FAILED', error: 'Notification Storage Failed' });
    for (const path of ['/api/v1/watch', '/api/v1/replay']) {
      const body = path === '/api/v1/replay' ? { ...TRANSCRIPT_REQUEST, from_id: '0' } : TRANSCRIPT_REQUEST;
      const refused = await open(server, path, body);
      expect(refused.status, path).toBe(500);
      expect(JSON.parse(refused.errorBody ?? '{}')).toMatchObject({ code: 'SSE_STREAM_INITIALIZATION_FAILED', topic: TRANSCRIPT_TOPIC });
    }
    expect(server.process.exitCode).toBeNull();
  }, 90_000);

  it('accepts enable_auto_reconnect with a deprecation warning at startup, and still reconnects', async () => {
    const server = await start(jetstreamConfig(nats.url, { enable_auto_reconnect: false }));
    const warnings = logEvents(server, 'configuration.setting.deprecated');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.severityText).toBe('WARN');
    expect(warnings[0]?.body).toBe(
      'notification_backend.jetstream.enable_auto_reconnect is deprecated and ignored: the NATS client always reconnects, bounded by max_reconnect_attempts (0 = unlimited)',
    );
    await killNats();
    await readyBecomes(server, 503);
    await restartNats();
    await readyBecomes(server, 200);
  }, 90_000);
});

describe('a JetStream stream whose storage type differs from the configuration', () => {
  let nats: NatsServerProcess;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats.stop();
  });

  it('is left untouched, and notify, watch and replay fail with the storage mismatch', async () => {
    // The transcript schema's base is `polygon`: create its stream first, on file storage.
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'POLYGON', subjects: ['polygon.>'], storage: StorageType.File });
      await jetstream(nc).publish('polygon.x.1200', '{}');

      const server = await start(jetstreamConfig(nats.url, { storage_type: 'memory' }));
      const mismatch = "Stream 'POLYGON' storage mismatch: current File, requested Memory";

      const notify = await postJson(`${server.url}/api/v1/notification`, transcriptNotification('a'));
      expect(notify.status).toBe(500);
      expect(notify.json).toMatchObject({
        code: 'NOTIFICATION_STORAGE_FAILED',
        error: 'Notification Storage Failed',
        message: 'Failed to store notification',
        details: mismatch,
      });
      for (const path of ['/api/v1/watch', '/api/v1/replay']) {
        const body = path === '/api/v1/replay' ? { ...TRANSCRIPT_REQUEST, from_id: '0' } : TRANSCRIPT_REQUEST;
        const refused = await open(server, path, body);
        expect(refused.status, path).toBe(500);
        expect(JSON.parse(refused.errorBody ?? '{}')).toMatchObject({
          code: 'SSE_STREAM_INITIALIZATION_FAILED',
          error: 'SSE stream creation failed',
          details: mismatch,
          topic: TRANSCRIPT_TOPIC,
        });
      }
      // The backend itself is connected: only this stream is unusable.
      expect((await ready(server)).status).toBe(200);

      const info = await jsm.streams.info('POLYGON');
      expect(info.config.storage).toBe('file');
      expect(info.config.subjects).toEqual(['polygon.>']);
      expect(info.state.messages).toBe(1);
      expect(logEvents(server, 'backend.jetstream.stream.storage_mismatch')[0]?.body).toBe(mismatch);
    } finally {
      await nc.close();
    }
  }, 60_000);
});
