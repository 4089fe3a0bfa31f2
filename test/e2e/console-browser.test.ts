import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoProblems, launchChromium, watchPage, type PageProblems } from '../support/browser.js';
import { LOCAL_REALM, signToken, trustedProxyAuth } from '../support/fake-auth-o-tron.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';

/**
 * The operator console (docs/design/rules/browser.md §4, docs/console.md) in headless Chromium against the real
 * server process: the form built from the schema, watches and replays read with fetch, the
 * publish button, errors shown in place, authentication and several streams at once. Every page
 * is watched for console errors and failed or foreign requests.
 */

/** "see it appear within a second" (docs/design/rules/browser.md §4). */
const APPEAR_WITHIN_MS = 1000;

const SECURE_SCHEMAS = {
  secure: {
    topic: { base: 'secure', key_order: ['name'] },
    identifier: { name: { type: 'StringHandler', required: true } },
    // Any authenticated reader; only administrators write.
    auth: { required: true },
  },
};

let open: RunningServer;
let secured: RunningServer;
let browser: Browser;

beforeAll(async () => {
  [open, secured] = await Promise.all([
    startServer({ config: serverConfig() }),
    startServer({
      config: serverConfig({
        notification_schema: SECURE_SCHEMAS,
        // auth_o_tron_url is never called in trusted_proxy mode: the tokens are signed here.
        auth: trustedProxyAuth({ auth_o_tron_url: 'http://127.0.0.1:9/' }),
        // A small history cap, to see notification_replay_limit_reached.
        watch_endpoint: { max_historical_notifications: 1 },
      }),
    }),
  ]);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([open?.stop(), secured?.stop()]);
});

async function withConsole(
  server: RunningServer,
  expectedStatuses: readonly number[],
  body: (page: Page, problems: PageProblems) => Promise<void>,
): Promise<void> {
  const page = await browser.newPage();
  try {
    const problems = watchPage(page, server.url, expectedStatuses);
    const response = await page.goto(`${server.url}/console/`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    // The schema has loaded once the event types are listed.
    await page.locator('#event-type option').first().waitFor({ state: 'attached' });
    await body(page, problems);
  } finally {
    await page.close();
  }
}

async function fill(page: Page, values: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(values)) await page.fill(`#field-${name}`, value);
}

/** Opens a stream from the form and returns its panel (the newest is first). */
async function startStream(page: Page, endpoint: 'watch' | 'replay'): Promise<Locator> {
  const before = await page.locator('#streams .stream').count();
  await page.click(`#${endpoint}`);
  await expect.poll(() => page.locator('#streams .stream').count()).toBe(before + 1);
  // The newest panel is first; its number keeps the locator on it when more are opened.
  const number = await page.locator('#streams .stream').first().getAttribute('data-stream');
  return page.locator(`#streams .stream[data-stream="${number}"]`);
}

/** Clicks the console's own publish button and waits for the server's answer. */
async function publish(page: Page): Promise<number> {
  const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/v1/notification')), page.click('#publish')]);
  return response.status();
}

function frames(panel: Locator, kind: string): Locator {
  return panel.locator(`.frame[data-kind="${kind}"]`);
}

