import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, watchPage } from '../support/browser.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { SseClient } from '../support/sse-client.js';
import { TRANSCRIPT_REQUEST, transcriptNotification } from '../support/transcript.js';

/**
 * docs/design/rules/browser.md §2 and §3 in headless Chromium: a page on another origin works when that origin is
 * allowed and is blocked when it is not; with TLS, 20 streams stay open at once over HTTP/2.
 * Browser-side code is given as text: the project compiles without the DOM library.
 */

const STATIC_DIR = join(resolve(import.meta.dirname, '../..'), 'static');

/** A tiny server for a page on another origin: one blank page, 204 for anything else (the favicon). */
async function startPageServer(): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    if (request.url === '/') {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>another origin</title><p>page</p>');
    } else {
      response.writeHead(204).end();
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Failed requests other than the watches the page cancels itself once it has read them. */
function unexpectedFailures(failed: readonly string[]): string[] {
  return failed.filter((entry) => !entry.endsWith('/api/v1/watch: net::ERR_ABORTED'));
}

/** An expression calling the page function `source` with `args` (given as JSON). */
function callWith(source: string, args: Record<string, unknown>): string {
  return `(${source})(${JSON.stringify(args)})`;
}

/**
 * Runs in the page: a credentialed fetch-based POST watch (preflighted: JSON and Authorization),
 * then a notify from the page, read back through the stream's body.
 */
const WATCH_AND_NOTIFY = `async ({ api, watchBody, notifyBody }) => {
  const json = { 'Content-Type': 'application/json', Authorization: 'Bearer page-token' };
  try {
    const watch = await fetch(api + '/api/v1/watch', { method: 'POST', headers: json, body: JSON.stringify(watchBody), credentials: 'include' });
    const requestId = watch.headers.get('X-Request-ID');
    const reader = watch.body.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntil = async (needle) => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended early: ' + text);
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil('connection_established');
    const notify = await fetch(api + '/api/v1/notification', { method: 'POST', headers: json, body: JSON.stringify(notifyBody), credentials: 'include' });
    await readUntil('"note":"' + notifyBody.payload.note + '"');
    await reader.cancel();
    return { watchStatus: watch.status, requestId, notifyStatus: notify.status };
  } catch (error) {
    return { error: String(error) };
  }
}`;

describe('a page on another origin (CORS)', () => {
  let allowedPage: { origin: string; server: Server };
  let strangerPage: { origin: string; server: Server };
  let server: RunningServer;
  let browser: Browser;
  beforeAll(async () => {
    allowedPage = await startPageServer();
    strangerPage = await startPageServer();
    server = await startServer({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', cors: { allowed_origins: [allowedPage.origin] } },
      }),
    });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    allowedPage?.server.close();
    strangerPage?.server.close();
  });

  async function runFrom(pageOrigin: string, note: string) {
    const page = await browser.newPage();
    const problems = watchPage(page, pageOrigin);
    await page.goto(`${pageOrigin}/`);
    const result = await page.evaluate<Record<string, unknown>>(
      callWith(WATCH_AND_NOTIFY, { api: server.url, watchBody: TRANSCRIPT_REQUEST, notifyBody: transcriptNotification(note) }),
    );
    await page.close();
    return { result, problems };
  }

  it('works from an allowed origin: a credentialed notify and a streamed watch read through fetch', async () => {
    const { result, problems } = await runFrom(allowedPage.origin, 'from-allowed-page');
    expect(result).toEqual({ watchStatus: 200, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), notifyStatus: 200 });
    expect({ console: problems.consoleErrors, page: problems.pageErrors, failed: unexpectedFailures(problems.failedRequests) }).toEqual({
      console: [],
      page: [],
      failed: [],
    });
  });

  it('refuses a no-preflight text/plain POST from an origin that is not allowed, and stores nothing (docs/security.md, "Cross-site writes")', async () => {
    const page = await browser.newPage();
    await page.goto(`${strangerPage.origin}/`);
    const before = server.logs.length;
    // What a hostile page can send without a preflight: the browser sends it, the page sees an opaque answer.
    const sent = await page.evaluate<string>(
      callWith(
        `async ({ url, body }) => {
          const answer = await fetch(url, { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body });
          return answer.type;
        }`,
        { url: `${server.url}/api/v1/notification`, body: JSON.stringify(transcriptNotification('from-a-hostile-page')) },
      ),
    );
    await page.close();
    expect(sent).toBe('opaque');
    const refusal = await server.waitForLog('http.request.cross_origin.refused', { from: before });
    expect(refusal.attributes).toMatchObject({
      method: 'POST',
      path: '/api/v1/notification',
      origin: strangerPage.origin,
      sec_fetch_site: 'same-site',
    });
    const replay = await SseClient.open(`${server.url}/api/v1/replay`, { ...TRANSCRIPT_REQUEST, from_id: '1' });
    const notes = (await replay.rest())
      .filter((event) => event.json.specversion)
      .map((event) => (event.json.data as { payload: { note: string } }).payload.note);
    expect(notes).not.toContain('from-a-hostile-page');
  });

  it('is blocked from an origin that is not allowed', async () => {
    const { result, problems } = await runFrom(strangerPage.origin, 'from-stranger-page');
    expect(result.error).toMatch(/TypeError: Failed to fetch/);
    expect(problems.consoleErrors.join('\n')).toMatch(/CORS policy/);
  });
});

