import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWT_SECRET, LOCAL_REALM, signToken } from '../support/fake-auth-o-tron.js';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { UUID_V4, postJson } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, type SseEvent } from '../support/sse-client.js';
import { TRANSCRIPT_REQUEST, transcriptNotification } from '../support/transcript.js';

/**
 * `GET /api/v1/watch` and `GET /api/v1/replay` (browser.md §1) against the real server process:
 * the same answers as the POST forms, plus `id:`/`retry:` lines, `Last-Event-ID` resume and the
 * 204 of a finished replay. The `EventSource` behaviour itself is in stream-get-browser.test.ts.
 */

type Endpoint = 'watch' | 'replay';
const CODE: Record<Endpoint, string> = { watch: 'INVALID_WATCH_REQUEST', replay: 'INVALID_REPLAY_REQUEST' };
const LABEL: Record<Endpoint, string> = { watch: 'Invalid Watch Request', replay: 'Invalid Replay Request' };
const EXTREME = { region: 'north', run_time: '1200', severity: '4' };
const QUERY_FIELDS = '["event_type", "identifier", "from_id", "from_date", "to_id", "to_date"]';

const malformedLastEventId = (value: string): string =>
  `Last-Event-ID must be '<event_type>@<sequence>', the id of a notification of this stream. Got: '${value}'`;
const otherEventType = (value: string, eventType: string): string =>
  `Last-Event-ID '${value}' names another event type than this stream's '${eventType}'`;

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ config: serverConfig() });
});
afterAll(async () => {
  await server.stop();
});

