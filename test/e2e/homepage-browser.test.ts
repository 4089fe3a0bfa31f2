import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig, TEST_SCHEMAS } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { expectNoProblems, launchChromium, watchPage, type PageProblems } from '../support/browser.js';

/**
 * The homepage and the Swagger UI rendered by a real browser: Debian's `chromium`, driven by
 * `playwright-core` (which downloads no browser of its own). Without `/usr/bin/chromium` these
 * tests fail, they are never skipped: install it with `apt-get install chromium` or run
 * `npm test` as root, which installs it when missing.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const STATIC_DIR = join(ROOT, 'static');
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const EVENT_TYPES = Object.keys(TEST_SCHEMAS).sort();
/**
 * Operations in the OpenAPI document (docs/design/rules/operations.md §4.4, D26): 15 paths, one method each except
 * watch and replay, which also answer GET (docs/design/rules/browser.md §1); `/api/v1/admin/reload` is docs/design/rules/browser.md §5,
 * the admin streams list and close are D49.
 */
const DOCUMENTED_OPERATIONS = 17;

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer({
    config: serverConfig({
      application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', static_files_path: STATIC_DIR },
    }),
  });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the homepage in headless Chromium', () => {
  it('renders without console errors or failed requests, with the title, the version and the event-type links', async () => {
    const page = await browser.newPage();
    try {
      const problems = watchPage(page, server.url);
      const response = await page.goto(`${server.url}/`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      // The logo is an <img>: it must have loaded (naturalWidth is 0 for a broken image).
      // Browser-side code is given as text: the project compiles without the DOM library.
      await page.waitForFunction('Array.from(document.images).every((image) => image.complete)');
      const brokenImages = await page.evaluate<string[]>(
        'Array.from(document.images).filter((image) => image.naturalWidth === 0).map((image) => image.src)',
      );
      expect(brokenImages).toEqual([]);

      expect(await page.title()).toBe('Aviso notification server');
      expect(await page.locator('h1').innerText()).toContain('Aviso');
      expect(await page.locator('body').innerText()).toContain(PACKAGE_VERSION);

      // `href` as the browser resolved it against the page.
      const links = await page.evaluate<{ text: string; href: string }[]>(
        `Array.from(document.querySelectorAll('a[href*="api/v1/schema/"]')).map((a) => ({ text: a.textContent.trim(), href: a.href }))`,
      );
      expect(links.map((link) => link.text).sort()).toEqual(EVENT_TYPES);
      for (const link of links) expect(link.href).toBe(`${server.url}/api/v1/schema/${link.text}`);

      const apiDocs = await page.evaluate<string>(`document.querySelector('a[href="swagger-ui/"]').href`);
      expect(apiDocs).toBe(`${server.url}/swagger-ui/`);

      expectNoProblems(problems);
    } finally {
      await page.close();
    }
  });

  it('follows an event-type link to its schema', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}/`);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/v1/schema/mars')),
        page.click('a[href="api/v1/schema/mars"]'),
      ]);
      expect(response.status()).toBe(200);
      expect((await response.json()) as Record<string, unknown>).toMatchObject({ event_type: 'mars', status: 'success' });
    } finally {
      await page.close();
    }
  });
});

describe('the Swagger UI in headless Chromium', () => {
  let problems: PageProblems;

  beforeAll(async () => {
    const page = await browser.newPage();
    try {
      problems = watchPage(page, server.url);
      const documentLoaded = page.waitForResponse((r) => r.url().startsWith(server.url) && /json$/.test(new URL(r.url()).pathname));
      const response = await page.goto(`${server.url}/swagger-ui/`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      expect((await documentLoaded).status()).toBe(200);
      await page.waitForFunction(`document.querySelectorAll('.opblock').length >= ${DOCUMENTED_OPERATIONS}`, undefined, {
        timeout: 15_000,
      });
      rendered = {
        title: await page.locator('.info .title').innerText(),
        paths: await page.evaluate<string[]>(
          `Array.from(document.querySelectorAll('.opblock-summary-path')).map((e) => e.getAttribute('data-path') || e.textContent.trim())`,
        ),
      };
    } finally {
      await page.close();
    }
  }, 60_000);

  let rendered: { title: string; paths: string[] };

  it('loads the OpenAPI document from this server and renders every operation', () => {
    expect(rendered.paths).toHaveLength(DOCUMENTED_OPERATIONS);
    expect(rendered.title).toContain('Aviso Notification Service API');
    expect([...rendered.paths].sort()).toEqual(
      [
        '/',
        '/health',
        '/ready',
        '/api/v1/schema',
        '/api/v1/schema/{event_type}',
        '/api/v1/notification',
        '/api/v1/notification/batch',
        '/api/v1/watch',
        '/api/v1/watch',
        '/api/v1/replay',
        '/api/v1/replay',
        '/api/v1/admin/wipe/stream',
        '/api/v1/admin/wipe/all',
        '/api/v1/admin/notification/{notification_id}',
        '/api/v1/admin/reload',
        '/api/v1/admin/streams',
        '/api/v1/admin/streams/{id}',
      ].sort(),
    );
  });

  it('loads everything from this server, with no failed request and no uncaught error', () => {
    expect({ ...problems, consoleErrors: [] }).toEqual({
      consoleErrors: [],
      pageErrors: [],
      failedRequests: [],
      badResponses: [],
      foreignRequests: [],
    });
  });

  it('logs no console error (its Content-Security-Policy must allow what the UI does)', () => {
    expect(problems.consoleErrors).toEqual([]);
  });
});
