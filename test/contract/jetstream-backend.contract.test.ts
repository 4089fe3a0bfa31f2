import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { NotificationTooLargeError, type NotificationBackend } from '../../src/backend/backend.js';
import { JetStreamBackend } from '../../src/backend/jetstream/jetstream-backend.js';
import { streamNameOf as streamName } from '../../src/topic/stream-name.js';
import { encodeTopic } from '../../src/topic/percent-codec.js';
import { TopicPattern } from '../../src/topic/topic-pattern.js';
import { SHARED_NATS_URL, requireSharedNats } from '../support/nats-server.js';
import { describeBackendContract, uniqueBaseGenerator } from './backend-contract.js';
import { jetStreamTestSettings } from '../support/jetstream-settings.js';

/**
 * The backend contract on the NATS server CI provides at 127.0.0.1:4222. Every test uses fresh
 * bases, so runs never see each other's data; the streams they created are deleted afterwards.
 */
const settings = jetStreamTestSettings(SHARED_NATS_URL);

const created: NotificationBackend[] = [];
const usedBases = new Set<string>();
const nextBase = uniqueBaseGenerator('ct');

beforeAll(async () => {
  await requireSharedNats();
});

describeBackendContract('JetStreamBackend', {
  async create({ keepHistory, bases }) {
    for (const base of bases) usedBases.add(base);
    const backend = await JetStreamBackend.connect({
      settings,
      configured: bases.map((base) => ({
        eventType: base,
        base,
        bareTopics: true,
        storagePolicy: keepHistory ? { allow_duplicates: true } : undefined,
      })),
      logger: pino({ level: 'silent' }),
    });
    created.push(backend);
    return backend;
  },
  // Registered for clean-up too: a contract test may configure a base later (applySchemas).
  uniqueBase: () => {
    const base = nextBase();
    usedBases.add(base);
    return base;
  },
  async close() {
    for (const backend of created.splice(0)) await backend.shutdown().catch(() => undefined);
    const nc = await connect({ servers: SHARED_NATS_URL });
    try {
      const jsm = await jetstreamManager(nc);
      for await (const name of jsm.streams.names()) {
        if ([...usedBases].some((base) => name === base.toUpperCase() || name.startsWith(`${base.toUpperCase()}_`))) {
          await jsm.streams.delete(name).catch(() => undefined);
        }
      }
    } finally {
      await nc.close();
    }
  },
});

describe('JetStreamBackend replay cursor', () => {
  it('goes on from where it stood when the server removed its consumer mid-replay', async () => {
    const base = nextBase();
    usedBases.add(base);
    // NATS 2.9 leaves a pull for a missing consumer unanswered: the cursor finds out when the pull
    // times out, after `timeout_seconds`.
    const backend = await JetStreamBackend.connect({
      settings: { ...settings, timeout_seconds: 1 },
      configured: [{ eventType: base, base, bareTopics: true, storagePolicy: { allow_duplicates: true } }],
      logger: pino({ level: 'silent' }),
    });
    created.push(backend);
    const published: number[] = [];
    for (let i = 0; i < 30; i++) {
      published.push((await backend.publish({ topic: encodeTopic([base, 'm', String(i)]), payload: 'null' })).sequence);
    }
    const pattern = new TopicPattern([base, 'm', '*']);
    const upperBound = await backend.captureHistoryBound(pattern);
    const cursor = await backend.openReplay({ pattern, start: { kind: 'sequence', sequence: 0 }, upperBound });
    const read: number[] = [];
    const first = await cursor.next(4);
    read.push(...first.messages.map((m) => m.sequence));

    const nc = await connect({ servers: SHARED_NATS_URL });
    try {
      const jsm = await jetstreamManager(nc);
      const stream = streamName(base);
      const consumers: string[] = [];
      for await (const info of jsm.consumers.list(stream)) consumers.push(info.name);
      expect(consumers).toHaveLength(1);
      await jsm.consumers.delete(stream, consumers[0] as string);
    } finally {
      await nc.close();
    }

    for (let call = 0; call < 100; call++) {
      const batch = await cursor.next(4);
      expect(batch.messages.length).toBeLessThanOrEqual(4);
      read.push(...batch.messages.map((m) => m.sequence));
      if (batch.exhausted) break;
    }
    cursor.close();
    expect(read).toEqual(published);
  });
});

describe('JetStreamBackend message size (D33)', () => {
  async function backendFor(base: string): Promise<JetStreamBackend> {
    usedBases.add(base);
    const backend = await JetStreamBackend.connect({
      settings,
      configured: [{ eventType: base, base, bareTopics: true, storagePolicy: { allow_duplicates: true } }],
      logger: pino({ level: 'silent' }),
    });
    created.push(backend);
    return backend;
  }

  it("refuses a notification over the server's max_payload, headers counted, and stores nothing", async () => {
    const base = nextBase();
    const backend = await backendFor(base);
    const topic = encodeTopic([base, 'a']);
    // The shared server keeps the default max_payload of 1 MiB.
    const limit = 1024 * 1024;
    const payloadOnly = backend.publish({ topic, payload: 'x'.repeat(limit + 1) });
    await expect(payloadOnly).rejects.toBeInstanceOf(NotificationTooLargeError);
    await expect(payloadOnly).rejects.toMatchObject({ limitBytes: limit });
    // Fits as a payload, not once the identifier header is added.
    const withHeaders = backend.publish({ topic, payload: 'x'.repeat(limit - 100), metadata: { aviso_identifier: 'y'.repeat(200) } });
    await expect(withHeaders).rejects.toBeInstanceOf(NotificationTooLargeError);
    const pattern = new TopicPattern([base, '*']);
    expect(await backend.captureHistoryBound(pattern)).toBe(0);
    // The connection is intact: the next notification is stored as the stream's first.
    expect(await backend.publish({ topic, payload: 'x'.repeat(limit - 1000) })).toEqual({ sequence: 1 });
  });
});

describe('JetStreamBackend.applySchemas', () => {
  async function info(name: string) {
    const nc = await connect({ servers: SHARED_NATS_URL });
    try {
      return await (await jetstreamManager(nc)).streams.info(name).catch(() => undefined);
    } finally {
      await nc.close();
    }
  }

  it('creates the stream of a new base and reconciles a changed one at once, before any use', async () => {
    const existing = nextBase();
    const added = nextBase();
    usedBases.add(existing);
    usedBases.add(added);
    const backend = await JetStreamBackend.connect({
      settings,
      configured: [{ eventType: existing, base: existing, bareTopics: false, storagePolicy: { max_messages: 10 } }],
      logger: pino({ level: 'silent' }),
    });
    created.push(backend);
    await backend.publish({ topic: encodeTopic([existing, 'a']), payload: 'null' });
    expect((await info(streamName(existing)))?.config.max_msgs).toBe(10);
    expect(await info(streamName(added))).toBeUndefined();

    await backend.applySchemas([
      { eventType: existing, base: existing, bareTopics: false, storagePolicy: { max_messages: 20 } },
      { eventType: added, base: added, bareTopics: false, storagePolicy: { max_messages: 5 } },
    ]);

    expect((await info(streamName(existing)))?.config.max_msgs).toBe(20);
    const fresh = await info(streamName(added));
    expect(fresh?.config.max_msgs).toBe(5);
    expect(fresh?.config.subjects).toEqual([`${added}.>`]);
    expect(fresh?.state.messages).toBe(0);
  });
});
