import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeStream, expectErrorBody, listStreams, only, type ListedStream, type StreamsAnswer } from '../support/admin-streams.js';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { queryOf } from '../support/get-streams.js';
import { postJson, request } from '../support/http.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, type SseEvent } from '../support/sse-client.js';

/**
 * The admin streams list and close (D49, docs/api.md#get-apiv1adminstreams) against one real
 * server process on each backend: one stream of each kind, each listed once with its filter,
 * phase, progress and owner; the filters, the page bound and the counts; the 400s of the query;
 * an operator's close, which the client sees as `end_of_stream` with cause `operator_closed` and
 * resumes from its cursor. Replays fetch one notification per batch and then pause for a minute,
 * so a replaying stream stays replaying while the test looks at it.
 */

const MARS = (stream: string) => ({ class: 'od', expver: '1', domain: 'g', date: '20250706', time: '1200', stream, step: '1' });
const SEQUENCE_OF = (event: SseEvent | undefined): number => Number(/@([0-9]+)$/.exec(String(event?.json.id))?.[1]);
const LOOPBACK = /^127\.0\.0\.1$|^::ffff:127\.0\.0\.1$/;

async function publish(server: RunningServer, stream: string): Promise<void> {
  const response = await postJson(`${server.url}/api/v1/notification`, { event_type: 'mars', identifier: MARS(stream) });
  expect(response.status, response.text).toBe(200);
}

/** The next notification frame (heartbeats and control frames skipped). */
async function nextNotification(client: SseClient): Promise<SseEvent | undefined> {
  for (;;) {
    const event = await client.next();
    if (!event || event.json.specversion !== undefined) return event;
  }
}

function idOf(client: SseClient): string {
  expect(client.status, client.errorBody).toBe(200);
  return client.headers.get('x-request-id') as string;
}

