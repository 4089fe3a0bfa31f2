import { setTimeout as delay } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationBackend, StoredNotification } from '../../src/backend/backend.js';
import { JetStreamBackend } from '../../src/backend/jetstream/jetstream-backend.js';
import { streamNameOf as streamName } from '../../src/topic/stream-name.js';
import { MemoryBackend } from '../../src/backend/memory/memory-backend.js';
import { systemClock } from '../../src/time/clock.js';
import type { JetStreamConfig } from '../../src/config/model.js';
import { parseFromDate } from '../../src/http/routes/request-range.js';
import { LATEST, resolveReplayEnd, type ReplayEndRequest } from '../../src/streaming/stream-range.js';
import { encodeTopic } from '../../src/topic/percent-codec.js';
import { TopicPattern } from '../../src/topic/topic-pattern.js';
import { SHARED_NATS_URL, requireSharedNats } from '../support/nats-server.js';
import { uniqueBaseGenerator, type BackendFactory } from './backend-contract.js';
import { jetStreamTestSettings } from '../support/jetstream-settings.js';

/**
 * The replay end of D25 (docs/design/rules/reference-0.13.md §1) resolved through each backend's contract: H without
 * an end; min(H, to_id); for to_date, one below the first topic-matching notification stored
 * strictly after it, H when there is none up to H. Sequences are compared within one base only.
 */
function describeReplayEnd(label: string, factory: BackendFactory): void {
  describe(`${label}: replay end point (D25)`, () => {
    const open: NotificationBackend[] = [];
    afterEach(async () => {
      for (const backend of open.splice(0)) await backend.shutdown();
    });

    async function setup(): Promise<{ backend: NotificationBackend; base: string }> {
      const base = factory.uniqueBase();
      const backend = await factory.create({ keepHistory: true, bases: [base] });
      open.push(backend);
      return { backend, base };
    }

    async function publish(backend: NotificationBackend, tokens: readonly string[]): Promise<StoredNotification> {
      const topic = encodeTopic(tokens);
      const { sequence } = await backend.publish({ topic, payload: 'null' });
      const pattern = new TopicPattern(tokens);
      const batch = await backend.fetchBatch({ pattern, start: { kind: 'sequence', sequence }, limit: 1, upperBound: sequence });
      return batch.messages[0] as StoredNotification;
    }

    /** Publishes after the clock moved on, so the storage time is later than everything before. */
    async function publishLater(backend: NotificationBackend, tokens: readonly string[]): Promise<StoredNotification> {
      await delay(3);
      return publish(backend, tokens);
    }

    const date = (atNs: bigint): ReplayEndRequest => ({ kind: 'date', atNs });
    const sequence = (value: number): ReplayEndRequest => ({ kind: 'sequence', sequence: value, requested: BigInt(value) });

    it('ends at H without an end point, and at min(H, to_id) with one', async () => {
      const { backend, base } = await setup();
      const first = await publish(backend, [base, 'a']);
      const second = await publish(backend, [base, 'a']);
      const pattern = new TopicPattern([base, '*']);
      const bound = await backend.captureHistoryBound(pattern);
      expect(bound).toBe(second.sequence);
      expect(await resolveReplayEnd(backend, pattern, LATEST, bound)).toBe(bound);
      expect(await resolveReplayEnd(backend, pattern, sequence(first.sequence), bound)).toBe(first.sequence);
      expect(await resolveReplayEnd(backend, pattern, sequence(bound + 100), bound)).toBe(bound);
      expect(await resolveReplayEnd(backend, pattern, sequence(0), bound)).toBe(0);
    });

    it('ends a to_date range just before the first matching notification stored after it', async () => {
      const { backend, base } = await setup();
      await publish(backend, [base, 'a']);
      const lastInRange = await publish(backend, [base, 'a']);
      const otherTopic = await publishLater(backend, [base, 'b']);
      const firstAfter = await publish(backend, [base, 'a']);
      await publish(backend, [base, 'a']);
      const pattern = new TopicPattern([base, 'a']);
      const bound = await backend.captureHistoryBound(pattern);
      // to_date is inclusive: the notification stored exactly at it is inside the range.
      const end = await resolveReplayEnd(backend, pattern, date(lastInRange.timestampNs), bound);
      // The first notification after to_date on another topic does not end the range.
      expect(otherTopic.sequence).toBeLessThan(firstAfter.sequence);
      expect(end).toBe(firstAfter.sequence - 1);
      // With a pattern that matches both, the other topic's notification is the first after.
      const wide = new TopicPattern([base, '*']);
      expect(await resolveReplayEnd(backend, wide, date(lastInRange.timestampNs), bound)).toBe(otherTopic.sequence - 1);
    });

    it('ends at H when nothing matching was stored after to_date up to H', async () => {
      const { backend, base } = await setup();
      const last = await publish(backend, [base, 'a']);
      await publishLater(backend, [base, 'b']);
      const pattern = new TopicPattern([base, 'a']);
      const bound = await backend.captureHistoryBound(pattern);
      expect(await resolveReplayEnd(backend, pattern, date(last.timestampNs), bound)).toBe(bound);
      // Stored after H, so invisible to the request: it cannot end the range either.
      await publishLater(backend, [base, 'a']);
      expect(await resolveReplayEnd(backend, pattern, date(last.timestampNs), bound)).toBe(bound);
    });

    it('handles dates far outside the nanosecond range: 1500 selects nothing, 2300 ends at H', async () => {
      const { backend, base } = await setup();
      const first = await publish(backend, [base, 'a']);
      await publish(backend, [base, 'a']);
      const pattern = new TopicPattern([base, 'a']);
      const bound = await backend.captureHistoryBound(pattern);
      expect(await resolveReplayEnd(backend, pattern, date(parseFromDate('1500-01-01T00:00:00Z')), bound)).toBe(first.sequence - 1);
      expect(await resolveReplayEnd(backend, pattern, date(parseFromDate('2300-01-01T00:00:00Z')), bound)).toBe(bound);
      expect(await resolveReplayEnd(backend, pattern, date(parseFromDate('+262142-12-31 23:59:59')), bound)).toBe(bound);
      expect(await resolveReplayEnd(backend, pattern, date(parseFromDate('-262143-01-01 00:00:00')), bound)).toBe(first.sequence - 1);
    });

    it('is 0 on a base with nothing stored, whatever the end', async () => {
      const { backend, base } = await setup();
      const pattern = new TopicPattern([base, '*']);
      expect(await resolveReplayEnd(backend, pattern, date(parseFromDate('2026-01-01T00:00:00Z')), 0)).toBe(0);
      expect(await resolveReplayEnd(backend, pattern, sequence(5), 0)).toBe(0);
    });
  });
}

