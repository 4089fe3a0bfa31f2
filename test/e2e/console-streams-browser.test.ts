import { connect, type Socket } from 'node:net';
import { hostname } from 'node:os';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoProblems, launchChromium, watchPage, type PageProblems } from '../support/browser.js';
import { LOCAL_REALM, signToken, trustedProxyAuth } from '../support/fake-auth-o-tron.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * The console's "Streams of the server" view (docs/console.md) in headless Chromium against the
 * real server process with authentication on: the streams other clients and the console itself
 * opened, in the table with their users and the counts per event type, refreshed while the view
 * is open and not while it is folded, sorted by lag and buffered bytes with a reader that stopped
 * reading on top, and a stream closed through the confirmation dialog, its panel showing the
 * operator's close. Every page is watched for console errors and failed or foreign requests.
 */

const MARS = { class: 'sl', expver: '0001', domain: 'g', date: '20250706', time: '12:00', stream: 'enfo', step: '1' };

let server: RunningServer;
let browser: Browser;
let admin: string;
let reader: string;

const token = (username: string, roles: string[]): Promise<string> =>
  signToken({ sub: username, username, realm: LOCAL_REALM, roles, attributes: {} });

beforeAll(async () => {
  [server, browser, admin, reader] = await Promise.all([
    startServer({
      config: serverConfig({
        auth: trustedProxyAuth({ auth_o_tron_url: 'http://127.0.0.1:9/' }),
        // The stalled reader below must stay open while the test looks at it, however much the
        // kernel's socket buffers take before the server has to hold bytes itself.
        watch_endpoint: { stall_timeout_sec: 300, max_buffered_bytes: 128 * 1024 * 1024, max_total_buffered_bytes: 256 * 1024 * 1024 },
      }),
    }),
    launchChromium(),
    token('root', ['admin']),
    token('alice', ['reader']),
  ]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function withConsole(
  expectedStatuses: readonly number[],
  body: (page: Page, problems: PageProblems) => Promise<void>,
  hash = '',
): Promise<void> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  try {
    const problems = watchPage(page, server.url, expectedStatuses);
    expect((await page.goto(`${server.url}/console/${hash}`, { waitUntil: 'load' }))?.status()).toBe(200);
    await page.locator('#event-type option').first().waitFor({ state: 'attached' });
    await body(page, problems);
  } finally {
    await page.close();
  }
}

/** Opens the view and waits for its first answer. */
async function openView(page: Page): Promise<void> {
  await Promise.all([
    page.waitForResponse((r) => r.url().includes('/api/v1/admin/streams')),
    page.locator('#server-streams > summary').click(),
  ]);
}

const rowIds = (page: Page): Promise<string[]> =>
  page.locator('#server-streams-rows tr[data-id]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id') ?? ''));
const cellOf = (page: Page, id: string, name: string): Promise<string> =>
  page.locator(`#server-streams-rows tr[data-id="${id}"] td.${name}`).innerText();

