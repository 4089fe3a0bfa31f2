import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, BackendUnderTest, type BackendKind } from '../support/backends.js';
import { postJson } from '../support/http.js';
import { SHARED_NATS_URL, requireSharedNats } from '../support/nats-server.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, type SseEvent } from '../support/sse-client.js';
import { decodeTopic, encodeTopic } from '../../src/topic/percent-codec.js';
import { TopicPattern } from '../../src/topic/topic-pattern.js';

/**
 * Topic injection (issue 9; docs/design/rules/schema-and-validation.md §7–§8, D18, D20): identifier values made of
 * the subject syntax — `.`, `*`, `>`, `%` and its escapes, whitespace, control characters,
 * unicode, the empty string — must never let a watcher or a replay for one identifier receive a
 * notification posted for another, whether the other value is crafted to look like a wildcard or
 * to shift the token boundaries of a multi-field subject. Only the scalar `"*"` is a wildcard
 * (D18), so it is never used as a watcher's value here.
 *
 * Both backends; JetStream uses the shared NATS on 127.0.0.1:4222 with a base unique to this run,
 * and deletes that stream afterwards. A failure prints fast-check's seed; re-run it with
 * `FC_SEED=<seed> FC_PATH=<path>`.
 */

const RUN = randomUUID().slice(0, 8);
const RUNS = Number(process.env.FC_RUNS ?? 25);

function fcOptions(numRuns = RUNS): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  return { numRuns, ...(seed === undefined ? {} : { seed }), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) };
}

/** Fragments that mean something to NATS subjects, the codec or a careless splitter. */
const FRAGMENTS = [
  'a',
  'b',
  '.',
  '*',
  '>',
  '%',
  '2E',
  '2A',
  '3E',
  '25',
  '%2E',
  '%2A',
  '%3E',
  '%25',
  '%2e',
  ' ',
  '\t',
  '\u00a0',
  'é',
  '日本',
  '😀',
  '..',
  '$',
  '/',
  '\\',
  '\u0001',
  'od',
];

const hostileValue = fc.oneof(
  fc.array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: 5 }).map((parts) => parts.join('')),
  fc.constantFrom('*', '>', '.', '%', '', ' ', 'a.b', 'a.*', '*.*', '>.>', 'a%2Eb', '%2A', '%3E', 'a b', 'od.x', 'x.od'),
);

/** `destination` and `class` are both in `key_order`, so a `.` in one could shift into the other. */
function schemas(base: string): Record<string, unknown> {
  return {
    inj: {
      topic: { base, key_order: ['destination', 'class'] },
      identifier: {
        destination: { type: 'StringHandler', required: true },
        class: { type: 'StringHandler', required: true },
      },
      payload: { required: false },
    },
  };
}

interface Identifier {
  readonly destination: string;
  readonly class: string;
}

const key = (id: Identifier): string => JSON.stringify([id.destination, id.class]);

/** CloudEvents of a finished replay (history only). */
function notificationsOf(events: readonly SseEvent[]): Record<string, unknown>[] {
  return events.filter((e) => e.event === 'replay' || (e.event === 'live-notification' && 'specversion' in e.json)).map((e) => e.json);
}

function identifierOf(cloudEvent: Record<string, unknown>): Record<string, unknown> {
  return ((cloudEvent.data as Record<string, unknown> | undefined)?.identifier ?? {}) as Record<string, unknown>;
}

/**
 * The codec layer on its own. Delivery is protected twice — by the subject (encoded tokens) and by
 * the precise match on the stored identifier (D7, D18) — and the end-to-end checks below only fail
 * when both break, so the subject layer is checked here by itself: distinct value tuples never
 * share a subject, a subject decodes back to its values, and no pattern of exact values matches
 * another tuple's subject.
 */
describe('topic codec: hostile values cannot forge or shift tokens', () => {
  const tuple = fc.array(
    hostileValue.filter((v) => v !== '*'),
    { minLength: 1, maxLength: 3 },
  );

  it('encoding is injective and decodes back, token count preserved', () => {
    fc.assert(
      fc.property(tuple, tuple, (a, b) => {
        const wireA = encodeTopic(['base', ...a]);
        expect(decodeTopic(wireA)).toEqual(['base', ...a]);
        expect(wireA.split('.')).toHaveLength(a.length + 1);
        expect(wireA).not.toMatch(/[*>\s]/u);
        if (JSON.stringify(a) !== JSON.stringify(b)) expect(encodeTopic(['base', ...b])).not.toBe(wireA);
      }),
      fcOptions(500),
    );
  });

  it('an exact pattern matches only its own subject', () => {
    fc.assert(
      fc.property(tuple, tuple, (a, b) => {
        const pattern = new TopicPattern(['base', ...a]);
        expect(pattern.matches(encodeTopic(['base', ...a]))).toBe(true);
        if (JSON.stringify(a) !== JSON.stringify(b)) expect(pattern.matches(encodeTopic(['base', ...b]))).toBe(false);
      }),
      fcOptions(500),
    );
  });
});