const memoryFactory: BackendFactory = {
  async create() {
    return new MemoryBackend({ maxHistoryPerTopic: 100, maxTopics: 10_000, clock: systemClock });
  },
  uniqueBase: uniqueBaseGenerator('mem_end'),
};

/** JetStream on the NATS server CI provides at 127.0.0.1:4222; the streams made here are deleted after. */
const jetStreamSettings: JetStreamConfig = jetStreamTestSettings(SHARED_NATS_URL, { enable_auto_reconnect: true });
const usedBases = new Set<string>();
const nextJetStreamBase = uniqueBaseGenerator('ct_end');

async function connectJetStream(bases: readonly string[]): Promise<JetStreamBackend> {
  for (const base of bases) usedBases.add(base);
  return JetStreamBackend.connect({
    settings: jetStreamSettings,
    configured: bases.map((base) => ({ eventType: base, base, bareTopics: true, storagePolicy: { allow_duplicates: true } })),
    logger: pino({ level: 'silent' }),
  });
}

const jetStreamFactory: BackendFactory = {
  create: ({ bases }) => connectJetStream(bases),
  uniqueBase: nextJetStreamBase,
};

beforeAll(async () => {
  await requireSharedNats();
});

afterAll(async () => {
  const nc = await connect({ servers: SHARED_NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    for (const base of usedBases) await jsm.streams.delete(streamName(base)).catch(() => undefined);
  } finally {
    await nc.close();
  }
});

describeReplayEnd('MemoryBackend', memoryFactory);
describeReplayEnd('JetStreamBackend', jetStreamFactory);

/**
 * Counts what JetStream delivers from one stream to anyone: a second connection subscribed to every
 * inbox sees each message a pull hands to the backend's inbox (same account), recognisable by its
 * `$JS.ACK.<stream>.` reply subject. It also records the consumers created on the stream.
 */
async function watchDeliveries(stream: string) {
  const nc: NatsConnection = await connect({ servers: SHARED_NATS_URL });
  let delivered = 0;
  const creates: Record<string, unknown>[] = [];
  const inboxes = nc.subscribe('_INBOX.>', {
    callback: (_error, message) => {
      if (message.reply?.startsWith(`$JS.ACK.${stream}.`)) delivered++;
    },
  });
  const consumerCreates = nc.subscribe(`$JS.API.CONSUMER.CREATE.${stream}.>`, {
    callback: (_error, message) => {
      creates.push(message.json<{ config: Record<string, unknown> }>().config);
    },
  });
  await nc.flush();
  return {
    async settled(): Promise<{ delivered: number; creates: Record<string, unknown>[] }> {
      // Everything the server sent before this round trip has reached the subscriptions.
      await nc.flush();
      return { delivered, creates: [...creates] };
    },
    async reset(): Promise<void> {
      await nc.flush();
      delivered = 0;
      creates.length = 0;
    },
    async close(): Promise<void> {
      inboxes.unsubscribe();
      consumerCreates.unsubscribe();
      await nc.close();
    },
  };
}

describe('JetStreamBackend: a to_date end seeks by time, it never reads the stream from its start', () => {
  it('resolves the end with a consumer starting at what follows to_date, found without reading the stream', async () => {
    const base = nextJetStreamBase();
    const backend = await connectJetStream([base]);
    const monitor = await watchDeliveries(streamName(base));
    try {
      const history = 300;
      let lastInRange: StoredNotification | undefined;
      for (let i = 0; i < history; i++) {
        const { sequence } = await backend.publish({ topic: encodeTopic([base, 'a']), payload: 'null' });
        if (i === history - 1) {
          const pattern = new TopicPattern([base, 'a']);
          const batch = await backend.fetchBatch({ pattern, start: { kind: 'sequence', sequence }, limit: 1, upperBound: sequence });
          lastInRange = batch.messages[0];
        }
      }
      await delay(3);
      const after: number[] = [];
      for (let i = 0; i < 3; i++) {
        after.push((await backend.publish({ topic: encodeTopic([base, 'a']), payload: 'null' })).sequence);
      }
      const pattern = new TopicPattern([base, 'a']);
      const bound = await backend.captureHistoryBound(pattern);

      await monitor.reset();
      const end = await resolveReplayEnd(backend, pattern, { kind: 'date', atNs: (lastInRange as StoredNotification).timestampNs }, bound);
      expect(end).toBe((after[0] as number) - 1);
      const seek = await monitor.settled();
      // A scan from the start would have delivered at least the 300 earlier messages.
      expect(seek.delivered).toBeGreaterThanOrEqual(1);
      expect(seek.delivered).toBeLessThanOrEqual(after.length);
      expect(seek.creates).toHaveLength(1);
      // This stream is in memory, where nats-server 2.9 crashes on a start time over a stream with
      // gaps: the time is searched by sequence instead (date-start.ts), never by reading the stream.
      expect(seek.creates[0]).toMatchObject({ deliver_policy: 'by_start_sequence', opt_start_seq: after[0] });

      // The same count for a replay from the start: the measure does see a scan.
      await monitor.reset();
      const cursor = await backend.openReplay({ pattern, start: { kind: 'sequence', sequence: 0 }, upperBound: bound });
      for (let call = 0; call < 1_000 && !(await cursor.next(100)).exhausted; call++);
      cursor.close();
      expect((await monitor.settled()).delivered).toBeGreaterThanOrEqual(history);
    } finally {
      await monitor.close();
      await backend.shutdown();
    }
  });
});
