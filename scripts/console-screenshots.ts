/**
 * Takes the screenshots of docs/console.md (docs/images/console-*.png): the console idle, streaming,
 * showing an error and listing the server's open streams, against the server of `npm start` (config/config.yaml, in-memory) on a
 * free port, in Debian's Chromium. Run by hand after `npm run build`:
 *
 *   node dist/scripts/console-screenshots.js
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium, type Page } from 'playwright-core';

const ROOT = resolve(import.meta.dirname, '../..');
const IMAGES = join(ROOT, 'docs/images');
const RING = '[[50,10],[52,10],[52,12],[50,12],[50,10]]';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const address = probe.address();
  await new Promise<void>((done) => probe.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function waitForHealth(url: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`${url} did not come up`);
}

async function publish(page: Page): Promise<void> {
  await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/v1/notification')), page.click('#publish')]);
}

async function main(): Promise<void> {
  mkdirSync(IMAGES, { recursive: true });
  const port = await freePort();
  const server = spawn(process.execPath, [join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    env: { ...process.env, AVISOSERVER_APPLICATION__PORT: String(port), AVISOSERVER_LOGGING__LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  try {
    await waitForHealth(url);
    const page = await browser.newPage({ viewport: { width: 1440, height: 960 } });
    await page.goto(`${url}/console/`);
    await page.locator('#event-type option').first().waitFor({ state: 'attached' });

    await page.selectOption('#event-type', 'extreme_event');
    await page.fill('#field-region', 'north');
    await page.fill('#field-run_time', '12');
    await page.selectOption('.field[data-field="severity"] select.operator', 'gte');
    await page.fill('#field-severity', '5');
    await page.screenshot({ path: join(IMAGES, 'console-idle.png'), fullPage: true });

    await page.click('#watch');
    await page.locator('.frame[data-label="opening"]').waitFor();
    await page.selectOption('.field[data-field="severity"] select.operator', 'value');
    await page.fill('#field-anomaly', '42.5');
    await page.fill('#field-polygon', RING);
    await page.fill('#payload', '{"note": "storm warning"}');
    for (const severity of ['6', '7']) {
      await page.fill('#field-severity', severity);
      await publish(page);
    }
    await page.locator('.frame[data-kind="notification"]').nth(1).waitFor();
    await page.selectOption('#start', 'from_id');
    await page.fill('#start-value', '1');
    await page.selectOption('.field[data-field="severity"] select.operator', 'between');
    await page.fill('#field-severity', '5,7');
    await page.fill('#field-anomaly', '');
    await page.fill('#field-polygon', '');
    await page.click('#replay');
    await page.locator('.frame[data-label="replay completed"]').waitFor();
    await page.check('input[name="command-for"][value="replay"]');
    await page.screenshot({ path: join(IMAGES, 'console-streaming.png') });

    await page.click('#close-all');
    await page.selectOption('#start', 'live');
    await page.selectOption('.field[data-field="severity"] select.operator', 'gte');
    await page.fill('#field-severity', '9');
    await page.click('#watch');
    await page.locator('.stream .error-box').waitFor();
    await page.fill('#field-severity', '');
    await page.fill('#field-run_time', '');
    await publish(page);
    await page.check('input[name="command-for"][value="watch"]');
    await page.screenshot({ path: join(IMAGES, 'console-error.png'), fullPage: true });

    // Streams of the server: the page's own watches and two opened elsewhere, one about to be closed.
    await page.click('#close-all');
    const outside = await Promise.all(
      [
        { event_type: 'mars', identifier: { class: 'od', stream: 'enfo' } },
        { event_type: 'dissemination', identifier: { destination: 'FOO', class: 'od' } },
      ].map((body) => fetch(`${url}/api/v1/watch`, { method: 'POST', body: JSON.stringify(body) })),
    );
    await page.selectOption('#event-type', 'dissemination');
    await page.locator('.field[data-field="destination"]').waitFor();
    for (const destination of ['BAR', 'BAZ']) {
      await page.fill('#field-destination', destination);
      await page.click('#watch');
    }
    await page.locator('.frame[data-label="opening"]').nth(1).waitFor();
    await page.locator('#server-streams > summary').click();
    await page.locator('#server-streams-rows tr[data-id]').nth(3).waitFor();
    await page.locator('#server-streams-rows tr[data-id]').nth(2).locator('button.close-stream').click();
    await page.screenshot({ path: join(IMAGES, 'console-server-streams.png'), clip: { x: 0, y: 0, width: 1440, height: 600 } });
    for (const response of outside) await response.body?.cancel();
    console.log(`wrote ${IMAGES}/console-{idle,streaming,error,server-streams}.png`);
  } finally {
    await browser.close();
    server.kill('SIGTERM');
  }
}

await main();
