import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../support/backends.js';
import { call, queryOf, type Answer } from '../support/get-streams.js';
import { UUID_V4, postJson } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient, type SseEvent } from '../support/sse-client.js';
import { TRANSCRIPT_REQUEST, transcriptNotification } from '../support/transcript.js';

/**
 * `GET /api/v1/watch` and `GET /api/v1/replay` (docs/design/rules/browser.md §1) against the real server process:
 * the POST frames plus `id:`/`retry:` lines, `Last-Event-ID` resume and the 204 of a finished
 * replay. Their 400s: stream-get-validation.test.ts; the cookie: stream-get-auth.test.ts;
 * `EventSource` itself: stream-get-browser.test.ts.
 */

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ config: serverConfig() });
});
afterAll(async () => {
  await server.stop();
});

const get = (query: string, headers: Record<string, string> = {}): Promise<Answer> =>
  call(`${server.url}/api/v1/replay?${query}`, { headers });

async function notify(body: Record<string, unknown>): Promise<void> {
  const response = await postJson(`${server.url}/api/v1/notification`, body);
  expect(response.status, response.text).toBe(200);
}

/** The sequence of a CloudEvent id `<event_type>@<n>`. */
const sequenceOf = (event: SseEvent | undefined): number => Number(String(event?.json.id).split('@')[1]);

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
    expect(getEvents.map((event) => event.id)).toEqual(postEvents.map((event) => (event.json.specversion ? event.json.id : undefined)));
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
    expect(byGet.raw).toMatch(
      new RegExp(`\n\nid: test_polygon@${sequences[2]}\n\nid: test_polygon@${sequenceOf(fromGet)}\nevent: live-notification\n`),
    );
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
    const answer = await get(query, { 'last-event-id': lastEventId });
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
