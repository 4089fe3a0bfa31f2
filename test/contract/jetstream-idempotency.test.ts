import { Writable } from 'node:stream';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JetStreamBackend } from '../../src/backend/jetstream/jetstream-backend.js';
import type { SchemaStorage } from '../../src/backend/backend.js';
import { encodeTopic } from '../../src/topic/percent-codec.js';
import { streamNameOf } from '../../src/topic/stream-name.js';
import { TopicPattern } from '../../src/topic/topic-pattern.js';
import { SHARED_NATS_URL, requireSharedNats } from '../support/nats-server.js';
import { uniqueBaseGenerator } from './backend-contract.js';
import { jetStreamTestSettings } from '../support/jetstream-settings.js';

/**
 * What only JetStream does for notify's `Idempotency-Key` (docs/backends.md "Idempotent notify"): the
 * key-value bucket created and reconciled at startup, the streams' duplicate windows, and a publish
 * under a deduplication id that JetStream drops as a duplicate. One bucket of its own per run.
 */
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
const BUCKET = `IDEM_CT_${run}`;
const settings = jetStreamTestSettings(SHARED_NATS_URL, { idempotency_bucket: BUCKET, history_ledger_bucket: `${BUCKET}_LEDGER` });
const nextBase = uniqueBaseGenerator('idem');
const usedBases: string[] = [];
const created: JetStreamBackend[] = [];

function captured(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return {
    logger: pino({ level: 'info' }, sink),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

async function backendFor(
  schemas: readonly Omit<SchemaStorage, 'eventType' | 'bareTopics'>[],
  windowSec = 30,
  logger: Logger = pino({ level: 'silent' }),
): Promise<JetStreamBackend> {
  for (const schema of schemas) usedBases.push(schema.base);
  const backend = await JetStreamBackend.connect({
    settings,
    configured: schemas.map((schema) => ({ ...schema, eventType: `${schema.base}_type`, bareTopics: false })),
    logger,
    idempotency: { windowSec },
  });
  created.push(backend);
  return backend;
}

async function withJsm<T>(use: (jsm: Awaited<ReturnType<typeof jetstreamManager>>) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: SHARED_NATS_URL });
  try {
    return await use(await jetstreamManager(nc));
  } finally {
    await nc.close();
  }
}

beforeAll(async () => {
  await requireSharedNats();
});

afterAll(async () => {
  for (const backend of created.splice(0)) await backend.shutdown().catch(() => undefined);
  await withJsm(async (jsm) => {
    await jsm.streams.delete(`KV_${BUCKET}`).catch(() => undefined);
    for (const base of usedBases) await jsm.streams.delete(streamNameOf(base)).catch(() => undefined);
  });
});

describe('the idempotency bucket', () => {
  it('is created at startup: file storage, one value per key, the window as TTL', async () => {
    await backendFor([], 30);
    const { config } = await withJsm((jsm) => jsm.streams.info(`KV_${BUCKET}`));
    expect(config).toMatchObject({ storage: 'file', max_msgs_per_subject: 1, max_age: 30e9, num_replicas: 1 });
    expect(config.subjects).toEqual([`$KV.${BUCKET}.>`]);
  });

  it('is reconciled at startup when the window changed', async () => {
    await backendFor([], 30);
    await backendFor([], 45);
    expect((await withJsm((jsm) => jsm.streams.info(`KV_${BUCKET}`))).config.max_age).toBe(45e9);
  });
});

describe('duplicate windows', () => {
  it('are the window on every stream, bounded by a shorter max_age, which startup warns about by event type', async () => {
    const long = nextBase();
    const short = nextBase();
    const { logger, lines } = captured();
    const backend = await backendFor(
      [
        { base: long, storagePolicy: { retention_time: '1h' } },
        { base: short, storagePolicy: { retention_time: '10s' } },
      ],
      30,
      logger,
    );
    await backend.publish({ topic: encodeTopic([long, 'a']), payload: 'null' });
    await backend.publish({ topic: encodeTopic([short, 'a']), payload: 'null' });
    const windows = await withJsm(async (jsm) => [
      (await jsm.streams.info(streamNameOf(long))).config.duplicate_window,
      (await jsm.streams.info(streamNameOf(short))).config.duplicate_window,
    ]);
    expect(windows).toEqual([30e9, 10e9]);
    const warnings = lines().filter((line) => line.event_name === 'backend.jetstream.idempotency.window_exceeds_retention');
    expect(warnings.map((line) => line.event_type)).toEqual([`${short}_type`]);
  });

  it('are reconciled on an existing stream', async () => {
    const base = nextBase();
    const first = await backendFor([{ base, storagePolicy: undefined }], 30);
    await first.publish({ topic: encodeTopic([base, 'a']), payload: 'null' });
    const second = await backendFor([{ base, storagePolicy: undefined }], 50);
    await second.publish({ topic: encodeTopic([base, 'b']), payload: 'null' });
    expect((await withJsm((jsm) => jsm.streams.info(streamNameOf(base)))).config.duplicate_window).toBe(50e9);
  });
});

describe('publish with a deduplication id', () => {
  it('stores once: a second publish under the id, from another process, names the stored notification', async () => {
    const base = nextBase();
    const one = await backendFor([{ base, storagePolicy: { allow_duplicates: true } }]);
    const other = await backendFor([{ base, storagePolicy: { allow_duplicates: true } }]);
    const topic = encodeTopic([base, 'a']);
    const metadata = { aviso_identifier: '{"k":"a"}' };
    const stored = await one.publish({ topic, payload: '"first"', metadata }, { deduplicationId: `${run}-dedup-1` });
    expect(stored.duplicateOf).toBeUndefined();
    const again = await other.publish({ topic, payload: '"second"', metadata }, { deduplicationId: `${run}-dedup-1` });
    expect(again.sequence).toBe(stored.sequence);
    expect(again.duplicateOf).toMatchObject({ sequence: stored.sequence, topic, payload: '"first"', metadata });
    expect(typeof again.duplicateOf?.timestampNs).toBe('bigint');
    expect(await other.captureHistoryBound(new TopicPattern([base, '*']))).toBe(stored.sequence);
  });

  it('names no notification when the stored one is gone', async () => {
    const base = nextBase();
    const backend = await backendFor([{ base, storagePolicy: { allow_duplicates: true } }]);
    const topic = encodeTopic([base, 'a']);
    const { sequence } = await backend.publish({ topic, payload: 'null' }, { deduplicationId: `${run}-dedup-2` });
    expect(await backend.deleteMessage(base, sequence)).toBe('deleted');
    const again = await backend.publish({ topic, payload: 'null' }, { deduplicationId: `${run}-dedup-2` });
    expect(again).toEqual({ sequence, duplicateOf: null });
  });

  it('without an id, publishes of the same notification are stored apart', async () => {
    const base = nextBase();
    const backend = await backendFor([{ base, storagePolicy: { allow_duplicates: true } }]);
    const topic = encodeTopic([base, 'a']);
    const first = await backend.publish({ topic, payload: 'null' });
    const second = await backend.publish({ topic, payload: 'null' });
    expect(second.sequence).toBe(first.sequence + 1);
    expect(second.duplicateOf).toBeUndefined();
  });
});
