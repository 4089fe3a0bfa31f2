import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendUnderTest } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { postJson, request } from '../support/http.js';
import { startNatsServer, type NatsServerProcess } from '../support/nats-server.js';
import { runServerToExit, type RunningServer } from '../support/server-process.js';
import { withoutHeartbeats } from '../support/sse-client.js';
import { trackProcesses } from '../support/tracked-processes.js';
import { TRANSCRIPT_REQUEST, frameLabel, transcriptNotification } from '../support/transcript.js';

const { start, open } = trackProcesses();

async function streamInfo(natsUrl: string, name: string) {
  const nc = await connect({ servers: natsUrl });
  try {
    return await (await jetstreamManager(nc)).streams.info(name);
  } finally {
    await nc.close();
  }
}

async function replayIds(server: RunningServer): Promise<string[]> {
  const client = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '0' });
  return withoutHeartbeats(await client.rest())
    .filter((e) => e.event === 'replay')
    .map((e) => e.json.id as string);
}

describe('two server processes on one JetStream', () => {
  const backend = new BackendUnderTest('jetstream');
  beforeAll(() => backend.start());
  afterAll(() => backend.stop());

  it('delivers a notification published to one process to watchers on both, and both replay the same history', async () => {
    const first = await start(backend.config());
    const second = await start(backend.config());
    const onFirst = await open(first, '/api/v1/watch', TRANSCRIPT_REQUEST);
    const onSecond = await open(second, '/api/v1/watch', TRANSCRIPT_REQUEST);
    await onFirst.next();
    await onSecond.next();

    expect((await postJson(`${first.url}/api/v1/notification`, transcriptNotification('from-first'))).status).toBe(200);
    expect((await postJson(`${second.url}/api/v1/notification`, transcriptNotification('from-second'))).status).toBe(200);
    for (const client of [onFirst, onSecond]) {
      const notes = [];
      for (let i = 0; i < 2; i++) notes.push(((await client.nextSignificant())?.json.data as { payload: { note: string } }).payload.note);
      expect(notes).toEqual(['from-first', 'from-second']);
    }
    const history = await replayIds(first);
    expect(history).toEqual(['test_polygon@1', 'test_polygon@2']);
    expect(await replayIds(second)).toEqual(history);
  });
});

describe('stream settings (docs/design/rules/backends.md §7.3–§7.4)', () => {
  const backend = new BackendUnderTest('jetstream');
  beforeAll(() => backend.start());
  afterAll(() => backend.stop());

  function withPolicy(policy: Record<string, unknown>, jetstream: Record<string, unknown> = {}) {
    const config = backend.config() as {
      notification_schema: Record<string, Record<string, unknown>>;
      notification_backend: { jetstream: Record<string, unknown> };
    };
    config.notification_schema.test_polygon = { ...config.notification_schema.test_polygon, storage_policy: policy };
    Object.assign(config.notification_backend.jetstream, jetstream);
    return config;
  }

  it('creates the stream on first use with the configured layout and limits', async () => {
    const server = await start(
      withPolicy(
        { retention_time: '7d', max_messages: 5000, max_size: '64Mi', allow_duplicates: true, compression: true },
        {
          max_messages: 5,
          max_bytes: 2048,
          retention_time: '1h',
          storage_type: 'file',
        },
      ),
    );
    expect((await postJson(`${server.url}/api/v1/notification`, transcriptNotification('a'))).status).toBe(200);
    const { config } = await streamInfo(backend.natsUrl, 'POLYGON');
    expect(config).toMatchObject({
      name: 'POLYGON',
      subjects: ['polygon.>'],
      storage: 'file',
      retention: 'limits',
      discard: 'old',
      max_msgs: 5000,
      max_bytes: 67108864,
      max_age: 7 * 86400 * 1e9,
      max_msgs_per_subject: -1,
      num_replicas: 1,
    });
    const warning = server.logs.find((line) => line.attributes?.['event.name'] === 'backend.jetstream.compression.unsupported');
    expect(warning?.body).toBe('compression requires NATS >= 2.10; stream POLYGON will be uncompressed');
  });

  it('reconciles a stream whose configuration drifted from the config, keeping its data', async () => {
    const before = await start(withPolicy({ allow_duplicates: true, max_messages: 100 }));
    expect((await postJson(`${before.url}/api/v1/notification`, transcriptNotification('kept'))).status).toBe(200);
    await before.stop();

    const after = await start(withPolicy({ allow_duplicates: false, max_messages: 10, retention_time: '2h' }));
    const stored = (await streamInfo(backend.natsUrl, 'POLYGON')).state.messages;
    expect((await postJson(`${after.url}/api/v1/notification`, transcriptNotification('next'))).status).toBe(200);
    const { config, state } = await streamInfo(backend.natsUrl, 'POLYGON');
    expect(config).toMatchObject({ max_msgs: 10, max_msgs_per_subject: 1, max_age: 7200e9 });
    expect(state.messages).toBeGreaterThan(0);
    expect(stored).toBeGreaterThan(0);
    expect(after.logs.some((line) => line.attributes?.['event.name'] === 'backend.jetstream.stream.reconciled')).toBe(true);
  });

  it('binds the bare base as well for a schema with an empty key_order (D19)', async () => {
    const config = backend.config({
      notification_schema: {
        flat: { topic: { base: 'flat', key_order: [] }, identifier: { note: { type: 'StringHandler', required: false } } },
      },
    });
    const server = await start(config);
    const published = await postJson(`${server.url}/api/v1/notification`, { event_type: 'flat', identifier: { note: 'x' } });
    expect(published.status).toBe(200);
    expect((await streamInfo(backend.natsUrl, 'FLAT')).config.subjects).toEqual(['flat', 'flat.>']);
    const client = await open(server, '/api/v1/replay', { event_type: 'flat', identifier: {}, from_id: '0' });
    expect(client.status).toBe(200);
    expect(withoutHeartbeats(await client.rest()).map(frameLabel)).toEqual([
      'replay_started',
      'flat@1',
      'replay_completed',
      'end_of_stream',
    ]);
  });
});