/** The query a POST body becomes: `identifier` as JSON text, every other field as it is. */
function queryOf(body: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(body)) {
    params.append(key, key === 'identifier' ? JSON.stringify(value) : String(value));
  }
  return params.toString();
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** One request; an event stream, should one start, is cut off and reported as such. */
async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const controller = new AbortController();
  const response = await fetch(url, { ...init, signal: controller.signal });
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: response.status, headers: response.headers, text: '<an event stream started>' };
  }
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const post = (endpoint: Endpoint, body: unknown): Promise<Answer> =>
  call(`${server.url}/api/v1/${endpoint}`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
const get = (endpoint: Endpoint, query: string, headers: Record<string, string> = {}): Promise<Answer> =>
  call(`${server.url}/api/v1/${endpoint}?${query}`, { headers });

/** The body with its request id replaced, after checking it is the response's `X-Request-ID`. */
function withoutRequestId(answer: Answer): string {
  const requestId = answer.headers.get('x-request-id') ?? '';
  expect(requestId).toMatch(UUID_V4);
  if (answer.text.startsWith('{')) expect(JSON.parse(answer.text).request_id).toBe(requestId);
  return answer.text.replaceAll(requestId, '<request id>');
}

function expectShapeA(answer: Answer, endpoint: Endpoint, code: string, message: string): void {
  const requestId = answer.headers.get('x-request-id');
  expect(answer.text).toBe(JSON.stringify({ code, details: message, error: LABEL[endpoint], message, request_id: requestId }));
  expect(answer.status).toBe(400);
}

async function notify(body: Record<string, unknown>): Promise<void> {
  const response = await postJson(`${server.url}/api/v1/notification`, body);
  expect(response.status, response.text).toBe(200);
}

/** The sequence of a CloudEvent id `<event_type>@<n>`. */
const sequenceOf = (event: SseEvent | undefined): number => Number(String(event?.json.id).split('@')[1]);

describe('GET answers every invalid request exactly as POST does', () => {
  const cases: [string, Endpoint, Record<string, unknown>][] = [
    ['an unknown event type', 'watch', { event_type: 'no_such_type', identifier: {} }],
    ['a missing event_type', 'replay', { identifier: EXTREME, from_id: '1' }],
    ['an identifier that is not an object', 'watch', { event_type: 'extreme_event', identifier: 5 }],
    ['a malformed from_id', 'watch', { event_type: 'extreme_event', identifier: EXTREME, from_id: '-1' }],
    ['a malformed from_date', 'replay', { event_type: 'extreme_event', identifier: EXTREME, from_date: 'not-a-date' }],
    ['both start cursors', 'replay', { event_type: 'extreme_event', identifier: EXTREME, from_id: '1', from_date: '1740509903' }],
    ['a replay without a start cursor', 'replay', { event_type: 'extreme_event', identifier: EXTREME }],
    ['to_id on a watch', 'watch', { event_type: 'extreme_event', identifier: EXTREME, to_id: '5' }],
    ['to_date on a watch', 'watch', { event_type: 'extreme_event', identifier: EXTREME, to_date: '1740509903' }],
    ['to_id below from_id', 'replay', { event_type: 'extreme_event', identifier: EXTREME, from_id: '5', to_id: '3' }],
    ['a missing required identifier field', 'watch', { event_type: 'extreme_event', identifier: { region: 'north' } }],
    ['an enum value out of its list', 'watch', { event_type: 'extreme_event', identifier: { ...EXTREME, region: 'up' } }],
    ['an unknown identifier field', 'replay', { event_type: 'extreme_event', identifier: { ...EXTREME, colour: 'red' }, from_id: '0' }],
  ];

  it.each(cases)('%s (%s)', async (_name, endpoint, body) => {
    const [byPost, byGet] = await Promise.all([post(endpoint, body), get(endpoint, queryOf(body))]);
    expect(byPost.status).toBeGreaterThanOrEqual(400);
    expect(byGet.status).toBe(byPost.status);
    expect(withoutRequestId(byGet)).toBe(withoutRequestId(byPost));
  });

  it('answers a parameter given twice as POST answers a sequence in its place', async () => {
    const byGet = await get('watch', 'event_type=extreme_event&event_type=mars');
    const byPost = await post('watch', { event_type: ['extreme_event', 'mars'], identifier: {} });
    expect(byGet.status).toBe(400);
    expect(withoutRequestId(byGet)).toBe(withoutRequestId(byPost));
  });
});

describe('GET-only rules of the query', () => {
  it.each([['token'], ['access_token'], ['payload'], ['__proto__']])('refuses the parameter %j as an unknown field', async (name) => {
    for (const endpoint of ['watch', 'replay'] as const) {
      const answer = await get(endpoint, `event_type=mars&identifier=%7B%7D&${name}=abc`);
      expectShapeA(
        answer,
        endpoint,
        'UNKNOWN_FIELD',
        `Request contains unknown fields: Unknown field '${name}' in request. Allowed fields: ${QUERY_FIELDS}`,
      );
    }
  });

  it('answers identifier text that is not JSON with the POST body message, naming the parameter', async () => {
    for (const text of ['{"region":', 'north', '']) {
      const byPost = JSON.parse((await post('watch', text)).text) as { message: string };
      expect(byPost.message).toMatch(/^JSON parsing failed: /);
      const reason = byPost.message.slice('JSON parsing failed: '.length);
      const answer = await get('watch', `event_type=extreme_event&identifier=${encodeURIComponent(text)}`);
      expectShapeA(answer, 'watch', 'INVALID_JSON', `JSON parsing failed: query parameter 'identifier': ${reason}`);
    }
  });

  it('takes an omitted identifier as {}', async () => {
    const byGet = await get('watch', 'event_type=extreme_event');
    const byPost = await post('watch', { event_type: 'extreme_event', identifier: {} });
    expect(byGet.status).toBe(400);
    expect(withoutRequestId(byGet)).toBe(withoutRequestId(byPost));
  });

  it('has no HEAD form', async () => {
    const answer = await call(`${server.url}/api/v1/watch?event_type=mars`, { method: 'HEAD' });
    expect(answer.status).toBe(405);
  });
});

describe('Last-Event-ID', () => {
  const MARS = { event_type: 'mars', identifier: { class: 'od' } };

  it.each([['mars'], ['mars@'], ['mars@-1'], ['mars@01'], ['mars@1.5'], ['@5'], ['mars@ 5'], ['mars@18446744073709551615']])(
    'refuses the malformed value %j',
    async (value) => {
      for (const endpoint of ['watch', 'replay'] as const) {
        const answer = await get(endpoint, queryOf({ ...MARS, from_id: '1' }), { 'last-event-id': value });
        expectShapeA(answer, endpoint, CODE[endpoint], malformedLastEventId(value));
      }
    },
  );

  it('refuses the id of another event type', async () => {
    for (const endpoint of ['watch', 'replay'] as const) {
      const answer = await get(endpoint, queryOf({ ...MARS, from_id: '1' }), { 'last-event-id': 'extreme_event@5' });
      expectShapeA(answer, endpoint, CODE[endpoint], otherEventType('extreme_event@5', 'mars'));
    }
  });

  it('judges the URL first: an invalid URL is refused whatever the header says', async () => {
    const answer = await get('replay', queryOf({ ...MARS, from_id: 'x' }), { 'last-event-id': 'mars@3' });
    expectShapeA(
      answer,
      'replay',
      'INVALID_REPLAY_REQUEST',
      "from_id must be a valid positive integer. Got: 'x'. Valid examples: '1', '123', '9999'",
    );
  });

  it('is never read on POST', async () => {
    const answer = await call(`${server.url}/api/v1/replay`, {
      method: 'POST',
      body: JSON.stringify({ ...MARS, from_id: '1' }),
      headers: { 'last-event-id': 'not an id' },
    });
    expect(answer.status).toBe(200);
  });
});

/** Stored notifications of `test_polygon`, numbered by this server (sequences are per base). */
describe('frames of a GET stream', () => {
  let sequences: number[] = [];
  beforeAll(async () => {
    for (const note of ['a', 'b', 'c']) await notify(transcriptNotification(note));
    const client = await SseClient.open(`${server.url}/api/v1/replay`, { ...TRANSCRIPT_REQUEST, from_id: '0' });
    sequences = (await client.rest()).filter((event) => event.json.specversion).map(sequenceOf);
    expect(sequences).toHaveLength(3);
  });

  /** What the POST wire would be: the `retry:` block, `id:`-only blocks and `id:` lines removed. */
  function withoutBrowserLines(raw: string): string {
    return raw
      .replace(/^retry: 2000\n\n/, '')
      .replace(/^id: [^\n]*\n\n/gm, '')
      .replace(/^id: [^\n]*\n/gm, '');
  }

  function normalized(raw: string, requestId: string | null): string {
    return raw.replaceAll(requestId ?? '<none>', '<request id>').replace(/"timestamp":"[^"]*"/g, '"timestamp":"<t>"');
  }

  it('a replay: the POST frames, with an id per notification, retry first, and its end marked before replay_completed', async () => {
    const body = { ...TRANSCRIPT_REQUEST, from_id: String(sequences[0]) };
    const byPost = await SseClient.open(`${server.url}/api/v1/replay`, body);
    const byGet = await SseClient.openGet(`${server.url}/api/v1/replay?${queryOf(body)}`);
    expect(byGet.status).toBe(200);
    expect(byGet.headers.get('content-type')).toBe('text/event-stream');
    const [postEvents, getEvents] = await Promise.all([byPost.rest(), byGet.rest()]);
    expect(normalized(withoutBrowserLines(byGet.raw), byGet.headers.get('x-request-id'))).toBe(
      normalized(byPost.raw, byPost.headers.get('x-request-id')),
    );
    expect(byGet.raw.startsWith('retry: 2000\n\nevent: replay-control\n')).toBe(true);
    const last = sequences[2] as number;
    expect(byGet.raw).toContain(`id: test_polygon@${last}\n\nevent: replay-control\ndata: {"timestamp"`);
    expect(getEvents.map((event) => event.id)).toEqual(
      postEvents.map((event) => (event.json.specversion ? event.json.id : undefined)),
    );
    expect(getEvents.filter((event) => event.id).map((event) => event.id)).toEqual(sequences.map((n) => `test_polygon@${n}`));
    // POST carries none of it.
    expect(byPost.raw).not.toMatch(/^(id|retry):/m);
  });

  it('a watch: the POST frames, with H marked when it goes live and an id on each live notification', async () => {
    const byPost = await SseClient.open(`${server.url}/api/v1/watch`, TRANSCRIPT_REQUEST);
    const byGet = await SseClient.openGet(`${server.url}/api/v1/watch?${queryOf(TRANSCRIPT_REQUEST)}`);
    for (const client of [byPost, byGet]) {
      expect((await client.next())?.json.type).toBe('connection_established');
      expect((await client.next())?.event).toBe('heartbeat');
    }
    await notify(transcriptNotification('live'));
    const [fromPost, fromGet] = [await byPost.next(), await byGet.next()];
    byPost.close();
    byGet.close();
    expect(fromGet?.data).toBe(fromPost?.data);
    expect(fromPost?.id).toBeUndefined();
    expect(fromGet?.id).toBe(fromGet?.json.id);
    expect(sequenceOf(fromGet)).toBe((sequences[2] as number) + 1);
    expect(normalized(withoutBrowserLines(byGet.raw), byGet.headers.get('x-request-id'))).toBe(
      normalized(byPost.raw, byPost.headers.get('x-request-id')),
    );
    expect(byGet.raw).toMatch(new RegExp(`\n\nid: test_polygon@${sequences[2]}\n\nid: test_polygon@${sequenceOf(fromGet)}\nevent: live-notification\n`));
  });
});

describe('resuming with Last-Event-ID', () => {
  const DISS = { event_type: 'dissemination', identifier: { destination: 'browser', class: 'od' } };
  let ids: number[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 4; i++) await notify({ ...DISS, payload: { i } });
    const client = await SseClient.open(`${server.url}/api/v1/replay`, { ...DISS, from_id: '0' });
    ids = (await client.rest()).filter((event) => event.json.specversion).map(sequenceOf);
    expect(ids).toHaveLength(4);
  });

  async function notificationIds(client: SseClient): Promise<string[]> {
    return (await client.rest()).flatMap((event) => (event.id ? [event.id] : []));
  }

  it('starts a replay at n + 1, overriding from_id, and echoes that start', async () => {
    const [first, second] = ids as [number, number];
    const client = await SseClient.openGet(`${server.url}/api/v1/replay?${queryOf({ ...DISS, from_id: String(first) })}`, {
      'last-event-id': `dissemination@${second}`,
    });
    expect(client.status).toBe(200);
    const opening = await client.next();
    expect(opening?.json.type).toBe('replay_started');
    expect(opening?.json.from_sequence).toBe(second + 1);
    expect(await notificationIds(client)).toEqual(ids.slice(2).map((n) => `dissemination@${n}`));
  });

  it('overrides from_date in the URL', async () => {
    const client = await SseClient.openGet(`${server.url}/api/v1/replay?${queryOf({ ...DISS, from_date: '1740509903' })}`, {
      'last-event-id': `dissemination@${ids[2]}`,
    });
    expect(client.status).toBe(200);
    expect(await notificationIds(client)).toEqual([`dissemination@${ids[3]}`]);
  });

  it('turns a live watch into one that replays what it missed, then goes live', async () => {
    const client = await SseClient.openGet(`${server.url}/api/v1/watch?${queryOf(DISS)}`, {
      'last-event-id': `dissemination@${ids[1]}`,
    });
    expect(client.status).toBe(200);
    const seen: string[] = [];
    for (let event = await client.next(); event?.json.type !== 'replay_completed'; event = await client.next()) {
      if (event?.id) seen.push(event.id);
    }
    client.close();
    expect(seen).toEqual(ids.slice(2).map((n) => `dissemination@${n}`));
  });

  it('never answers 204 on a watch', async () => {
    const client = await SseClient.openGet(`${server.url}/api/v1/watch?${queryOf(DISS)}`, {
      'last-event-id': `dissemination@${ids[3]}`,
    });
    expect(client.status).toBe(200);
    client.close();
  });
});