describe('the console in headless Chromium', () => {
  it('builds the form from the schema: types, enum values, ranges, required marks, operators, geometry', async () => {
    await withConsole(open, [], async (page, problems) => {
      expect(await page.title()).toBe('Aviso console');
      const types = await page.locator('#event-type option').allInnerTexts();
      expect(types).toEqual(['dissemination', 'extreme_event', 'mars', 'sensor_cloud', 'test_polygon']);

      await page.selectOption('#event-type', 'extreme_event');
      const field = (name: string) => page.locator(`.field[data-field="${name}"]`);
      await field('severity').waitFor();
      expect(await field('severity').locator('.hint').innerText()).toBe('Int · range [1, 7]');
      expect(await field('severity').locator('.required').count()).toBe(1);
      expect(await field('anomaly').locator('.required').count()).toBe(0);
      expect(
        await field('severity')
          .locator('select.operator option')
          .evaluateAll((options) => options.map((o) => (o as { value: string }).value)),
      ).toEqual(['value', 'eq', 'in', 'gt', 'gte', 'lt', 'lte', 'between']);
      expect(await field('region').locator('select.operator option').count()).toBe(3);
      expect(
        await field('region')
          .locator('datalist option')
          .evaluateAll((options) => options.map((o) => (o as { value: string }).value)),
      ).toEqual(['north', 'south', 'east', 'west']);
      expect(await field('run_time').locator('select.operator').count()).toBe(0);
      // A polygon schema takes a polygon and, on watch/replay, a point.
      expect(await field('polygon').locator('textarea').count()).toBe(1);
      expect(await field('point').locator('textarea').count()).toBe(1);

      // The commands follow the form.
      await fill(page, { region: 'north', run_time: '12', severity: '5' });
      await page.selectOption('.field[data-field="severity"] select.operator', 'gte');
      expect(await page.locator('#curl-command').innerText()).toBe(
        `curl -N -X POST ${open.url}/api/v1/watch -H 'Content-Type: application/json' -d '{"event_type":"extreme_event","identifier":{"region":"north","run_time":"12","severity":{"gte":5}}}'`,
      );
      expect(await page.locator('#aviso-command').innerText()).toBe(
        `aviso --base-url ${open.url} listen --event extreme_event --identifiers '{"region":"north","run_time":"12","severity":{"gte":5}}'`,
      );
      await page.check('input[name="command-for"][value="notify"]');
      expect(await page.locator('#curl-command').innerText()).toContain(`${open.url}/api/v1/notification`);
      expectNoProblems(problems);
    });
  });

  it('watches live and shows a notification published from its own button within a second', async () => {
    await withConsole(open, [], async (page, problems) => {
      await page.selectOption('#event-type', 'dissemination');
      await fill(page, { class: 'od', destination: 'live-1' });
      const panel = await startStream(page, 'watch');
      await frames(panel, 'lifecycle').filter({ hasText: 'opening' }).waitFor();
      expect(await panel.locator('.state').innerText()).toBe('open');
      expect(await panel.locator('.request-id').innerText()).toMatch(/^[0-9a-f-]{36}$/);

      expect(await publish(page)).toBe(200);
      await frames(panel, 'notification').first().waitFor({ timeout: APPEAR_WITHIN_MS });
      const notification = frames(panel, 'notification').first();
      expect(await notification.locator('.badge').innerText()).toBe('LIVE');
      const cloudEvent = JSON.parse(await notification.locator('pre').innerText()) as {
        id: string;
        data: { identifier: Record<string, string> };
      };
      expect(cloudEvent.id).toMatch(/^dissemination@\d+$/);
      expect(await notification.locator('.summary').innerText()).toBe(cloudEvent.id);
      expect(cloudEvent.data.identifier).toEqual({ class: 'od', destination: 'live-1' });
      expect(await page.locator('#publish-result').innerText()).toMatch(/^Published at /);
      // Heartbeats and the opening frame are lifecycle frames, listed below the notification.
      expect(await panel.locator('.frame').first().getAttribute('data-kind')).toBe('notification');
      expect(await panel.locator('.counter').innerText()).toMatch(/^1 notification · \d+ frames$/);

      // Paused, frames wait; resumed, they are shown; clear empties the list.
      await panel.locator('button.pause').click();
      await publish(page);
      await expect.poll(() => panel.locator('.counter').innerText()).toMatch(/^2 notifications/);
      expect(await frames(panel, 'notification').count()).toBe(1);
      expect(await panel.locator('button.pause').innerText()).toMatch(/^Resume \(\d+ waiting\)$/);
      await panel.locator('button.pause').click();
      expect(await frames(panel, 'notification').count()).toBe(2);
      await panel.locator('button.clear').click();
      expect(await panel.locator('.frame').count()).toBe(0);
      expectNoProblems(problems);
    });
  });

  it('publishes several pasted notifications in one request, and names the one not stored', async () => {
    await withConsole(open, [207], async (page, problems) => {
      await page.selectOption('#event-type', 'dissemination');
      await fill(page, { class: 'od', destination: 'batch-1' });
      const panel = await startStream(page, 'watch');
      await frames(panel, 'lifecycle').filter({ hasText: 'opening' }).waitFor();
      const item = (step: number): Record<string, unknown> => ({
        event_type: 'dissemination',
        identifier: { class: 'od', destination: 'batch-1' },
        payload: { step },
      });
      const refused = { event_type: 'dissemination', identifier: { destination: 'batch-1' } };
      await page.locator('details.batch summary').click();
      await page.fill('#batch-items', [item(1), refused, item(2)].map((one) => JSON.stringify(one)).join('\n'));
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/v1/notification/batch')),
        page.click('#publish-batch'),
      ]);
      expect(response.status()).toBe(207);
      expect(await page.locator('#batch-result strong').innerText()).toBe('2 stored, 1 not stored');
      expect(await page.locator('#batch-result li').allInnerTexts()).toEqual([
        "#1 INVALID_NOTIFICATION_REQUEST: Required field 'class' missing for notify operation",
      ]);
      // Both stored notifications reach the open watch, in the order they were pasted.
      await expect.poll(() => frames(panel, 'notification').count(), { timeout: APPEAR_WITHIN_MS }).toBe(2);
      const steps = (await frames(panel, 'notification').locator('pre').allInnerTexts()).map(
        (text) => (JSON.parse(text) as { data: { payload: { step: number } } }).data.payload.step,
      );
      expect(steps.sort()).toEqual([1, 2]);
      expectNoProblems(problems);
    });
  });

  it('shows a frame that waited out a pause with the time it arrived, not the time of Resume', async () => {
    await withConsole(open, [], async (page, problems) => {
      await page.selectOption('#event-type', 'dissemination');
      await fill(page, { class: 'od', destination: 'paused-time' });
      const panel = await startStream(page, 'watch');
      await frames(panel, 'lifecycle').filter({ hasText: 'opening' }).waitFor();

      // The page's clock stands at `arrival` while the notification comes in, at `resumed` on Resume.
      const arrival = Date.UTC(2026, 0, 15, 10, 0, 0);
      const resumed = Date.UTC(2026, 0, 15, 13, 30, 0);
      await panel.locator('button.pause').click();
      await page.clock.setFixedTime(arrival);
      expect(await publish(page)).toBe(200);
      await expect.poll(() => panel.locator('.counter').innerText()).toMatch(/^1 notification /);
      await page.clock.setFixedTime(resumed);
      await panel.locator('button.pause').click();

      const shown = await frames(panel, 'notification').locator('time').innerText();
      const [arrivalText, resumedText] = await page.evaluate(
        (times) => times.map((time) => new Date(time).toLocaleTimeString()),
        [arrival, resumed],
      );
      expect(shown).toBe(arrivalText);
      expect(shown).not.toBe(resumedText);
      expectNoProblems(problems);
    });
  });

  it('replays a range and shows replay_started, the notifications, replay_completed and the close', async () => {
    await withConsole(open, [], async (page, problems) => {
      await page.selectOption('#event-type', 'dissemination');
      await fill(page, { class: 'rd', destination: 'range' });
      for (let i = 0; i < 3; i += 1) expect(await publish(page)).toBe(200);

      const watch = await startStream(page, 'watch');
      await page.selectOption('#start', 'from_id');
      await page.fill('#start-value', '0');
      // The newest three are this test's; find their sequences from a replay of everything.
      const all = await startStream(page, 'replay');
      await frames(all, 'close').waitFor();
      const ids = await frames(all, 'notification').locator('.summary').allInnerTexts();
      const sequences = ids.map((id) => Number(id.split('@')[1])).sort((a, b) => a - b);
      expect(sequences.length).toBeGreaterThanOrEqual(3);
      const [first, second] = sequences.slice(-3) as [number, number];

      await page.fill('#start-value', String(first));
      await page.selectOption('#end', 'to_id');
      await page.fill('#end-value', String(second));
      expect(await page.locator('#aviso-command').innerText()).toContain('listen');
      await page.check('input[name="command-for"][value="replay"]');
      expect(await page.locator('#aviso-command').innerText()).toBe(
        `aviso --base-url ${open.url} replay --event dissemination --identifiers '{"class":"rd","destination":"range"}' --from ${first - 1} --until ${second}`,
      );
      const range = await startStream(page, 'replay');
      await frames(range, 'close').waitFor();
      const labels = await range
        .locator('.frame')
        .evaluateAll((items) => items.map((item) => (item as { dataset: { label: string } }).dataset.label));
      // Newest first.
      expect(labels.filter((label) => label !== 'heartbeat')).toEqual([
        'closing',
        'replay completed',
        'replay',
        'replay',
        'replay started',
      ]);
      expect(await range.locator('.frame[data-label="replay started"] .summary').innerText()).toBe(
        `from #${first} to #${second}, batches of 100`,
      );
      expect(await frames(range, 'notification').locator('.summary').allInnerTexts()).toEqual([
        `dissemination@${second}`,
        `dissemination@${first}`,
      ]);
      expect(await frames(range, 'close').locator('.summary').innerText()).toBe('end_of_stream: Stream completed');
      expect(await range.locator('.state').innerText()).toBe('closed');
      // The live watch opened before is still open.
      expect(await watch.locator('.state').innerText()).toBe('open');
      expectNoProblems(problems);
    });
  });

  it('watches from a date: the history first, then live', async () => {
    await withConsole(open, [], async (page, problems) => {
      await page.selectOption('#event-type', 'dissemination');
      await fill(page, { class: 'od', destination: 'dated' });
      expect(await publish(page)).toBe(200);
      await page.selectOption('#start', 'from_date');
      await page.fill('#start-value', '2000-01-01T00:00:00Z');
      const panel = await startStream(page, 'watch');
      await panel.locator('.frame[data-label="replay completed"]').waitFor();
      expect(await panel.locator('.frame[data-label="replay started"] .summary').innerText()).toBe(
        'from 2000-01-01T00:00:00Z, batches of 100',
      );
      expect(await frames(panel, 'notification').locator('.badge').allInnerTexts()).toEqual(['REPLAY']);
      expect(await publish(page)).toBe(200);
      await expect
        .poll(() => frames(panel, 'notification').locator('.badge').allInnerTexts(), { timeout: APPEAR_WITHIN_MS })
        .toEqual(['LIVE', 'REPLAY']);
      expectNoProblems(problems);
    });
  });

  it("shows the server's 400 message in place, for a stream and for a publish", async () => {
    await withConsole(open, [400], async (page, problems) => {
      await page.selectOption('#event-type', 'mars');
      await fill(page, { class: 'od', step: '5000000' });
      await page.selectOption('.field[data-field="step"] select.operator', 'gte');
      const panel = await startStream(page, 'watch');
      const error = panel.locator('.error-box');
      await error.waitFor();
      expect(await error.locator('strong').innerText()).toBe('400 INVALID_WATCH_REQUEST');
      expect(await error.locator('.message').innerText()).toBe(
        "Field 'step' constraint value 5000000 is outside allowed range [0, 100000]",
      );
      expect(await panel.locator('.state').innerText()).toBe('refused');
      expect(await panel.locator('.request-id').innerText()).toMatch(/^[0-9a-f-]{36}$/);

      expect(await publish(page)).toBe(400);
      expect(await page.locator('#publish-result strong').innerText()).toBe('400 INVALID_NOTIFICATION_REQUEST');
      expect(await page.locator('#publish-result .message').innerText()).toBe("Required field 'date' missing for notify operation");
      // The page is still usable: the form and its commands are there.
      expect(await page.locator('#curl-command').innerText()).toContain('curl -N');
      expectNoProblems(problems);
    });
  });

  it('shows a 401 in place without a token and works with one; a 403 shows in place too', async () => {
    const admin = await signToken({ sub: 'admin-user', username: 'admin-user', realm: LOCAL_REALM, roles: ['admin'], attributes: {} });
    const reader = await signToken({ sub: 'reader-user', username: 'reader-user', realm: LOCAL_REALM, roles: ['reader'], attributes: {} });
    await withConsole(secured, [401, 403], async (page, problems) => {
      await fill(page, { name: 'alpha' });
      const refused = await startStream(page, 'watch');
      await refused.locator('.error-box').waitFor();
      expect(await refused.locator('.error-box strong').innerText()).toBe('401 UNAUTHORIZED');
      expect(await refused.locator('.error-box .message').innerText()).toBe('Authentication is required for this stream');

      await page.fill('#token', reader);
      expect(await publish(page)).toBe(403);
      expect(await page.locator('#publish-result strong').innerText()).toBe('403 FORBIDDEN');
      expect(await page.locator('#publish-result .message').innerText()).toBe('Only administrators can write to this stream');

      const watching = await startStream(page, 'watch');
      await frames(watching, 'lifecycle').filter({ hasText: 'opening' }).waitFor();
      // The token is never written into the commands, nor kept anywhere but the input.
      expect(await page.locator('#curl-command').innerText()).toContain('-H "Authorization: Bearer $AVISO_TOKEN"');
      expect(await page.locator('body').innerText()).not.toContain(reader);
      expect(await page.evaluate('JSON.stringify([localStorage.length, sessionStorage.length, document.cookie])')).toBe('[0,0,""]');

      await page.fill('#token', admin);
      expect(await publish(page)).toBe(200);
      await frames(watching, 'notification').first().waitFor({ timeout: APPEAR_WITHIN_MS });

      // Two stored, a cap of one: the replay stops at the limit, without replay_completed.
      expect(await publish(page)).toBe(200);
      await page.selectOption('#start', 'from_id');
      await page.fill('#start-value', '0');
      const capped = await startStream(page, 'replay');
      await frames(capped, 'close').waitFor();
      const labels = await capped
        .locator('.frame')
        .evaluateAll((items) => items.map((item) => (item as { dataset: { label: string } }).dataset.label));
      expect(labels.filter((label) => label !== 'heartbeat')).toEqual(['closing', 'limit reached', 'replay', 'replay started']);
      expect(await capped.locator('.frame[data-label="limit reached"] .summary').innerText()).toMatch(/\(max 1\)$/);
      expectNoProblems(problems);
    });
  });

  it('keeps several streams open at once; closing one keeps the others', async () => {
    await withConsole(open, [], async (page, problems) => {
      await page.selectOption('#event-type', 'dissemination');
      await fill(page, { class: 'od', destination: 'many-a' });
      const a = await startStream(page, 'watch');
      await fill(page, { destination: 'many-b' });
      const b = await startStream(page, 'watch');
      await fill(page, { destination: '*' });
      const any = await startStream(page, 'watch');
      for (const panel of [a, b, any]) await frames(panel, 'lifecycle').filter({ hasText: 'opening' }).waitFor();
      expect(await page.locator('#stream-count').innerText()).toBe('3 open');

      await fill(page, { destination: 'many-b' });
      expect(await publish(page)).toBe(200);
      await frames(b, 'notification').first().waitFor({ timeout: APPEAR_WITHIN_MS });
      await frames(any, 'notification').first().waitFor({ timeout: APPEAR_WITHIN_MS });
      expect(await frames(a, 'notification').count()).toBe(0);

      // Closing b (its fetch is aborted on purpose) leaves a and any reading.
      const bUrl = `${open.url}/api/v1/watch`;
      await b.locator('button.close').click();
      expect(await page.locator('#streams .stream').count()).toBe(2);
      expect(await page.locator('#stream-count').innerText()).toBe('2 open');
      await fill(page, { destination: 'many-a' });
      expect(await publish(page)).toBe(200);
      await frames(a, 'notification').first().waitFor({ timeout: APPEAR_WITHIN_MS });
      await expect.poll(() => frames(any, 'notification').count()).toBe(2);
      expect(problems.failedRequests).toEqual([`${bUrl}: net::ERR_ABORTED`]);
      expectNoProblems({ ...problems, failedRequests: [] });
    });
  });

  it('serves /console as a redirect and the SSE parser from this server, with a same-origin CSP', async () => {
    const redirect = await fetch(`${open.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/console/');
    const page = await fetch(`${open.url}/console/`);
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    const parser = await fetch(`${open.url}/console/vendor/eventsource-parser.js`);
    expect(parser.status).toBe(200);
    expect(parser.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const text = await parser.text();
    expect(text).toContain('function createParser');
    expect(text).not.toContain('sourceMappingURL');
    expect((await fetch(`${open.url}/console/nothing.js`)).status).toBe(404);
  });
});
