import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UUID_V4, postJson, request, type JsonResponse } from '../support/http.js';
import { BACKEND_KINDS, BackendUnderTest } from '../support/backends.js';
import { TEST_SCHEMAS } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, withoutHeartbeats } from '../support/sse-client.js';
import { frameLabel } from '../support/transcript.js';

/**
 * Admin endpoints against the real server process (docs/design/rules/api.md §8.3–§8.5, §10; docs/design/rules/backends.md §8; D1,
 * D11, D22, D28, D30), on both backends. Admin bodies keep the fixed order
 * `success, message, [notification_id,] request_id`, so they are compared as raw text.
 *
 * Both backends number each stream base on its own (D28), but a block's server is shared by its
 * tests, so sequences are read back from the CloudEvent ids a replay delivers rather than
 * assumed. The wipe blocks start every test from an emptied store.
 */

const POLYGON = '(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)';

/** The event types of TEST_SCHEMAS, byte-wise sorted as the D30 message lists them. */
const KNOWN_EVENT_TYPES = Object.keys(TEST_SCHEMAS).sort().join(', ');

function marsIdentifier(stream: string): Record<string, string> {
  return { class: 'od', expver: '1', domain: 'g', date: '20250706', time: '1200', stream, step: '1' };
}

/** One watch/replay filter and one notify identifier per event type used here. */
const STREAMS = {
  mars: { filter: { class: 'od' }, notify: (tag: string) => marsIdentifier(tag) },
  dissemination: { filter: { destination: '*', class: 'od' }, notify: (tag: string) => ({ destination: tag, class: 'od' }) },
  test_polygon: { filter: { polygon: '*' }, notify: () => ({ date: '20250706', time: '1200', polygon: POLYGON }) },
  extreme_event: {
    filter: { region: '*', run_time: '*', severity: '*' },
    notify: () => ({ region: 'north', run_time: '1200', severity: '4', anomaly: '1', polygon: POLYGON }),
  },
} as const;
type StreamName = keyof typeof STREAMS;

async function publish(server: RunningServer, eventType: StreamName, tag: string): Promise<void> {
  const identifier = STREAMS[eventType].notify(tag);
  const response = await postJson(`${server.url}/api/v1/notification`, {
    event_type: eventType,
    identifier,
    payload: { note: tag },
  });
  expect(response.status, response.text).toBe(200);
}

/** The CloudEvent ids a replay from sequence 0 delivers, optionally narrowed by extra filters. */
async function storedIds(server: RunningServer, eventType: StreamName, extra: Record<string, unknown> = {}): Promise<string[]> {
  const client = await SseClient.open(`${server.url}/api/v1/replay`, {
    event_type: eventType,
    identifier: { ...STREAMS[eventType].filter, ...extra },
    from_id: '0',
  });
  expect(client.status, client.errorBody).toBe(200);
  const events = withoutHeartbeats(await client.rest());
  const labels = events.map(frameLabel);
  expect(labels[0]).toBe('replay_started');
  expect(labels.slice(-2)).toEqual(['replay_completed', 'end_of_stream']);
  // What a delete or wipe removed is said as a history gap (D42): the ids are what is stored.
  return labels.slice(1, -2).filter((label) => label !== 'history_gap');
}