describe('NATS outages', () => {
  let nats: NatsServerProcess;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats.stop();
  });

  it('keeps the process up, fails notify and an in-flight replay while NATS is away, and recovers on its own', async () => {
    const config = new BackendUnderTest('jetstream', nats.url).config({
      watch_endpoint: { replay_batch_size: 1, replay_batch_delay_ms: 500 },
    });
    const server = await start(config);
    for (const note of ['a', 'b', 'c', 'd', 'e']) {
      expect((await postJson(`${server.url}/api/v1/notification`, transcriptNotification(note))).status).toBe(200);
    }
    const live = await open(server, '/api/v1/watch', TRANSCRIPT_REQUEST);
    await live.next();
    const replay = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '0' });
    expect((await replay.nextSignificant())?.json.type).toBe('replay_started');
    expect((await replay.nextSignificant())?.json.id).toBe('test_polygon@1');

    await nats.kill();

    const replayRest = withoutHeartbeats(await replay.rest(30_000)).map(frameLabel);
    expect(replayRest.slice(-2)).toEqual(['stream_processing_failed', 'end_of_stream']);
    expect((await request(`${server.url}/health`)).status).toBe(200);
    const failed = await postJson(`${server.url}/api/v1/notification`, transcriptNotification('lost'));
    expect(failed.status).toBe(500);
    expect(failed.json.code).toBe('NOTIFICATION_STORAGE_FAILED');

    await nats.restart();
    const firstAfter = await eventually(
      'notify to succeed after the restart',
      async () => {
        const response = await postJson(`${server.url}/api/v1/notification`, transcriptNotification('after-1'));
        return response.status === 200 ? response : undefined;
      },
      { intervalMs: 200 },
    );
    expect(firstAfter.status).toBe(200);
    expect((await postJson(`${server.url}/api/v1/notification`, transcriptNotification('after-2'))).status).toBe(200);

    const notes: string[] = [];
    while (notes.length < 2) {
      const event = await live.nextSignificant(30_000);
      expect(event?.event).toBe('live-notification');
      notes.push((event?.json.data as { payload: { note: string } }).payload.note);
    }
    expect(notes).toEqual(['after-1', 'after-2']);
    expect(server.process.exitCode).toBeNull();
  }, 90_000);
});

describe('startup without NATS', () => {
  it('retries, then exits 1 with one line saying the connection failed', async () => {
    const unused = await startNatsServer();
    const url = unused.url;
    await unused.stop();
    const config = new BackendUnderTest('jetstream', url).config() as { notification_backend: { jetstream: Record<string, unknown> } };
    Object.assign(config.notification_backend.jetstream, { retry_attempts: 2, timeout_seconds: 1, reconnect_delay_ms: 100 });
    const result = await runServerToExit({ config });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^aviso-server: backend initialization failed: NATS connect failed: /);
  });
});

describe('token authentication (docs/design/rules/backends.md §7.2)', () => {
  it('connects with the token from NATS_TOKEN, and cannot start without it', async () => {
    const nats = await startNatsServer({ extraArgs: ['--auth', 's3cret-token'] });
    try {
      const config = new BackendUnderTest('jetstream', nats.url).config() as {
        notification_backend: { jetstream: Record<string, unknown> };
      };
      Object.assign(config.notification_backend.jetstream, { retry_attempts: 1, timeout_seconds: 2 });
      const server = await start(config, { env: { NATS_TOKEN: 's3cret-token' } });
      expect((await postJson(`${server.url}/api/v1/notification`, transcriptNotification('a'))).status).toBe(200);
      expect(JSON.stringify(server.logs)).not.toContain('s3cret-token');

      const refused = await runServerToExit({ config });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/NATS connect failed: /);
    } finally {
      await nats.stop();
    }
  });
});
