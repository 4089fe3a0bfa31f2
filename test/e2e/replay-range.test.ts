import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID_V4, postJson } from '../support/http.js';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { trustedProxyAuth } from '../support/fake-auth-o-tron.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { withoutHeartbeats, type SseEvent } from '../support/sse-client.js';
import { SECOND, expectClose, expectControl, frameLabel } from '../support/transcript.js';
import { BOTH_ENDS, TO_DATE_EMPTY, TO_ID_EMPTY, invalidToDate, invalidToId } from '../support/replay-end-messages.js';
import { trackProcesses } from '../support/tracked-processes.js';

/**
 * Replay ranges (D25, docs/design/rules/reference-0.13.md §1) against the real server process on both backends:
 * `to_id`/`to_date`, `end_sequence`/`to_date` in every `replay_started`, the quota counted inside
 * the window, the resume of a dropped range the way the aviso client does it, and every
 * validation message with its place in the validation order.
 */

const TOPIC = 'diss.A.od';
const MATCHING = { event_type: 'dissemination', identifier: { destination: 'A', class: 'od' } };
const OTHER = { event_type: 'dissemination', identifier: { destination: 'B', class: 'od' } };

const { open } = trackProcesses();

async function notify(server: RunningServer, body: unknown): Promise<void> {
  const answer = await postJson(`${server.url}/api/v1/notification`, body);
  expect(answer.status, answer.text).toBe(200);
}

async function notifyMany(server: RunningServer, body: unknown, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await notify(server, body);
}

function sequenceOf(event: SseEvent): number {
  return Number(String(event.json.id).split('@')[1]);
}