/** The history gaps a replay from the start says. */
async function gapsSaid(
  server: RunningServer,
  eventType: StreamName,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>[]> {
  const client = await SseClient.open(`${server.url}/api/v1/replay`, {
    event_type: eventType,
    identifier: { ...STREAMS[eventType].filter, ...extra },
    from_id: '0',
  });
  expect(client.status, client.errorBody).toBe(200);
  return withoutHeartbeats(await client.rest())
    .filter((event) => event.json.type === 'history_gap')
    .map((event) => event.json);
}

function sequenceOf(id: string | undefined): number {
  const match = /@([1-9][0-9]*)$/.exec(id ?? '');
  if (!match) throw new Error(`not a CloudEvent id: ${id}`);
  return Number(match[1]);
}

function del(server: RunningServer, path: string, init: { body?: string | Uint8Array; headers?: Record<string, string> } = {}) {
  return request(`${server.url}${path}`, { method: 'DELETE', ...init });
}

/**
 * The exact admin body: fixed key order, `request_id` equal to the header. A RegExp `message` is
 * for a message whose tail is not contractual (`<error>` in docs/design/rules/backends.md §8).
 */
function expectAdminBody(
  response: JsonResponse,
  status: number,
  fields: { success: boolean; message: string | RegExp; notification_id?: string },
) {
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toMatch(UUID_V4);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  let message: string;
  if (typeof fields.message === 'string') {
    message = fields.message;
  } else {
    expect(response.json.message).toMatch(fields.message);
    message = response.json.message as string;
  }
  const body =
    fields.notification_id === undefined
      ? { success: fields.success, message, request_id: requestId }
      : { success: fields.success, message, notification_id: fields.notification_id, request_id: requestId };
  expect(response.text).toBe(JSON.stringify(body));
  expect(response.status).toBe(status);
}

/** `n` consecutive sequences from `first`. */
function consecutive(first: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => first + i);
}

function idsOf(eventType: StreamName, sequences: readonly number[]): string[] {
  return sequences.map((sequence) => `${eventType}@${sequence}`);
}

type Seeded = Partial<Record<StreamName, number[]>>;

function seededOf(seeded: Seeded, eventType: StreamName): number[] {
  const sequences = seeded[eventType];
  if (sequences === undefined) throw new Error(`${eventType} was not seeded`);
  return sequences;
}

/**
 * Empties the store (wipe-all: the block's server is shared by its tests), publishes `plan` in
 * order and reads back the sequences each event type got.
 */
async function resetAndSeed(server: RunningServer, plan: readonly (readonly [StreamName, readonly string[]])[]): Promise<Seeded> {
  expect((await del(server, '/api/v1/admin/wipe/all')).status).toBe(200);
  for (const [eventType, tags] of plan) for (const tag of tags) await publish(server, eventType, tag);
  const seeded: Seeded = {};
  for (const [eventType, tags] of plan) {
    const sequences = (await storedIds(server, eventType)).map(sequenceOf);
    // Within one stream, notifications published one after the other get consecutive sequences on
    // both backends, whatever other streams were written in between (docs/design/rules/backends.md §4, D28).
    expect(sequences).toEqual(consecutive(sequences[0] ?? 0, tags.length));
    seeded[eventType] = sequences;
  }
  return seeded;
}

/**
 * The sequence the next notification of `eventType` gets after the seeding (and any wipe) — never a
 * wiped one (docs/design/rules/backends.md §8.4).
 */
function nextSequence(seeded: Seeded, eventType: StreamName): number {
  // docs/design/rules/backends.md §4, §7.11, D28: one sequence per stream on both backends, and a wipe keeps the
  // stream's last sequence, so numbering continues after that stream's own last notification.
  return Math.max(...seededOf(seeded, eventType)) + 1;
}