describe.each(BACKEND_KINDS)('topic injection on the %s backend', { timeout: 120_000 }, (kind: BackendKind) => {
  const base = `inj${RUN}${kind === 'jetstream' ? 'js' : 'mem'}`;
  const backend = new BackendUnderTest(kind, kind === 'jetstream' ? SHARED_NATS_URL : undefined);
  let server: RunningServer;
  /** Every identifier the server accepted, by key. */
  const accepted = new Map<string, Identifier>();

  beforeAll(async () => {
    if (kind === 'jetstream') await requireSharedNats();
    await backend.start();
    server = await startServer({ config: backend.config({ notification_schema: schemas(base) }) });
  });

  afterAll(async () => {
    await server?.stop();
    await backend.stop();
    if (kind !== 'jetstream') return;
    const nc = await connect({ servers: SHARED_NATS_URL });
    try {
      const jsm = await jetstreamManager(nc);
      for await (const name of jsm.streams.names()) {
        if (name.startsWith(base.toUpperCase())) await jsm.streams.delete(name).catch(() => undefined);
      }
    } finally {
      await nc.close();
    }
  });

  /** Notifies `id` with its own key as payload; records it when accepted. Any answer but 200/400 fails. */
  async function notify(id: Identifier): Promise<boolean> {
    const reply = await postJson(`${server.url}/api/v1/notification`, { event_type: 'inj', identifier: id, payload: key(id) });
    expect([200, 400], `${key(id)} → ${reply.status} ${reply.text}`).toContain(reply.status);
    if (reply.status === 200) accepted.set(key(id), id);
    return reply.status === 200;
  }

  async function replay(id: Identifier): Promise<{ status: number; notifications: Record<string, unknown>[]; body?: string }> {
    const client = await SseClient.open(`${server.url}/api/v1/replay`, { event_type: 'inj', identifier: id, from_id: '1' });
    if (client.status !== 200) return { status: client.status, notifications: [], body: client.errorBody };
    return { status: 200, notifications: notificationsOf(await client.rest()) };
  }

  /** A replay for `id` gets exactly its own notifications, and each time it was notified. */
  async function expectReplayIsolated(id: Identifier): Promise<void> {
    const result = await replay(id);
    if (!accepted.has(key(id))) {
      // Never stored: the value was refused at notify, so the filter must be refused too or match nothing of others.
      for (const cloudEvent of result.notifications) {
        const payload = (cloudEvent.data as Record<string, unknown>).payload;
        expect(payload, `replay ${key(id)} received ${String(payload)}`).toBe(key(id));
      }
      return;
    }
    expect(result.status, `replay ${key(id)}: ${result.body}`).toBe(200);
    expect(result.notifications.length, `replay ${key(id)}`).toBeGreaterThan(0);
    for (const cloudEvent of result.notifications) {
      const payload = (cloudEvent.data as Record<string, unknown>).payload;
      expect(payload, `replay for ${key(id)} received the notification of ${String(payload)}`).toBe(key(id));
      expect(identifierOf(cloudEvent)).toMatchObject({ destination: id.destination, class: id.class });
    }
  }

  it('replays of hostile single-field values receive only their own notifications', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(hostileValue, { minLength: 2, maxLength: 6 }), async (values) => {
        const ids = values.map((destination) => ({ destination, class: 'od' }));
        for (const id of ids) await notify(id);
        for (const id of ids) if (id.destination !== '*') await expectReplayIsolated(id);
      }),
      fcOptions(),
    );
  });

  it('token-boundary shifts (a.b + c versus a + b.c) never cross', async () => {
    const part = fc.array(fc.constantFrom('a', 'b', 'od', 'é', '>', '%', '2E'), { minLength: 1, maxLength: 3 }).map((p) => p.join(''));
    await fc.assert(
      fc.asyncProperty(part, part, part, async (p, q, r) => {
        const left: Identifier = { destination: `${p}.${q}`, class: r };
        const right: Identifier = { destination: p, class: `${q}.${r}` };
        const encodedLeft: Identifier = { destination: `${p}%2E${q}`, class: r };
        for (const id of [left, right, encodedLeft]) await notify(id);
        for (const id of [left, right, encodedLeft]) await expectReplayIsolated(id);
      }),
      fcOptions(),
    );
  });

  it('the fixed catalogue: wildcard look-alikes, escapes, whitespace, empty and unicode values', async () => {
    const values = [
      '>',
      'a.>',
      'a.*',
      '*a',
      'a*',
      '%',
      '%2A',
      '%252A',
      '%2E',
      'a%2Eb',
      'a.b',
      ' ',
      'a b',
      '\ta',
      '',
      '日本',
      '😀',
      'a\u0000b',
    ];
    for (const destination of values) await notify({ destination, class: 'od' });
    for (const destination of values) await expectReplayIsolated({ destination, class: 'od' });
    // `a.b` and `a%2Eb` are different values, and both must have been accepted and kept apart.
    expect(accepted.has(key({ destination: 'a.b', class: 'od' }))).toBe(true);
    expect(accepted.has(key({ destination: 'a%2Eb', class: 'od' }))).toBe(true);
    expect(accepted.has(key({ destination: '>', class: 'od' }))).toBe(true);
  });

  it('a live watch on a hostile value receives its own notification first, after every look-alike was published', async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileValue.filter((v) => v !== '*'),
        fc.uniqueArray(hostileValue, { minLength: 1, maxLength: 5 }),
        async (target, others) => {
          const id: Identifier = { destination: target, class: 'od' };
          const client = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'inj', identifier: id });
          if (client.status !== 200) {
            expect(client.status, client.errorBody).toBe(400);
            return;
          }
          try {
            expect((await client.nextSignificant())?.json.type).toBe('connection_established');
            for (const other of others) if (other !== target) await notify({ destination: other, class: 'od' });
            if (!(await notify(id))) return;
            const first = await client.nextSignificant();
            expect(
              (first?.json.data as Record<string, unknown> | undefined)?.payload,
              `watch ${key(id)} got ${JSON.stringify(first?.json)}`,
            ).toBe(key(id));
          } finally {
            client.close();
          }
        },
      ),
      fcOptions(),
    );
  });
});
