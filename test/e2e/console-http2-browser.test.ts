import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoProblems, launchChromium, watchPage } from '../support/browser.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';

/**
 * docs/design/rules/browser.md §4: the console "works … with many streams open at once over HTTP/2". Over HTTP/1.1
 * a browser stops at six connections per origin and each stream holds one; with
 * `application.tls` every stream of the page shares one HTTP/2 connection.
 */
const STREAMS = 12;
/** Twelve panels rendering one notification each: a little more than the one-stream second. */
const APPEAR_WITHIN_MS = 5000;

let certificates: TestCertificates;
let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  certificates = createTestCertificates();
  server = await startServer({ config: withTls(serverConfig(), certificates) });
  browser = await launchChromium([`--ignore-certificate-errors-spki-list=${certificates.spkiHash}`]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  certificates?.remove();
});

describe('the console over HTTP/2', () => {
  it(`keeps ${STREAMS} watches open at once on one connection, and each receives a notification`, async () => {
    const origin = `https://localhost:${server.port}`;
    const page = await browser.newPage();
    try {
      const problems = watchPage(page, origin);
      expect((await page.goto(`${origin}/console/`, { waitUntil: 'load' }))?.status()).toBe(200);
      await page.locator('#event-type option').first().waitFor({ state: 'attached' });
      await page.selectOption('#event-type', 'dissemination');
      await page.fill('#field-class', 'od');
      await page.fill('#field-destination', '*');
      for (let opened = 1; opened <= STREAMS; opened++) {
        await page.click('#watch');
        await expect.poll(() => page.locator('#streams .stream').count()).toBe(opened);
      }
      await expect.poll(() => page.locator('#streams .stream .frame[data-kind="lifecycle"]', { hasText: 'opening' }).count()).toBe(STREAMS);
      expect(await page.locator('#stream-count').innerText()).toBe(`${STREAMS} open`);
      // The HTTP/1.1 connection warning stays hidden: the page and its streams speak h2.
      expect(await page.locator('#connection-note').isHidden()).toBe(true);
      const protocols = await page.evaluate<string[]>(
        `[...new Set(performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation')).map((entry) => entry.nextHopProtocol))]`,
      );
      expect(protocols).toEqual(['h2']);

      await page.fill('#field-destination', 'everyone');
      const [answer] = await Promise.all([
        page.waitForResponse((response) => response.url().endsWith('/api/v1/notification')),
        page.click('#publish'),
      ]);
      expect(answer.status()).toBe(200);
      await expect
        .poll(() => page.locator('#streams .stream .frame[data-kind="notification"]').count(), { timeout: APPEAR_WITHIN_MS })
        .toBe(STREAMS);
      expectNoProblems(problems);
    } finally {
      await page.close();
    }
  });
});