/** A watch opened by another client, outside the page. */
async function outsideWatch(body: Record<string, unknown>, bearer?: string): Promise<SseClient> {
  const client = await SseClient.open(`${server.url}/api/v1/watch`, body, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
  expect(client.status).toBe(200);
  expect((await client.next())?.json.type).toBe('connection_established');
  return client;
}

/** Opens a watch from the console's own form and returns its request id. */
async function consoleWatch(page: Page, values: Record<string, string>): Promise<string> {
  await page.selectOption('#event-type', 'dissemination');
  for (const [name, value] of Object.entries(values)) await page.fill(`#field-${name}`, value);
  await page.click('#watch');
  const panel = page.locator('#streams .stream').first();
  await panel.locator('.frame[data-label="opening"]').waitFor();
  return panel.locator('.request-id').innerText();
}

/**
 * A watch whose reader stopped reading: a raw HTTP/1.1 request on a socket that is paused, so
 * what the server sends piles up in its buffers and its oldest frame waits.
 */
async function stalledWatch(): Promise<{ socket: Socket; id: string }> {
  const body = JSON.stringify({ event_type: 'mars', identifier: { class: 'sl' } });
  const socket = connect(server.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(
    `POST /api/v1/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const head = await new Promise<string>((resolve) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (text.includes('connection_established')) {
        socket.off('data', onData);
        socket.pause();
        resolve(text);
      }
    };
    socket.on('data', onData);
  });
  const id = /x-request-id: ([0-9a-f-]{36})/i.exec(head)?.[1];
  if (!id) throw new Error(`no request id in ${head.slice(0, 200)}`);
  return { socket, id };
}

describe("the console's Streams of the server view in headless Chromium", () => {
  it('lists the streams of other clients and of the console, with users and counts, refreshed only while open', async () => {
    const alice = await outsideWatch({ event_type: 'mars', identifier: { class: 'od' } }, reader);
    const anonymous = await outsideWatch({ event_type: 'dissemination', identifier: { destination: 'ANY', class: 'od' } });
    try {
      await withConsole([], async (page, problems) => {
        await page.fill('#token', admin);
        const mine = await consoleWatch(page, { destination: 'CONSOLE', class: 'od' });
        expect(await page.locator('#server-streams-table').isVisible()).toBe(false);
        await openView(page);
        await expect.poll(() => rowIds(page)).toEqual([alice.headers.get('x-request-id'), anonymous.headers.get('x-request-id'), mine]);
        expect(await cellOf(page, mine, 'user')).toBe('root');
        expect(await cellOf(page, alice.headers.get('x-request-id') ?? '', 'user')).toBe('alice');
        expect(await cellOf(page, anonymous.headers.get('x-request-id') ?? '', 'user')).toBe('—');
        expect(await cellOf(page, mine, 'process')).toBe(`${hostname()}:${server.process.pid}`);
        expect(await cellOf(page, mine, 'route')).toBe('POST watch');
        expect(await cellOf(page, mine, 'filter')).toBe('class=od destination=CONSOLE');
        expect(await cellOf(page, mine, 'phase')).toBe('live');
        expect(await page.locator('#server-streams-counts li').allInnerTexts()).toEqual(['dissemination 2', 'mars 1']);
        expect(await page.locator('#server-streams-summary').innerText()).toBe('3 matching · 3 open in all');
        expect(await page.locator('#server-streams-not-answering').isHidden()).toBe(true);

        // Refreshed while open: a stream opened elsewhere appears, one that ends goes, without a click.
        const later = await outsideWatch({ event_type: 'mars', identifier: { class: 'rd' } });
        const laterId = later.headers.get('x-request-id') ?? '';
        await expect.poll(() => rowIds(page), { timeout: 5000 }).toContain(laterId);
        later.close();
        await expect.poll(() => rowIds(page), { timeout: 5000 }).not.toContain(laterId);

        // A count filters on its event type.
        await page.locator('#server-streams-counts li[data-event-type="mars"] button').click();
        await expect.poll(() => rowIds(page)).toEqual([alice.headers.get('x-request-id')]);
        expect(await page.locator('#server-streams-summary').innerText()).toBe('1 matching · 3 open in all');

        // Folded, it asks nothing more.
        await page.locator('#server-streams > summary').click();
        let asked = 0;
        page.on('request', (request) => (asked += request.url().includes('/api/v1/admin/streams') ? 1 : 0));
        await page.waitForTimeout(4500);
        expect(asked).toBe(0);
        expectNoProblems(problems);
      });
    } finally {
      alice.close();
      anonymous.close();
    }
  });

  it('sorts by lag and by buffered bytes: a reader that stopped reading comes first', async () => {
    const quick = await outsideWatch({ event_type: 'mars', identifier: { class: 'od' } });
    const quickId = quick.headers.get('x-request-id') ?? '';
    const stalled = await stalledWatch();
    try {
      // Notifications of 200 kB for a reader that takes nothing, until the kernel's socket buffers
      // are full and the server holds bytes for it (as the admin list says).
      const payload = 'x'.repeat(200_000);
      const held = async (): Promise<number> => {
        const response = await fetch(`${server.url}/api/v1/admin/streams?event_type=mars`, {
          headers: { authorization: `Bearer ${admin}` },
        });
        const listed = (await response.json()) as { streams: { id: string; buffered_bytes: number }[] };
        return listed.streams.find((s) => s.id === stalled.id)?.buffered_bytes ?? 0;
      };
      const publish = async (): Promise<void> => {
        const response = await fetch(`${server.url}/api/v1/notification`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
          body: JSON.stringify({ event_type: 'mars', identifier: MARS, payload }),
        });
        expect(response.status).toBe(200);
      };
      for (let i = 0; i < 400 && (await held()) === 0; i += 1) await publish();
      expect(await held()).toBeGreaterThan(0);
      // The first bytes the server holds sit in the socket's own buffer, already written; the
      // next frames wait in the stream's queue, and the oldest of those is the lag.
      for (let i = 0; i < 3; i += 1) await publish();
      await withConsole([], async (page, problems) => {
        await page.fill('#token', admin);
        await openView(page);
        await page.fill('#server-streams-event-type', 'mars');
        await page.locator('#server-streams-event-type').dispatchEvent('change');
        await expect.poll(() => rowIds(page)).toEqual([quickId, stalled.id]);
        await expect.poll(() => cellOf(page, stalled.id, 'buffered')).toMatch(/MiB|KiB/);
        await expect.poll(() => cellOf(page, stalled.id, 'lag')).not.toBe('0 ms');
        expect(await cellOf(page, quickId, 'buffered')).toBe('0 B');

        await page.click('#server-streams-table button[data-sort="lag"]');
        expect(await rowIds(page)).toEqual([stalled.id, quickId]);
        expect(await page.locator('th[data-sort-key="lag"]').getAttribute('aria-sort')).toBe('descending');
        // The order holds across refreshes.
        await page.waitForResponse((r) => r.url().includes('/api/v1/admin/streams'));
        expect(await rowIds(page)).toEqual([stalled.id, quickId]);
        await page.click('#server-streams-table button[data-sort="opened"]');
        expect(await rowIds(page)).toEqual([quickId, stalled.id]);
        await page.click('#server-streams-table button[data-sort="buffered"]');
        expect(await rowIds(page)).toEqual([stalled.id, quickId]);
        expect(await page.locator('th[data-sort-key="buffered"]').getAttribute('aria-sort')).toBe('descending');
        expect(await page.locator('th[data-sort-key="lag"]').getAttribute('aria-sort')).toBe('none');
        expectNoProblems(problems);
      });
    } finally {
      quick.close();
      stalled.socket.destroy();
    }
  });

  it('closes a stream only once confirmed: its panel shows the operator close, the row goes', async () => {
    await withConsole([], async (page, problems) => {
      await page.fill('#token', admin);
      const kept = await consoleWatch(page, { destination: 'KEPT', class: 'od' });
      const closed = await consoleWatch(page, { destination: 'CLOSED', class: 'od' });
      await openView(page);
      await expect.poll(() => rowIds(page)).toEqual([kept, closed]);

      const dialog = page.locator('#close-stream-dialog');
      await page.locator(`#server-streams-rows tr[data-id="${closed}"] button.close-stream`).click();
      expect(await dialog.isVisible()).toBe(true);
      expect(await page.locator('#close-stream-what').innerText()).toContain(closed);
      await page.click('#close-stream-cancel');
      expect(await dialog.isVisible()).toBe(false);
      expect(await rowIds(page)).toEqual([kept, closed]);

      await page.locator(`#server-streams-rows tr[data-id="${closed}"] button.close-stream`).click();
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().endsWith(`/api/v1/admin/streams/${closed}`)),
        page.click('#close-stream-confirm'),
      ]);
      await expect
        .poll(() => page.locator('#server-streams-result').innerText())
        .toMatch(new RegExp(`^Stream closed: ${closed} on ${hostname()}:${server.process.pid} · request [0-9a-f-]{36}$`));
      const panel = page.locator('#streams .stream', { has: page.locator('.request-id', { hasText: closed }) });
      await panel.locator('.frame[data-kind="close"]').waitFor();
      expect(await panel.locator('.frame[data-kind="close"] .summary').innerText()).toMatch(/^end_of_stream \(cause operator_closed\): /);
      expect(await panel.locator('.state').innerText()).toBe('closed');
      await expect.poll(() => rowIds(page)).toEqual([kept]);
      const keptPanel = page.locator('#streams .stream', { has: page.locator('.request-id', { hasText: kept }) });
      expect(await keptPanel.locator('.state').innerText()).toBe('open');

      // What the view shows is visible as laid out: the table and its rows take room on screen.
      const box = await page.locator('#server-streams-table').boundingBox();
      expect(box?.width).toBeGreaterThan(800);
      expect((await page.locator('#server-streams').screenshot()).subarray(1, 4).toString()).toBe('PNG');
      expectNoProblems(problems);
    });
  });

  it('opens from a link to #server-streams; shows a 401 without a token and a 403 with a reader token, in place', async () => {
    await withConsole(
      [401, 403],
      async (page, problems) => {
        expect(await page.locator('#server-streams').getAttribute('open')).toBe('');
        await expect.poll(() => page.locator('#server-streams-error strong').innerText()).toBe('401 UNAUTHORIZED');
        await page.fill('#token', reader);
        await Promise.all([page.waitForResponse((r) => r.url().includes('/api/v1/admin/streams')), page.click('#server-streams-refresh')]);
        await expect.poll(() => page.locator('#server-streams-error strong').innerText()).toBe('403 FORBIDDEN');
        expect(await page.locator('#server-streams-rows tr').count()).toBe(0);
        expectNoProblems(problems);
      },
      '#server-streams',
    );
  });
});
