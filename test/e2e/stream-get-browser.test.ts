import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { expectNoProblems, launchChromium, watchPage, type PageProblems } from '../support/browser.js';
import { queryOf } from '../support/get-streams.js';
import { postJson } from '../support/http.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';

/**
 * The browser's own `EventSource` against the GET streams (docs/design/rules/browser.md §1), in headless Chromium:
 * notifications arrive, a `max_duration_reached` close is followed by the browser's reconnect with
 * `Last-Event-ID` and neither a gap nor a duplicate, and a finished replay stops reconnecting.
 * The page is served by the server itself, so the streams are same-origin.
 */

/** Short enough that a test sees the close and the browser's reconnect (2 s `retry:` later). */
const MAX_DURATION_SEC = 2;
const MARS = { event_type: 'dissemination', identifier: { destination: 'page', class: 'od' } };

let server: RunningServer;
let browser: Browser;
let staticDir: string;

beforeAll(async () => {
  staticDir = mkdtempSync(join(tmpdir(), 'aviso-get-browser-'));
  writeFileSync(
    join(staticDir, 'index.html'),
    '<!doctype html><html><head><title>streams</title><link rel="icon" href="data:,"></head><body></body></html>',
  );
  [server, browser] = await Promise.all([
    startServer({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', static_files_path: staticDir },
        watch_endpoint: { connection_max_duration_sec: MAX_DURATION_SEC },
      }),
    }),
    launchChromium(),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
  rmSync(staticDir, { recursive: true, force: true });
});

let page: Page;
let problems: PageProblems;
/** Every request the page sent to a stream route, in order. */
let streamRequests: Request[];

beforeEach(async () => {
  page = await browser.newPage();
  problems = watchPage(page, server.url);
  streamRequests = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/v1/')) streamRequests.push(request);
  });
  expect((await page.goto(`${server.url}/`))?.status()).toBe(200);
});

afterEach(async () => {
  await page.close();
});

/** What the page saw of its one `EventSource`. */
interface Seen {
  readonly opens: number;
  readonly errors: number;
  readonly readyState: number;
  readonly frames: { readonly event: string; readonly lastEventId: string; readonly json: Record<string, unknown> }[];
}

/**
 * Opens `window.stream` on `path` and records every aviso frame it dispatches. Page code is text:
 * the test's TypeScript has no DOM types.
 */
async function openEventSource(path: string): Promise<void> {
  await page.evaluate(`(() => {
    const seen = { opens: 0, errors: 0, frames: [] };
    const source = new EventSource(${JSON.stringify(path)});
    for (const event of ['live-notification', 'replay', 'replay-control', 'heartbeat', 'connection-closing', 'error']) {
      source.addEventListener(event, (message) => {
        if (!(message instanceof MessageEvent)) return; // the EventSource's own error event
        seen.frames.push({ event, lastEventId: message.lastEventId, json: JSON.parse(message.data) });
      });
    }
    source.addEventListener('open', () => seen.opens++);
    source.addEventListener('error', (event) => {
      if (!(event instanceof MessageEvent)) seen.errors++;
    });
    Object.assign(window, { seen, stream: source });
  })()`);
}

async function seen(): Promise<Seen> {
  return page.evaluate<Seen>(`({ ...window.seen, readyState: window.stream.readyState })`);
}

/** Waits until the page's frames satisfy `condition` (a JS expression over `frames`). */
async function waitForFrames(condition: string, timeout = 15_000): Promise<void> {
  try {
    await page.waitForFunction(`(() => { const frames = window.seen.frames; return ${condition}; })()`, undefined, { timeout });
  } catch (error) {
    throw new Error(`${String(error)}; the page saw ${JSON.stringify(await seen())}`, { cause: error });
  }
}

async function notify(payload: unknown, identifier: Record<string, string> = MARS.identifier): Promise<void> {
  const response = await postJson(`${server.url}/api/v1/notification`, { ...MARS, identifier, payload });
  expect(response.status, response.text).toBe(200);
}

const sequence = (id: string): number => Number(id.split('@')[1]);