describe.each(BACKEND_KINDS)('the admin streams list (%s)', (kind) => {
  const backend = useBackend(kind);
  let server: RunningServer;
  const clients: SseClient[] = [];
  const ids: Record<string, string> = {};
  const started = Date.now();
  const open = async (name: string, opening: Promise<SseClient>): Promise<SseClient> => {
    const client = await opening;
    clients.push(client);
    ids[name] = idOf(client);
    return client;
  };
  const post = (endpoint: string, body: Record<string, unknown>) => SseClient.open(`${server.url}/api/v1/${endpoint}`, body);
  const get = (endpoint: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    SseClient.openGet(`${server.url}/api/v1/${endpoint}?${queryOf(body)}`, headers);
  const mars = (identifier: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ event_type: 'mars', identifier, ...extra });
  let liveA: SseClient;
  let getB: SseClient;

  beforeAll(async () => {
    server = await startServer({
      config: backend.config({ watch_endpoint: { replay_batch_size: 1, replay_batch_delay_ms: 60_000 } }),
    });
    for (let i = 0; i < 3; i++) await publish(server, 'x');
    liveA = await open('liveA', post('watch', mars({ class: 'od', stream: 'a' })));
    getB = await open('getB', get('watch', mars({ class: 'od', stream: 'b' })));
    await open('replayC', post('replay', mars({ class: 'od' }, { from_id: '1' })));
    await open('replayGetD', get('replay', mars({ class: 'od' }, { from_id: '1' })));
    await open('watchE', post('watch', mars({ class: 'od' }, { from_id: '1' })));
    await open('watchF', post('watch', mars({ class: 'od', step: { gte: 1 } }, { from_id: '4' })));
    await open('dissG', post('watch', { event_type: 'dissemination', identifier: { destination: 'FOO', class: 'od' } }));
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await server.stop();
  });

  /** The list once the replays took their first batch and the watch from sequence 4 went live. */
  const settled = (): Promise<StreamsAnswer> =>
    eventually('every stream at its first pause', async () => {
      const answer = await listStreams(server);
      const replaying = ['replayC', 'replayGetD', 'watchE'].every(
        (name) => answer.streams.find((s) => s.id === ids[name])?.delivered === 1,
      );
      const live = answer.streams.find((s) => s.id === ids.watchF)?.phase === 'live';
      return replaying && live && answer;
    });

  it('lists every stream once, with its route, method, filter, phase, progress and owner', async () => {
    const answer = await settled();
    expect(answer.total).toBe(7);
    expect(answer.truncated).toBe(false);
    expect(answer.counts).toEqual({ dissemination: 1, mars: 6 });
    expect(answer.processes).toEqual({ answered: [expect.stringMatching(/^.+:[0-9]+$/)], not_answering: [], cluster_unreachable: false });
    // The process is named as its started line names it: <hostname>:<pid>.
    const startedLine = server.logs.find((line) => line.attributes?.['event.name'] === 'startup.server.started');
    expect(answer.processes.answered[0]).toBe(startedLine?.attributes?.process_id);
    expect(answer.processes.answered[0]).toMatch(new RegExp(`:${server.process.pid}$`));
    const expected: Record<string, Partial<ListedStream>> = {
      liveA: {
        route: 'watch',
        method: 'POST',
        filter: { class: 'od', stream: 'a' },
        topic_pattern: 'mars.od.*.*.*.*.a.*',
        phase: 'live',
        last_sequence: null,
        delivered: 0,
      },
      getB: {
        route: 'watch',
        method: 'GET',
        filter: { class: 'od', stream: 'b' },
        topic_pattern: 'mars.od.*.*.*.*.b.*',
        phase: 'live',
        last_sequence: null,
        delivered: 0,
      },
      replayC: {
        route: 'replay',
        method: 'POST',
        filter: { class: 'od' },
        topic_pattern: 'mars.od.*.*.*.*.*.*',
        phase: 'replaying',
        last_sequence: 1,
        delivered: 1,
      },
      replayGetD: { route: 'replay', method: 'GET', filter: { class: 'od' }, phase: 'replaying', last_sequence: 1, delivered: 1 },
      watchE: { route: 'watch', method: 'POST', filter: { class: 'od' }, phase: 'replaying', last_sequence: 1, delivered: 1 },
      watchF: {
        route: 'watch',
        method: 'POST',
        filter: { class: 'od', step: { gte: 1 } },
        phase: 'live',
        last_sequence: null,
        delivered: 0,
      },
      dissG: {
        route: 'watch',
        method: 'POST',
        event_type: 'dissemination',
        filter: { class: 'od', destination: 'FOO' },
        topic_pattern: 'diss.FOO.od',
        phase: 'live',
      },
    };
    for (const [name, fields] of Object.entries(expected)) {
      const stream = only(answer, ids[name] as string);
      expect(stream, name).toMatchObject({ event_type: 'mars', user: null, buffered_bytes: 0, lag_ms: 0, ...fields });
      expect(stream.process).toBe(answer.processes.answered[0]);
      expect(stream.client_address).toMatch(LOOPBACK);
      expect(stream.opened_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Date.parse(stream.opened_at)).toBeGreaterThanOrEqual(started - 1000);
    }
    const order = answer.streams.map((stream) => [stream.opened_at, stream.id].join(' '));
    expect(order).toEqual([...order].sort());
  });

  it('moves last_sequence and delivered of the live streams a notification reaches, not the others', async () => {
    await publish(server, 'a'); // sequence 4
    expect(SEQUENCE_OF(await nextNotification(liveA))).toBe(4);
    const answer = await eventually('the live watches to count it', async () => {
      const listed = await listStreams(server);
      return only(listed, ids.watchF as string).delivered === 1 && listed;
    });
    expect(only(answer, ids.liveA as string)).toMatchObject({ phase: 'live', last_sequence: 4, delivered: 1 });
    expect(only(answer, ids.watchF as string)).toMatchObject({ phase: 'live', last_sequence: 4, delivered: 1 });
    // Held while replaying, not yet the client's.
    expect(only(answer, ids.watchE as string)).toMatchObject({ phase: 'replaying', last_sequence: 1, delivered: 1 });
    expect(only(answer, ids.getB as string)).toMatchObject({ last_sequence: null, delivered: 0 });
  });

  it('filters by event type and user, bounds the page, and counts every open stream', async () => {
    const diss = await listStreams(server, 'event_type=dissemination');
    expect(diss.streams.map((stream) => stream.id)).toEqual([ids.dissG]);
    expect(diss).toMatchObject({ total: 1, truncated: false, counts: { dissemination: 1, mars: 6 } });
    const nobody = await listStreams(server, 'user=nobody');
    expect(nobody).toMatchObject({ streams: [], total: 0, truncated: false, counts: { dissemination: 1, mars: 6 } });
    const all = await listStreams(server, 'limit=1000');
    const two = await listStreams(server, 'limit=2');
    expect(two.streams.map((stream) => stream.id)).toEqual(all.streams.slice(0, 2).map((stream) => stream.id));
    expect(two).toMatchObject({ total: 7, truncated: true });
    const marsOne = await listStreams(server, 'event_type=mars&limit=1');
    expect(marsOne).toMatchObject({ total: 6, truncated: true });
    expect(marsOne.streams[0]?.id).toBe(all.streams.find((stream) => stream.event_type === 'mars')?.id);
    expect((await listStreams(server, 'event_type=MARS')).total).toBe(0);
  });

  it('refuses a limit out of 1..1000, an unknown parameter and a repeated one with 400 INVALID_QUERY', async () => {
    for (const query of [
      'limit=0',
      'limit=1001',
      'limit=abc',
      'limit=-1',
      'limit=1.5',
      'limit=',
      'limit=%201',
      'limits=5',
      'token=x',
      'user=a&user=b',
    ]) {
      const response = await request(`${server.url}/api/v1/admin/streams?${query}`);
      expectErrorBody(response, 400, 'INVALID_QUERY');
      expect(Object.keys(response.json)).toEqual(['code', 'error', 'message', 'request_id']);
    }
    const response = await request(`${server.url}/api/v1/admin/streams?limit=0`);
    expect(response.json.message).toBe("limit must be an integer from 1 to 1000, got '0'");
  });

  it('closes a watch: its client gets end_of_stream with cause operator_closed and resumes from its cursor', async () => {
    const id = ids.liveA as string;
    const from = server.logs.length;
    const response = await closeStream(server, id);
    expect(response.status, response.text).toBe(200);
    const process = (await listStreams(server)).processes.answered[0];
    expect(response.text).toBe(
      JSON.stringify({ success: true, message: 'Stream closed', stream_id: id, process, request_id: response.headers.get('x-request-id') }),
    );
    const rest = await liveA.rest();
    expect(rest.at(-1)).toMatchObject({
      event: 'connection-closing',
      json: { cause: 'operator_closed', message: 'An operator closed this stream', reason: 'end_of_stream', request_id: id },
    });
    expect(liveA.hasEnded).toBe(true);
    const performed = await server.waitForLog('admin.stream.close.performed', { from });
    expect(performed.attributes).toMatchObject({ request_id: id, stream_id: id, closed_by: null });
    const succeeded = await server.waitForLog('admin.stream.close.succeeded', { from });
    expect(succeeded.attributes).toMatchObject({
      request_id: response.headers.get('x-request-id'),
      stream_id: id,
      process,
      closed_by: null,
    });
    expect((await listStreams(server)).streams.map((stream) => stream.id)).not.toContain(id);

    const again = await closeStream(server, id);
    expect(again.status).toBe(404);
    expect(again.text).toBe(
      JSON.stringify({ success: false, message: 'Stream not found', stream_id: id, request_id: again.headers.get('x-request-id') }),
    );

    // What was published after the close reaches the client that resumes after its last sequence, 4.
    await publish(server, 'a'); // 5
    const resumed = await post('watch', mars({ class: 'od', stream: 'a' }, { from_id: '5' }));
    clients.push(resumed);
    expect(SEQUENCE_OF(await nextNotification(resumed))).toBe(5);
  });

  it('closes a GET watch; EventSource resumes with Last-Event-ID', async () => {
    await publish(server, 'b'); // 6
    const delivered = await nextNotification(getB);
    expect(delivered?.id).toBe('mars@6');
    expect((await closeStream(server, ids.getB as string)).status).toBe(200);
    expect((await getB.rest()).at(-1)?.json).toMatchObject({ cause: 'operator_closed', reason: 'end_of_stream' });
    await publish(server, 'b'); // 7
    const resumed = await get('watch', mars({ class: 'od', stream: 'b' }), { 'last-event-id': delivered?.id as string });
    clients.push(resumed);
    expect((await nextNotification(resumed))?.id).toBe('mars@7');
  });

  it('closes a replay while it replays', async () => {
    const id = ids.replayC as string;
    expect(only(await listStreams(server), id).phase).toBe('replaying');
    expect((await closeStream(server, id)).status).toBe(200);
    const client = clients[2] as SseClient;
    expect((await client.rest()).at(-1)?.json).toMatchObject({ cause: 'operator_closed', reason: 'end_of_stream', request_id: id });
  });
});