describe('with TLS, in Chromium over HTTP/2', () => {
  let certificates: TestCertificates;
  let server: RunningServer;
  let browser: Browser;
  let origin: string;
  beforeAll(async () => {
    certificates = createTestCertificates();
    server = await startServer({ config: withTls(serverConfig(), certificates, { static_files_path: STATIC_DIR }) });
    origin = `https://localhost:${server.port}`;
    browser = await launchChromium([`--ignore-certificate-errors-spki-list=${certificates.spkiHash}`]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    certificates?.remove();
  });

  it('keeps 20 fetch streams open at once on h2 and delivers a notification to all of them', async () => {
    const page = await browser.newPage();
    const problems = watchPage(page, origin);
    // The homepage, with its images and styles, over HTTP/2 as well.
    expect((await page.goto(`${origin}/`, { waitUntil: 'load' }))?.status()).toBe(200);
    const result = await page.evaluate<Record<string, unknown>>(
      callWith(
        `async ({ watchBody, notifyBody, count }) => {
        const decoder = new TextDecoder();
        const open = async () => {
          const response = await fetch('/api/v1/watch', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(watchBody) });
          const reader = response.body.getReader();
          const stream = { text: '', reader };
          stream.until = async (needle) => {
            while (!stream.text.includes(needle)) {
              const { value, done } = await reader.read();
              if (done) throw new Error('stream ended early');
              stream.text += decoder.decode(value, { stream: true });
            }
          };
          await stream.until('connection_established');
          return stream;
        };
        // All streams must be open at once before the notification: on HTTP/1.1 the seventh would wait forever.
        const streams = await Promise.all(Array.from({ length: count }, open));
        const notify = await fetch('/api/v1/notification', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(notifyBody) });
        await notify.text();
        await Promise.all(streams.map((stream) => stream.until('"note":"' + notifyBody.payload.note + '"')));
        // A resource entry appears once its response is complete: the notify's, not the open streams'.
        const protocols = performance.getEntriesByType('resource').filter((entry) => entry.name.endsWith('/api/v1/notification')).map((entry) => entry.nextHopProtocol);
        const page = performance.getEntriesByType('navigation').map((entry) => entry.nextHopProtocol);
        await Promise.all(streams.map((stream) => stream.reader.cancel()));
        return { received: streams.length, notifyStatus: notify.status, protocols, page };
      }`,
        { watchBody: TRANSCRIPT_REQUEST, notifyBody: transcriptNotification('to-twenty'), count: 20 },
      ),
    );
    expect(result).toEqual({ received: 20, notifyStatus: 200, protocols: ['h2'], page: ['h2'] });
    expect({ console: problems.consoleErrors, page: problems.pageErrors, failed: unexpectedFailures(problems.failedRequests) }).toEqual({
      console: [],
      page: [],
      failed: [],
    });
  });
});