describe('EventSource on GET /api/v1/watch', () => {
  it('receives notifications, each with its CloudEvent id as lastEventId', async () => {
    await openEventSource(`/api/v1/watch?${queryOf(MARS)}`);
    await waitForFrames(`frames.some((f) => f.json.type === 'connection_established')`);
    await notify('first');
    await notify('second');
    await waitForFrames(`frames.filter((f) => f.json.specversion).length >= 2`);
    const notifications = (await seen()).frames.filter((frame) => frame.json.specversion);
    expect(notifications.map((frame) => frame.event)).toEqual(['live-notification', 'live-notification']);
    expect(notifications.map((frame) => (frame.json.data as { payload: unknown }).payload)).toEqual(['first', 'second']);
    for (const frame of notifications) expect(frame.lastEventId).toBe(frame.json.id);
    expectNoProblems(problems);
  });

  it('resumes after max_duration_reached with Last-Event-ID: no gap, no duplicate', async () => {
    await openEventSource(`/api/v1/watch?${queryOf(MARS)}`);
    await waitForFrames(`frames.some((f) => f.json.type === 'connection_established')`);
    // Publish through the close, the 2 s the browser waits and its reconnect: until the page has
    // seen the second connection's opening frame, and a few more after it.
    let published = 0;
    for (let afterReconnect = 0; afterReconnect < 5;) {
      await notify({ n: published++ });
      await new Promise((resolve) => setTimeout(resolve, 100));
      // The resumed watch replays what it missed, then `replay_completed`, then goes live.
      if ((await seen()).frames.some((frame) => frame.json.type === 'replay_completed')) afterReconnect++;
      if (published > 200) throw new Error('the browser never resumed');
    }
    await waitForFrames(`frames.filter((f) => f.json.specversion).length >= ${published}`);
    const { frames, opens } = await seen();
    const notifications = frames.filter((frame) => frame.json.specversion);
    const payloads = notifications.map((frame) => (frame.json.data as { payload: { n: number } }).payload.n);
    expect(payloads).toEqual([...Array(published).keys()]);
    const ids = notifications.map((frame) => sequence(String(frame.json.id)));
    expect(ids).toEqual(ids.map((_, i) => (ids[0] as number) + i));
    // Under load a second max duration may pass too; every close is one, each followed by a reconnect.
    expect(opens).toBeGreaterThanOrEqual(2);
    const closes = frames.filter((frame) => frame.event === 'connection-closing');
    expect(closes.length === opens - 1 || closes.length === opens).toBe(true);
    expect(new Set(closes.map((frame) => frame.json.reason))).toEqual(new Set(['max_duration_reached']));
    // The browser's own reconnect named the last notification it had; the server replayed from the next.
    expect(streamRequests.length).toBeGreaterThanOrEqual(opens);
    const resumedAt = await streamRequests[1]?.headerValue('last-event-id');
    const lastBeforeClose = notifications.filter((frame) => frames.indexOf(frame) < frames.indexOf(closes[0] as (typeof frames)[number]));
    expect(resumedAt).toBe(lastBeforeClose.at(-1)?.json.id);
    const resumedStart = frames.find((frame) => frame.json.type === 'replay_started');
    expect(resumedStart?.json.from_sequence).toBe(sequence(String(resumedAt)) + 1);
    expectNoProblems(problems);
  }, 60_000);
});

describe('EventSource on GET /api/v1/replay', () => {
  it('stops reconnecting once the replay finished: its reconnect is answered 204', async () => {
    await notify('stored 1');
    await notify('stored 2');
    // The replay's last matching notification is below its end: this one does not match it.
    await notify('another destination', { destination: 'elsewhere', class: 'od' });
    await openEventSource(`/api/v1/replay?${queryOf({ ...MARS, from_id: '1' })}`);
    await waitForFrames(`frames.some((f) => f.json.type === 'replay_completed')`);
    // EventSource reconnects after `retry:`; the 204 closes it for good (readyState CLOSED).
    await page.waitForFunction(`window.stream.readyState === EventSource.CLOSED`, undefined, { timeout: 20_000 });
    const { frames, opens } = await seen();
    expect(opens).toBe(1);
    expect(frames.filter((frame) => frame.event === 'connection-closing').map((frame) => frame.json.reason)).toEqual(['end_of_stream']);
    expect(streamRequests).toHaveLength(2);
    const [first, second] = await Promise.all(streamRequests.map(async (request) => (await request.response())?.status()));
    expect([first, second]).toEqual([200, 204]);
    const resumedAt = String(await streamRequests[1]?.headerValue('last-event-id'));
    const lastDelivered = frames.filter((frame) => frame.event === 'replay').at(-1)?.json.id;
    // The reconnect named the replay's end, past the last notification it delivered.
    expect(sequence(resumedAt)).toBeGreaterThan(sequence(String(lastDelivered)));
    expectNoProblems(problems);
  }, 30_000);
});