describe.each(BACKEND_KINDS)('on the %s backend', (kind) => {
  const backend = new BackendUnderTest(kind);
  beforeAll(() => backend.start());
  afterAll(() => backend.stop());

  describe('DELETE /api/v1/admin/notification/{id}', () => {
    let server: RunningServer;
    let counter = 0;
    /** A mars notification alone on its own topic; resolves to its sequence. */
    async function storeMars(): Promise<{ tag: string; sequence: number }> {
      counter += 1;
      const tag = `m${counter}`;
      await publish(server, 'mars', tag);
      const ids = await storedIds(server, 'mars', { stream: tag });
      expect(ids).toHaveLength(1);
      return { tag, sequence: sequenceOf(ids[0]) };
    }
    async function storeDiss(): Promise<{ tag: string; sequence: number }> {
      counter += 1;
      const tag = `D${counter}`;
      await publish(server, 'dissemination', tag);
      const ids = await storedIds(server, 'dissemination', { destination: tag });
      expect(ids).toHaveLength(1);
      expect(ids[0]).toMatch(/^dissemination@/);
      return { tag, sequence: sequenceOf(ids[0]) };
    }

    beforeAll(async () => {
      server = await startServer({ config: backend.config() });
    });
    afterAll(async () => {
      await server.stop();
    });

    it('deletes by the CloudEvent id <event_type>@<seq> and answers the fixed-order body', async () => {
      const { tag, sequence } = await storeMars();
      const response = await del(server, `/api/v1/admin/notification/mars@${sequence}`);
      expectAdminBody(response, 200, { success: true, message: 'Notification deleted', notification_id: `mars@${sequence}` });
      expect(await storedIds(server, 'mars', { stream: tag })).toEqual([]);
      // A replay over it is told (D42).
      expect(await gapsSaid(server, 'mars', { stream: tag })).toEqual([
        expect.objectContaining({ first_sequence: sequence, last_sequence: sequence, lost: 1, scope: 'request' }),
      ]);
    });

    it('a deleted notification no longer replays; its neighbours still do', async () => {
      const first = await storeMars();
      const middle = await storeMars();
      const last = await storeMars();
      expect((await del(server, `/api/v1/admin/notification/mars@${middle.sequence}`)).status).toBe(200);
      const remaining = await storedIds(server, 'mars');
      expect(remaining).toContain(`mars@${first.sequence}`);
      expect(remaining).toContain(`mars@${last.sequence}`);
      expect(remaining).not.toContain(`mars@${middle.sequence}`);
    });

    it('deleting the same notification again is 404 Notification not found', async () => {
      const { sequence } = await storeMars();
      expect((await del(server, `/api/v1/admin/notification/mars@${sequence}`)).status).toBe(200);
      const again = await del(server, `/api/v1/admin/notification/mars@${sequence}`);
      expectAdminBody(again, 404, { success: false, message: 'Notification not found', notification_id: `mars@${sequence}` });
    });

    it('never reuses the sequence of a deleted latest notification', async () => {
      const deleted = await storeMars();
      expect((await del(server, `/api/v1/admin/notification/mars@${deleted.sequence}`)).status).toBe(200);
      const next = await storeMars();
      expect(next.sequence).toBe(deleted.sequence + 1);
    });

    it('a sequence that was never assigned is 404 (D11)', async () => {
      // The mars stream exists and its last sequence is far below 999999 on both backends, so the
      // sequence, not the stream, is what is missing (docs/design/rules/backends.md §7.11).
      const { sequence } = await storeMars();
      expect(sequence).toBeLessThan(999_999);
      const response = await del(server, '/api/v1/admin/notification/mars@999999');
      expectAdminBody(response, 404, { success: false, message: 'Notification not found', notification_id: 'mars@999999' });
    });

    it('a sequence stored in another stream is 404 and stays stored', async () => {
      const marsLast = (await storeMars()).sequence;
      let diss = await storeDiss();
      // docs/design/rules/backends.md §4, D28: each stream is numbered on its own, so a dissemination sequence may
      // also be a mars one. Store until the diss sequence lies beyond the last mars sequence, so
      // that it certainly exists only in the other stream.
      while (diss.sequence <= marsLast) diss = await storeDiss();
      const response = await del(server, `/api/v1/admin/notification/mars@${diss.sequence}`);
      expectAdminBody(response, 404, { success: false, message: 'Notification not found', notification_id: `mars@${diss.sequence}` });
      expect(await storedIds(server, 'dissemination', { destination: diss.tag })).toEqual([`dissemination@${diss.sequence}`]);
    });

    it('a stream that does not exist is 404 (docs/design/rules/backends.md §7.11)', async () => {
      const { tag, sequence } = await storeMars();
      const response = await del(server, `/api/v1/admin/notification/nope@${sequence}`);
      expectAdminBody(response, 404, { success: false, message: 'Notification not found', notification_id: `nope@${sequence}` });
      expect(await storedIds(server, 'mars', { stream: tag })).toEqual([`mars@${sequence}`]);
    });

    it('deletes by the stream base <base>@<seq> (diss for dissemination)', async () => {
      const { tag, sequence } = await storeDiss();
      const response = await del(server, `/api/v1/admin/notification/diss@${sequence}`);
      expectAdminBody(response, 200, { success: true, message: 'Notification deleted', notification_id: `diss@${sequence}` });
      expect(await storedIds(server, 'dissemination', { destination: tag })).toEqual([]);
    });

    it('deletes by an event type whose base differs (dissemination@<seq>)', async () => {
      const { tag, sequence } = await storeDiss();
      const response = await del(server, `/api/v1/admin/notification/dissemination@${sequence}`);
      expectAdminBody(response, 200, { success: true, message: 'Notification deleted', notification_id: `dissemination@${sequence}` });
      expect(await storedIds(server, 'dissemination', { destination: tag })).toEqual([]);
    });

    it.each([['MARS'], ['Mars']])('matches the event type case-insensitively (%s@<seq>)', async (name) => {
      const { tag, sequence } = await storeMars();
      const response = await del(server, `/api/v1/admin/notification/${name}@${sequence}`);
      expectAdminBody(response, 200, { success: true, message: 'Notification deleted', notification_id: `${name}@${sequence}` });
      expect(await storedIds(server, 'mars', { stream: tag })).toEqual([]);
    });

    it.each([['Dissemination'], ['DISS']])('matches an aliased event type or base case-insensitively (%s@<seq>)', async (name) => {
      const { tag, sequence } = await storeDiss();
      const response = await del(server, `/api/v1/admin/notification/${name}@${sequence}`);
      expectAdminBody(response, 200, { success: true, message: 'Notification deleted', notification_id: `${name}@${sequence}` });
      expect(await storedIds(server, 'dissemination', { destination: tag })).toEqual([]);
    });

    it('accepts a sequence with a leading + and leading zeros', async () => {
      const { tag, sequence } = await storeMars();
      const id = `mars@+00${sequence}`;
      const response = await del(server, `/api/v1/admin/notification/${encodeURIComponent(id)}`);
      expectAdminBody(response, 200, { success: true, message: 'Notification deleted', notification_id: id });
      expect(await storedIds(server, 'mars', { stream: tag })).toEqual([]);
    });

    it.each([
      ['abc', "notification_id must be in '<stream>@<sequence>' format"],
      ['mars@', "notification_id must be in '<stream>@<sequence>' format"],
      ['@5', "notification_id must be in '<stream>@<sequence>' format"],
      ['mars@x', 'notification_id sequence must be a positive integer'],
      ['mars@-1', 'notification_id sequence must be a positive integer'],
      ['mars@1.5', 'notification_id sequence must be a positive integer'],
      ['mars@5@6', 'notification_id sequence must be a positive integer'],
      ['mars@18446744073709551616', 'notification_id sequence must be a positive integer'],
      ['mars@0', 'notification_id sequence must be greater than zero'],
      ['mars@000', 'notification_id sequence must be greater than zero'],
    ])('answers 400 for %j, echoing the raw id', async (id, message) => {
      const response = await del(server, `/api/v1/admin/notification/${encodeURIComponent(id)}`);
      expectAdminBody(response, 400, { success: false, message, notification_id: id });
    });

    it('parses the id trimmed but echoes it untrimmed', async () => {
      const response = await del(server, `/api/v1/admin/notification/${encodeURIComponent(' mars@0 ')}`);
      expectAdminBody(response, 400, {
        success: false,
        message: 'notification_id sequence must be greater than zero',
        notification_id: ' mars@0 ',
      });
    });
  });

  describe('DELETE /api/v1/admin/wipe/stream', () => {
    let server: RunningServer;
    const JSON_TYPE = { 'content-type': 'application/json' };
    const wipe = (body: string | Uint8Array, headers: Record<string, string> = JSON_TYPE) =>
      del(server, '/api/v1/admin/wipe/stream', { body, headers });

    let seeded: Seeded;
    const seededIds = (eventType: StreamName): string[] => idsOf(eventType, seededOf(seeded, eventType));

    beforeAll(async () => {
      server = await startServer({ config: backend.config() });
    });
    afterAll(async () => {
      await server.stop();
    });
    /** Three mars notifications, two dissemination, one test_polygon, on an emptied store. */
    beforeEach(async () => {
      seeded = await resetAndSeed(server, [
        ['mars', ['a', 'b', 'c']],
        ['dissemination', ['A', 'B']],
        ['test_polygon', ['p']],
      ]);
    });

    it('answers 200 "Successfully wiped stream: MARS" with the fixed-order body', async () => {
      const response = await wipe('{"stream_name":"MARS"}');
      expectAdminBody(response, 200, { success: true, message: 'Successfully wiped stream: MARS' });
    });

    it("removes the stream's history", async () => {
      expect(await storedIds(server, 'mars')).toEqual(seededIds('mars'));
      expect(seededIds('mars')).toHaveLength(3);
      expect((await wipe('{"stream_name":"MARS"}')).status).toBe(200);
      expect(await storedIds(server, 'mars')).toEqual([]);
      // A replay over it is told (D42): with the topics in memory, without them on JetStream.
      const [gap] = await gapsSaid(server, 'mars');
      expect(gap).toMatchObject({ type: 'history_gap', scope: backend.kind === 'in_memory' ? 'request' : 'stream' });
    });

    it('leaves other streams their history', async () => {
      expect((await wipe('{"stream_name":"MARS"}')).status).toBe(200);
      expect(await storedIds(server, 'dissemination')).toEqual(seededIds('dissemination'));
      expect(await storedIds(server, 'test_polygon')).toEqual(seededIds('test_polygon'));
    });

    it('stores new notifications afterwards, with sequence numbering continuing', async () => {
      expect((await wipe('{"stream_name":"MARS"}')).status).toBe(200);
      await publish(server, 'mars', 'd');
      expect(await storedIds(server, 'mars')).toEqual([`mars@${nextSequence(seeded, 'mars')}`]);
    });

    it('a live watch on the wiped stream keeps receiving new notifications', async () => {
      const client = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'mars', identifier: { class: 'od' } });
      try {
        expect((await client.next())?.json.type).toBe('connection_established');
        expect((await wipe('{"stream_name":"mars"}')).status).toBe(200);
        await publish(server, 'mars', 'd');
        const event = await client.nextSignificant();
        expect(event?.json.id).toBe(`mars@${nextSequence(seeded, 'mars')}`);
      } finally {
        client.close();
      }
    });

    it('accepts an event-type alias: dissemination wipes base diss (D22)', async () => {
      const response = await wipe('{"stream_name":"dissemination"}');
      expectAdminBody(response, 200, { success: true, message: 'Successfully wiped stream: dissemination' });
      expect(await storedIds(server, 'dissemination')).toEqual([]);
      expect(await storedIds(server, 'mars')).toEqual(seededIds('mars'));
    });

    it.each([['diss'], ['DISS'], ['Dissemination']])('accepts the base or the event type in any case (%s)', async (name) => {
      const response = await wipe(JSON.stringify({ stream_name: name }));
      expectAdminBody(response, 200, { success: true, message: `Successfully wiped stream: ${name}` });
      expect(await storedIds(server, 'dissemination')).toEqual([]);
      expect(await storedIds(server, 'mars')).toHaveLength(3);
    });

    it('accepts the base of an aliased polygon schema (POLYGON for test_polygon)', async () => {
      expect((await wipe('{"stream_name":"POLYGON"}')).status).toBe(200);
      expect(await storedIds(server, 'test_polygon')).toEqual([]);
    });

    it('a name that matches nothing is 404 listing the known event types, sorted; removes nothing (D30)', async () => {
      const response = await wipe('{"stream_name":"NOPE"}');
      expectAdminBody(response, 404, { success: false, message: `Stream not found: NOPE. Known event types: ${KNOWN_EVENT_TYPES}` });
      expect(await storedIds(server, 'mars')).toHaveLength(3);
      expect(await storedIds(server, 'dissemination')).toHaveLength(2);
    });

    it('does not treat a name as a prefix of a longer base (MAR is 404 and does not wipe mars)', async () => {
      const response = await wipe('{"stream_name":"MAR"}');
      expectAdminBody(response, 404, { success: false, message: `Stream not found: MAR. Known event types: ${KNOWN_EVENT_TYPES}` });
      expect(await storedIds(server, 'mars')).toHaveLength(3);
    });

    it('echoes the name as sent, even an odd one, a very long one cut to 256 characters, and stays 404 (D30, D33, D45)', async () => {
      for (const [name, echoed] of [
        ['mars.*', 'mars.*'],
        ['a/b', 'a/b'],
        [' MARS', ' MARS'],
        ['é'.repeat(300), `${'é'.repeat(256)}…(300 characters)`],
        ['X'.repeat(5000), `${'X'.repeat(256)}…(5000 characters)`],
      ]) {
        const response = await wipe(JSON.stringify({ stream_name: name }));
        expectAdminBody(response, 404, { success: false, message: `Stream not found: ${echoed}. Known event types: ${KNOWN_EVENT_TYPES}` });
      }
      expect(await storedIds(server, 'mars')).toHaveLength(3);
    });

    it('a configured event type with nothing ever stored is 200, not 404 (D30)', async () => {
      const response = await wipe('{"stream_name":"SENSOR_CLOUD"}');
      expectAdminBody(response, 200, { success: true, message: 'Successfully wiped stream: SENSOR_CLOUD' });
    });

    it('accepts a +json media type and a charset parameter, and ignores unknown body fields', async () => {
      expect((await wipe('{"stream_name":"MARS","extra":1}', { 'content-type': 'application/vnd.aviso+json' })).status).toBe(200);
      expect(await storedIds(server, 'mars')).toEqual([]);
      expect((await wipe('{"stream_name":"DISS"}', { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
      expect(await storedIds(server, 'dissemination')).toEqual([]);
    });

    it.each<[string, string | Uint8Array, Record<string, string>]>([
      ['no content type', new TextEncoder().encode('{"stream_name":"MARS"}'), {}],
      ['text/plain', '{"stream_name":"MARS"}', { 'content-type': 'text/plain' }],
      ['application/x-www-form-urlencoded', 'stream_name=MARS', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['malformed JSON', '{"stream_name":', JSON_TYPE],
      ['an empty body', '', JSON_TYPE],
      ['a body without stream_name', '{"name":"MARS"}', JSON_TYPE],
      ['a stream_name that is not a string', '{"stream_name":5}', JSON_TYPE],
      ['a JSON array', '["MARS"]', JSON_TYPE],
    ])('answers 400 in the admin shape for %s, and wipes nothing', async (_what, body, headers) => {
      const response = await wipe(body, headers);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(response.json)).toEqual(['success', 'message', 'request_id']);
      expect(response.json.success).toBe(false);
      expect(typeof response.json.message).toBe('string');
      expect((response.json.message as string).length).toBeGreaterThan(0);
      expect(response.json.request_id).toBe(response.headers.get('x-request-id'));
      expect(response.json.request_id).toMatch(UUID_V4);
      expect(await storedIds(server, 'mars')).toHaveLength(3);
    });
  });

  describe('DELETE /api/v1/admin/wipe/stream of schema-less streams (D30)', () => {
    const wipeOn = (server: RunningServer, name: string) =>
      del(server, '/api/v1/admin/wipe/stream', {
        body: JSON.stringify({ stream_name: name }),
        headers: { 'content-type': 'application/json' },
      });
    const notifyGeneric = async (server: RunningServer, eventType: string) => {
      const response = await postJson(`${server.url}/api/v1/notification`, { event_type: eventType, identifier: { k: 'v' }, payload: 1 });
      expect(response.status, response.text).toBe(200);
    };
    const replayGeneric = async (server: RunningServer, eventType: string) => {
      const client = await SseClient.open(`${server.url}/api/v1/replay`, { event_type: eventType, identifier: { k: 'v' }, from_id: '0' });
      expect(client.status, client.errorBody).toBe(200);
      // The wiped history is said as a gap (D42); the rest is what is stored.
      return withoutHeartbeats(await client.rest())
        .map(frameLabel)
        .slice(1, -2)
        .filter((label) => label !== 'history_gap');
    };

    it('with a schema, not strict: a generic stream is wiped in any case; an unknown one is 404 listing the schema', async () => {
      const server = await startServer({ config: backend.config({ notification_schema_strict: false }) });
      try {
        await notifyGeneric(server, 'generic_wipe');
        expectAdminBody(await wipeOn(server, 'GENERIC_WIPE'), 200, { success: true, message: 'Successfully wiped stream: GENERIC_WIPE' });
        expect(await replayGeneric(server, 'generic_wipe')).toEqual([]);
        expectAdminBody(await wipeOn(server, 'generic_never'), 404, {
          success: false,
          message: `Stream not found: generic_never. Known event types: ${KNOWN_EVENT_TYPES}`,
        });
      } finally {
        await server.stop();
      }
    });

    it('without any schema: a stored stream is wiped; an unknown one is 404 without a list', async () => {
      const config = backend.config();
      delete config.notification_schema;
      const server = await startServer({ config });
      try {
        await notifyGeneric(server, 'alpha');
        expectAdminBody(await wipeOn(server, 'alpha'), 200, { success: true, message: 'Successfully wiped stream: alpha' });
        expect(await replayGeneric(server, 'alpha')).toEqual([]);
        // Emptied, the stream still exists: wiping it again is still a success.
        expectAdminBody(await wipeOn(server, 'ALPHA'), 200, { success: true, message: 'Successfully wiped stream: ALPHA' });
        expectAdminBody(await wipeOn(server, 'beta'), 404, { success: false, message: 'Stream not found: beta' });
      } finally {
        await server.stop();
      }
    });
  });

  describe('DELETE /api/v1/admin/wipe/all', () => {
    let server: RunningServer;
    let seeded: Seeded;
    beforeAll(async () => {
      server = await startServer({ config: backend.config() });
    });
    afterAll(async () => {
      await server.stop();
    });
    /** One notification of each event type, on a store emptied by a wipe-all first. */
    beforeEach(async () => {
      seeded = await resetAndSeed(server, [
        ['mars', ['a']],
        ['dissemination', ['A']],
        ['test_polygon', ['p']],
        ['extreme_event', ['e']],
      ]);
    });

    it('answers 200 "Successfully wiped all data" with the fixed-order body', async () => {
      const response = await del(server, '/api/v1/admin/wipe/all');
      expectAdminBody(response, 200, { success: true, message: 'Successfully wiped all data' });
    });

    it('leaves every stream empty', async () => {
      for (const name of Object.keys(STREAMS) as StreamName[]) expect(await storedIds(server, name)).toHaveLength(1);
      expect((await del(server, '/api/v1/admin/wipe/all')).status).toBe(200);
      for (const name of Object.keys(STREAMS) as StreamName[]) expect(await storedIds(server, name)).toEqual([]);
    });

    it('stores new notifications afterwards, with sequence numbering continuing', async () => {
      expect((await del(server, '/api/v1/admin/wipe/all')).status).toBe(200);
      await publish(server, 'dissemination', 'B');
      expect(await storedIds(server, 'dissemination')).toEqual([`dissemination@${nextSequence(seeded, 'dissemination')}`]);
    });

    it('answers 405 for another method', async () => {
      const response = await request(`${server.url}/api/v1/admin/wipe/all`, { method: 'POST' });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toContain('DELETE');
      expect(await storedIds(server, 'mars')).toHaveLength(1);
    });
  });
});