describe('204 for a finished replay', () => {
  const DISS = { event_type: 'dissemination', identifier: { destination: 'finished', class: 'od' } };
  const OTHER = { event_type: 'dissemination', identifier: { destination: 'elsewhere', class: 'od' } };
  let ids: number[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) await notify({ ...DISS, payload: { i } });
    const client = await SseClient.open(`${server.url}/api/v1/replay`, { ...DISS, from_id: '0' });
    ids = (await client.rest()).filter((event) => event.json.specversion).map(sequenceOf);
  });

  async function expectNoContent(query: string, lastEventId: string): Promise<void> {
    const answer = await get('replay', query, { 'last-event-id': lastEventId });
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(answer.headers.get('x-request-id')).toMatch(UUID_V4);
  }

  it('at or past to_id', async () => {
    const query = queryOf({ ...DISS, from_id: String(ids[0]), to_id: String(ids[1]) });
    await expectNoContent(query, `dissemination@${ids[1]}`);
    await expectNoContent(query, `dissemination@${(ids[1] as number) + 1000}`);
    const resumed = await SseClient.openGet(`${server.url}/api/v1/replay?${query}`, { 'last-event-id': `dissemination@${ids[0]}` });
    expect(resumed.status).toBe(200);
  });

  it('at or past the end of a replay without to_id (H)', async () => {
    await notify({ ...OTHER, payload: 'after' });
    const query = queryOf({ ...DISS, from_id: '0' });
    const first = await SseClient.openGet(`${server.url}/api/v1/replay?${query}`);
    await first.rest();
    // The last notification it delivered is below its end: the end is marked after it.
    const marks = [...first.raw.matchAll(/^id: (dissemination@\d+)\n\n/gm)].map((match) => match[1]);
    expect(marks).toHaveLength(1);
    const end = marks[0] as string;
    expect(Number(end.split('@')[1])).toBeGreaterThan(ids[2] as number);
    await expectNoContent(query, end);
  });

  it('at or past the end a to_date resolves to', async () => {
    const query = queryOf({ ...DISS, from_id: '0', to_date: '2100-01-01T00:00:00Z' });
    const first = await SseClient.openGet(`${server.url}/api/v1/replay?${query}`);
    await first.rest();
    const end = [...first.raw.matchAll(/^id: (dissemination@\d+)\n\n/gm)].map((match) => match[1])[0] as string;
    await expectNoContent(query, end);
  });
});