/** A whole replay: its frames without heartbeats, the sequences it replayed, its opening frame. */
async function replay(server: RunningServer, body: Record<string, unknown>) {
  const client = await open(server, '/api/v1/replay', { ...MATCHING, ...body });
  expect(client.status, client.errorBody).toBe(200);
  const events = withoutHeartbeats(await client.rest());
  return {
    requestId: client.headers.get('x-request-id'),
    events,
    started: events[0],
    labels: events.map(frameLabel),
    sequences: events.filter((event) => event.event === 'replay').map(sequenceOf),
  };
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe.each(BACKEND_KINDS)('replay ranges on the %s backend', (kind) => {
  describe('to_id', () => {
    const backend = useBackend(kind);
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer({ config: backend.config({ watch_endpoint: { replay_batch_size: 2 } }) });
      await notifyMany(server, MATCHING, 10);
    });
    afterAll(async () => {
      await server.stop();
    });

    it('delivers [from_id, to_id] and reports end_sequence in replay_started', async () => {
      const result = await replay(server, { from_id: '3', to_id: '7' });
      expectControl(result.started, 'replay-control', {
        batch_size: 2,
        end_sequence: 7,
        from_date: null,
        from_sequence: 3,
        request_id: result.requestId,
        to_date: null,
        topic: TOPIC,
        type: 'replay_started',
      });
      expect(result.sequences).toEqual(range(3, 7));
      expect(result.labels.slice(-2)).toEqual(['replay_completed', 'end_of_stream']);
      expect(result.started?.data).toBe(
        `{"batch_size":2,"end_sequence":7,"from_date":null,"from_sequence":3,"request_id":"${result.requestId}",` +
          `"schema_version":"${String(result.started?.json.schema_version)}",` +
          `"timestamp":"${String(result.started?.json.timestamp)}","to_date":null,"topic":"${TOPIC}","type":"replay_started"}`,
      );
    });

    it('ends at H when to_id is beyond it, and reports H', async () => {
      const result = await replay(server, { from_id: '9', to_id: '18446744073709551615' });
      expect(result.started?.json.end_sequence).toBe(10);
      expect(result.sequences).toEqual([9, 10]);
    });

    it('reads to_id "0" as an empty range, and to_id equal to from_id as one notification', async () => {
      expect((await replay(server, { from_id: '0', to_id: '0' })).labels).toEqual(['replay_started', 'replay_completed', 'end_of_stream']);
      expect((await replay(server, { from_id: '4', to_id: '+4' })).sequences).toEqual([4]);
    });

    it('sends end_sequence and to_date as null without an end point, on /replay and on /watch', async () => {
      const plain = await replay(server, { from_id: '10' });
      expect(plain.started?.json).toMatchObject({ end_sequence: null, to_date: null, type: 'replay_started' });
      const watch = await open(server, '/api/v1/watch', { ...MATCHING, from_id: '10' });
      const first = await watch.next();
      expectControl(first, 'replay-control', {
        batch_size: 2,
        end_sequence: null,
        from_date: null,
        from_sequence: 10,
        request_id: watch.headers.get('x-request-id'),
        to_date: null,
        topic: TOPIC,
        type: 'replay_started',
      });
    });

    it('resumes a dropped range as the aviso client does: no duplicate, no gap', async () => {
      const n = 8;
      const k = 3;
      const first = await open(server, '/api/v1/replay', { ...MATCHING, from_id: '1', to_id: String(n) });
      const opening = await first.next();
      expect(opening?.json).toMatchObject({ type: 'replay_started', end_sequence: n });
      const seen: number[] = [];
      while (seen.length < k) {
        const event = await first.nextSignificant();
        if (event?.event === 'replay') seen.push(sequenceOf(event));
      }
      first.close();
      // Stored while the client was away: above the end it was told, so never part of the range.
      await notify(server, MATCHING);
      const endSequence = opening?.json.end_sequence as number;
      const resumed = await replay(server, { from_id: String((seen.at(-1) as number) + 1), to_id: String(endSequence) });
      expect(resumed.started?.json.end_sequence).toBe(n);
      expect(resumed.labels.slice(-2)).toEqual(['replay_completed', 'end_of_stream']);
      expect([...seen, ...resumed.sequences]).toEqual(range(1, n));
    });
  });

  describe('to_date', () => {
    const backend = useBackend(kind);
    let server: RunningServer;
    let cut: Date;
    beforeAll(async () => {
      server = await startServer({ config: backend.config() });
      await notifyMany(server, MATCHING, 3); // 1–3: stored before the cut
      await delay(20);
      cut = new Date();
      await delay(20);
      await notify(server, OTHER); // 4: after the cut, on a topic the replay does not match
      await notifyMany(server, MATCHING, 2); // 5–6
    });
    afterAll(async () => {
      await server.stop();
    });

    it('ends just before the first matching notification stored after to_date, echoing to_date to the second', async () => {
      const result = await replay(server, { from_id: '0', to_date: cut.toISOString() });
      expectControl(result.started, 'replay-control', {
        batch_size: 100,
        end_sequence: 4,
        from_date: null,
        from_sequence: 0,
        request_id: result.requestId,
        to_date: `${cut.toISOString().slice(0, 19)}Z`,
        topic: TOPIC,
        type: 'replay_started',
      });
      expect(result.started?.json.to_date).toMatch(SECOND);
      expect(result.sequences).toEqual([1, 2, 3]);
      expectClose(result.events.at(-1), 'end_of_stream', result.requestId, TOPIC);
      expect(result.labels.at(-2)).toBe('replay_completed');
    });

    it('takes a date range from from_date to to_date', async () => {
      const result = await replay(server, { from_date: '2000-01-01T00:00:00Z', to_date: cut.toISOString() });
      expect(result.started?.json).toMatchObject({ from_date: '2000-01-01T00:00:00Z', end_sequence: 4 });
      expect(result.sequences).toEqual([1, 2, 3]);
    });

    it('completes empty for an end in the year 1500, and ends at H for one in 2300', async () => {
      const early = await replay(server, { from_id: '1', to_date: '1500-01-01T00:00:00Z' });
      expect(early.labels).toEqual(['replay_started', 'replay_completed', 'end_of_stream']);
      expect(early.started?.json).toMatchObject({ end_sequence: 0, to_date: '1500-01-01T00:00:00Z' });
      const dated = await replay(server, { from_date: '1400-01-01 00:00:00', to_date: '1500-01-01 00:00:00' });
      expect(dated.labels).toEqual(['replay_started', 'replay_completed', 'end_of_stream']);
      const late = await replay(server, { from_id: '1', to_date: '2300-01-01T00:00:00Z' });
      expect(late.started?.json).toMatchObject({ end_sequence: 6, to_date: '2300-01-01T00:00:00Z' });
      expect(late.sequences).toEqual([1, 2, 3, 5, 6]);
      const unix = await replay(server, { from_id: '1', to_date: '10000000000' });
      expect(unix.started?.json).toMatchObject({ end_sequence: 6, to_date: '2286-11-20T17:46:40Z' });
    });
  });

  describe('the quota counts only the window', () => {
    const backend = useBackend(kind);
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer({ config: backend.config({ watch_endpoint: { max_historical_notifications: 3 } }) });
      await notifyMany(server, MATCHING, 6);
    });
    afterAll(async () => {
      await server.stop();
    });

    it('completes normally with exactly Q matches in the window', async () => {
      const result = await replay(server, { from_id: '1', to_id: '3' });
      expect(result.labels).toEqual([
        'replay_started',
        'dissemination@1',
        'dissemination@2',
        'dissemination@3',
        'replay_completed',
        'end_of_stream',
      ]);
      expect((await replay(server, { from_id: '4', to_id: '6' })).labels.at(-2)).toBe('replay_completed');
    });

    it('is truncated after Q with Q + 1 matches in the window', async () => {
      const result = await replay(server, { from_id: '1', to_id: '4' });
      expect(result.labels).toEqual([
        'replay_started',
        'dissemination@1',
        'dissemination@2',
        'dissemination@3',
        'notification_replay_limit_reached',
        'end_of_stream',
      ]);
      expect(result.events.at(-2)?.json.max_allowed).toBe(3);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Validation (docs/design/rules/reference-0.13.md §1). The server is backend-independent up to stream setup.

const REPLAY_NEEDS_CURSOR =
  'Replay endpoint requires either from_id or from_date parameter. Use from_id for sequence-based replay or from_date for time-based replay.';
const invalidFromId = (value: string) => `from_id must be a valid positive integer. Got: '${value}'. Valid examples: '1', '123', '9999'`;
const NOT_ON_WATCH = 'to_id and to_date are only supported for the replay endpoint, not /watch';
const NOT_ON_NOTIFY = 'to_id and to_date are only supported for the replay endpoint, not /notification';

type Path = 'watch' | 'replay' | 'notification';
const SHAPE: Record<Path, { code: string; error: string }> = {
  watch: { code: 'INVALID_WATCH_REQUEST', error: 'Invalid Watch Request' },
  replay: { code: 'INVALID_REPLAY_REQUEST', error: 'Invalid Replay Request' },
  notification: { code: 'INVALID_NOTIFICATION_REQUEST', error: 'Invalid Notification Request' },
};

/** The guarded schema needs authentication for reading and writing (trusted proxy: no credentials → 401). */
const GUARDED = {
  topic: { base: 'guarded', key_order: ['name'] },
  identifier: { name: { type: 'StringHandler', required: true } },
  auth: { required: true },
};

describe.each(BACKEND_KINDS)('end point validation on the %s backend', (kind) => {
  const backend = useBackend(kind);
  let server: RunningServer;
  beforeAll(async () => {
    const base = backend.config();
    server = await startServer({
      config: {
        ...base,
        notification_schema: { ...(base.notification_schema as object), guarded: GUARDED },
        auth: trustedProxyAuth({ auth_o_tron_url: 'http://127.0.0.1:9', jwt_secret: 'replay-range-secret' }),
      },
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  async function expectRejected(path: Path, body: Record<string, unknown>, message: string): Promise<void> {
    const answer = await postJson(`${server.url}/api/v1/${path}`, body);
    const requestId = answer.headers.get('x-request-id');
    expect(requestId).toMatch(UUID_V4);
    expect(answer.text).toBe(
      JSON.stringify({ code: SHAPE[path].code, details: message, error: SHAPE[path].error, message, request_id: requestId }),
    );
    expect(answer.status).toBe(400);
  }

  const replayBody = (fields: Record<string, unknown>) => ({ ...MATCHING, ...fields });

  it.each([
    [{ from_id: '1', to_id: '5', to_date: '2026-01-01T00:00:00Z' }, BOTH_ENDS],
    [{ from_id: '5', to_id: '4' }, 'to_id (4) must not be lower than from_id (5)'],
    [
      { from_date: '2026-01-02T00:00:00Z', to_date: '2026-01-01T00:00:00Z' },
      'to_date (2026-01-01T00:00:00+00:00) must not be earlier than from_date (2026-01-02T00:00:00+00:00)',
    ],
    [{ from_id: '1', to_id: '' }, TO_ID_EMPTY],
    [{ from_id: '1', to_id: '  ' }, TO_ID_EMPTY],
    [{ from_id: '1', to_id: 'soon' }, invalidToId('soon')],
    [{ from_id: '1', to_id: '-3' }, invalidToId('-3')],
    [{ from_id: '1', to_date: ' ' }, TO_DATE_EMPTY],
    [{ from_id: '1', to_date: 'yesterday' }, invalidToDate('yesterday')],
    [{ to_id: '5' }, REPLAY_NEEDS_CURSOR],
  ])('refuses the replay %j', async (fields, message) => {
    await expectRejected('replay', replayBody(fields), message);
  });

  it('never compares an end of the other kind with the start', async () => {
    const early = await open(server, '/api/v1/replay', replayBody({ from_id: '5', to_date: '2000-01-01T00:00:00Z' }));
    expect(early.status, early.errorBody).toBe(200);
    const late = await open(server, '/api/v1/replay', replayBody({ from_date: '2030-01-01T00:00:00Z', to_id: '0' }));
    expect(late.status, late.errorBody).toBe(200);
    expect((await late.next())?.json).toMatchObject({ end_sequence: 0, type: 'replay_started' });
  });

  it('treats a null end point as absent', async () => {
    const client = await open(server, '/api/v1/replay', replayBody({ from_id: '1', to_id: null, to_date: null }));
    expect(client.status, client.errorBody).toBe(200);
    expect((await client.next())?.json).toMatchObject({ end_sequence: null, to_date: null });
  });

  it('checks the end point after the spatial filters and the start cursor, before the identifier', async () => {
    await expectRejected(
      'replay',
      { event_type: 'test_polygon', identifier: { polygon: '(1,2,3,4,5,6,1,2)', point: '1,2' }, from_id: '1', to_id: 'soon' },
      'Cannot specify both identifier.polygon and identifier.point. Provide only one spatial filter.',
    );
    await expectRejected('replay', replayBody({ from_id: 'x', to_id: 'soon' }), invalidFromId('x'));
    await expectRejected('replay', replayBody({ to_id: 'soon' }), REPLAY_NEEDS_CURSOR);
    await expectRejected(
      'replay',
      { event_type: 'dissemination', identifier: { destination: 'A', colour: 'red' }, from_id: '1', to_id: 'soon' },
      invalidToId('soon'),
    );
  });

  it('checks stream authentication before the end point on /replay and /watch', async () => {
    for (const path of ['replay', 'watch']) {
      const answer = await postJson(`${server.url}/api/v1/${path}`, {
        event_type: 'guarded',
        identifier: { name: 'x' },
        from_id: '1',
        to_id: 'soon',
      });
      expect(answer.status, answer.text).toBe(401);
    }
  });

  it.each([{ to_id: '5' }, { to_date: '2026-01-01T00:00:00Z' }, { to_id: '' }, { from_id: '1', to_id: '5' }])(
    'refuses an end point on /watch: %j',
    async (fields) => {
      await expectRejected('watch', replayBody(fields), NOT_ON_WATCH);
    },
  );

  it('refuses the end point on /watch right after the start cursor, before the identifier', async () => {
    await expectRejected('watch', replayBody({ from_id: 'x', to_id: '5' }), invalidFromId('x'));
    await expectRejected(
      'watch',
      { event_type: 'dissemination', identifier: { destination: 'A', colour: 'red' }, to_id: '5' },
      NOT_ON_WATCH,
    );
  });

  it('refuses an end point on /notification after the event type gate, before the point check and stream auth', async () => {
    const unknown = await postJson(`${server.url}/api/v1/notification`, { event_type: 'nope', identifier: {}, to_id: '5' });
    expect(unknown.json.code).toBe('UNKNOWN_EVENT_TYPE');
    await expectRejected('notification', { ...MATCHING, to_id: '5' }, NOT_ON_NOTIFY);
    await expectRejected('notification', { ...MATCHING, to_date: 'whenever' }, NOT_ON_NOTIFY);
    await expectRejected(
      'notification',
      { event_type: 'test_polygon', identifier: { point: '1,2' }, payload: {}, to_id: '5' },
      NOT_ON_NOTIFY,
    );
    await expectRejected('notification', { event_type: 'guarded', identifier: { name: 'x' }, to_id: '5' }, NOT_ON_NOTIFY);
  });

  it('lists to_id and to_date among the allowed fields', async () => {
    const answer = await postJson(`${server.url}/api/v1/replay`, { ...MATCHING, from_id: '1', until: '5' });
    expect(answer.json.message).toBe(
      `Request contains unknown fields: Unknown field 'until' in request. Allowed fields: ["event_type", "identifier", "from_id", "from_date", "to_id", "to_date", "payload"]`,
    );
  });
});