describe('auth.browser_cookie', () => {
  const COOKIE = 'aviso_token';
  const PRIVATE = { event_type: 'private', identifier: { name: 'x' } };
  const schemas = {
    private: {
      topic: { base: 'private', key_order: ['name'] },
      identifier: { name: { type: 'StringHandler', required: true } },
      auth: { required: true, read_roles: { [LOCAL_REALM]: ['reader'] } },
    },
  };
  const auth = (extra: Record<string, unknown>) => ({
    enabled: true,
    mode: 'trusted_proxy',
    jwt_secret: JWT_SECRET,
    admin_roles: { [LOCAL_REALM]: ['admin'] },
    ...extra,
  });
  let withCookie: RunningServer;
  let withoutCookie: RunningServer;
  let token = '';
  beforeAll(async () => {
    [withCookie, withoutCookie] = await Promise.all([
      startServer({ config: serverConfig({ notification_schema: schemas, auth: auth({ browser_cookie: COOKIE }) }) }),
      startServer({ config: serverConfig({ notification_schema: schemas, auth: auth({}) }) }),
    ]);
    token = await signToken({ sub: 'reader', username: 'reader', realm: LOCAL_REALM, roles: ['reader'], attributes: {} });
  });
  afterAll(async () => {
    await Promise.all([withCookie?.stop(), withoutCookie?.stop()]);
  });

  const cookie = (value: string) => ({ cookie: `theme=dark; ${COOKIE}=${value}; other=1` });

  it('opens a GET stream with the token read from the cookie', async () => {
    for (const endpoint of ['watch', 'replay'] as const) {
      const client = await SseClient.openGet(
        `${withCookie.url}/api/v1/${endpoint}?${queryOf({ ...PRIVATE, from_id: '1' })}`,
        cookie(token),
      );
      expect(client.status, client.errorBody).toBe(200);
      client.close();
    }
  });

  it('refuses a GET stream without credentials, and one whose cookie holds a bad token', async () => {
    const query = queryOf(PRIVATE);
    expect((await call(`${withCookie.url}/api/v1/watch?${query}`)).status).toBe(401);
    expect((await call(`${withCookie.url}/api/v1/watch?${query}`, { headers: cookie('not-a-jwt') })).status).toBe(401);
  });

  it('lets an Authorization header win over the cookie', async () => {
    const answer = await call(`${withCookie.url}/api/v1/watch?${queryOf(PRIVATE)}`, {
      headers: { ...cookie(token), authorization: 'Bearer not-a-jwt' },
    });
    expect(answer.status).toBe(401);
  });

  it('ignores the cookie on POST streams and on notify', async () => {
    for (const endpoint of ['watch', 'replay'] as const) {
      const answer = await call(`${withCookie.url}/api/v1/${endpoint}`, {
        method: 'POST',
        body: JSON.stringify({ ...PRIVATE, from_id: '1' }),
        headers: cookie(token),
      });
      expect(answer.status).toBe(401);
    }
    const notified = await postJson(`${withCookie.url}/api/v1/notification`, { ...PRIVATE, payload: 1 }, cookie(token));
    expect(notified.status).toBe(401);
  });

  it('is off by default: the cookie is not read', async () => {
    const answer = await call(`${withoutCookie.url}/api/v1/watch?${queryOf(PRIVATE)}`, { headers: cookie(token) });
    expect(answer.status).toBe(401);
  });

  it('never takes a token from the URL', async () => {
    for (const name of ['token', 'access_token']) {
      const answer = await call(`${withCookie.url}/api/v1/watch?${queryOf(PRIVATE)}&${name}=${token}`);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text).code).toBe('UNKNOWN_FIELD');
    }
  });
});

describe.each(BACKEND_KINDS)('resume and 204 on the %s backend', (kind) => {
  const backend = useBackend(kind);
  const DISS = { event_type: 'dissemination', identifier: { destination: 'backend', class: 'od' } };
  let own: RunningServer;
  beforeAll(async () => {
    own = await startServer({ config: backend.config() });
    for (let i = 1; i <= 3; i++) {
      const response = await postJson(`${own.url}/api/v1/notification`, { ...DISS, payload: { i } });
      expect(response.status, response.text).toBe(200);
    }
  }, 30_000);
  afterAll(async () => {
    await own?.stop();
  });

  it('a completed replay names its end, and the reconnect with it is answered 204', async () => {
    const query = queryOf({ ...DISS, from_id: '1' });
    const first = await SseClient.openGet(`${own.url}/api/v1/replay?${query}`);
    expect((await first.rest()).flatMap((event) => (event.id ? [event.id] : []))).toEqual([
      'dissemination@1',
      'dissemination@2',
      'dissemination@3',
    ]);
    expect(first.raw).toContain('id: dissemination@3\n\nevent: replay-control\n');
    const again = await call(`${own.url}/api/v1/replay?${query}`, { headers: { 'last-event-id': 'dissemination@3' } });
    expect(again.status).toBe(204);
  });

  it('a watch resumed after n replays from n + 1, then delivers live notifications with ids', async () => {
    const client = await SseClient.openGet(`${own.url}/api/v1/watch?${queryOf(DISS)}`, { 'last-event-id': 'dissemination@1' });
    expect(client.status).toBe(200);
    const ids: string[] = [];
    for (let event = await client.next(); event?.json.type !== 'replay_completed'; event = await client.next()) {
      if (event?.id) ids.push(event.id);
    }
    const response = await postJson(`${own.url}/api/v1/notification`, { ...DISS, payload: { i: 4 } });
    expect(response.status).toBe(200);
    const live = await client.nextSignificant();
    client.close();
    expect(ids).toEqual(['dissemination@2', 'dissemination@3']);
    expect(live?.id).toBe('dissemination@4');
    expect(client.raw).toContain('\n\nid: dissemination@3\n\n');
  });
});
