import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../../packages/client/test/cli/support.js';
import { useBackend } from '../support/backends.js';
import { expectNoProblems, launchChromium, watchPage } from '../support/browser.js';
import { TEST_SCHEMAS } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * The Streams of the server view and `aviso admin streams` / `close-stream` over a deployment of
 * two JetStream processes on one NATS (D49): asked of one process, both list the streams of the
 * other with the process that holds them; the console closes a stream held by the other process
 * through its confirmation; and once that process is killed, both say it did not answer while
 * still listing the survivor's streams.
 */

const START_TIMEOUT_MS = 60_000;
const { mars } = TEST_SCHEMAS;
const processId = (server: RunningServer): string => `${hostname()}:${server.process.pid}`;

describe('the Streams of the server view and aviso admin streams across JetStream processes', { timeout: 120_000 }, () => {
  const backend = useBackend('jetstream');
  let front: RunningServer;
  let other: RunningServer;
  let browser: Browser;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    const config = backend.config({
      application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000' },
      notification_schema: { mars },
    });
    [front, other, browser] = await Promise.all([
      startServer({ config, startTimeoutMs: START_TIMEOUT_MS }),
      startServer({ config, startTimeoutMs: START_TIMEOUT_MS }),
      launchChromium(),
    ]);
  }, 2 * START_TIMEOUT_MS);

  afterAll(async () => {
    for (const client of clients) client.close();
    await browser?.close();
    await Promise.all([front, other].filter(Boolean).map((server) => server.stop()));
  });

  async function watch(server: RunningServer, klass: string): Promise<{ client: SseClient; id: string }> {
    const client = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'mars', identifier: { class: klass } });
    expect(client.status, client.errorBody).toBe(200);
    expect((await client.nextSignificant())?.json.type).toBe('connection_established');
    clients.push(client);
    return { client, id: client.headers.get('x-request-id') ?? '' };
  }

  const rowIds = (page: Page): Promise<string[]> =>
    page.locator('#server-streams-rows tr[data-id]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-id') ?? ''));

  it("lists and closes the other process's streams, then names it when it is killed", async () => {
    const env = cliEnv(mkdtempSync(join(tmpdir(), 'aviso-cluster-home-')), { AVISO_BASE_URL: front.url });
    const local = await watch(front, 'od');
    const remote = await watch(other, 'rd');
    const doomed = await watch(other, 'ai');

    const listed = await runCli(['admin', 'streams', '--json'], env);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const answer = JSON.parse(listed.stdout) as {
      streams: { id: string; process: string }[];
      processes: { answered: string[]; not_answering: string[]; cluster_unreachable: boolean };
    };
    expect(answer.streams.map(({ id, process }) => ({ id, process }))).toEqual([
      { id: local.id, process: processId(front) },
      { id: remote.id, process: processId(other) },
      { id: doomed.id, process: processId(other) },
    ]);
    expect({ ...answer.processes, answered: [...answer.processes.answered].sort() }).toEqual({
      answered: [processId(front), processId(other)].sort(),
      not_answering: [],
      cluster_unreachable: false,
    });

    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    try {
      const problems = watchPage(page, front.url);
      await page.goto(`${front.url}/console/#server-streams`, { waitUntil: 'load' });
      await expect.poll(() => rowIds(page)).toEqual([local.id, remote.id, doomed.id]);
      expect(await page.locator(`#server-streams-rows tr[data-id="${remote.id}"] td.process`).innerText()).toBe(processId(other));

      // Closed from the front process, the stream held by the other gets the operator's close.
      await page.locator(`#server-streams-rows tr[data-id="${remote.id}"] button.close-stream`).click();
      await page.click('#close-stream-confirm');
      await expect
        .poll(() => page.locator('#server-streams-result').innerText())
        .toMatch(new RegExp(`^Stream closed: ${remote.id} on ${processId(other)} · `));
      const closing = await remote.client.nextSignificant();
      expect(closing?.event).toBe('connection-closing');
      expect(closing?.json).toMatchObject({ reason: 'end_of_stream', cause: 'operator_closed' });
      await expect.poll(() => rowIds(page)).toEqual([local.id, doomed.id]);

      // Killed without a word: within its presence window it is named as not answering.
      expect(await other.stop('SIGKILL')).toBeNull();
      const partial = await runCli(['admin', 'streams', '--json'], env);
      expect(partial.code).toBe(0);
      expect(partial.stderr).toBe(`Warning: 1 process did not answer, their streams are not listed: ${processId(other)}\n`);
      expect((JSON.parse(partial.stdout) as { streams: { id: string }[] }).streams.map((s) => s.id)).toEqual([local.id]);
      await expect
        .poll(() => page.locator('#server-streams-not-answering').innerText(), { timeout: 4000 })
        .toBe(`Not answering, so their streams are missing: ${processId(other)}.`);
      expect(await rowIds(page)).toEqual([local.id]);
      expectNoProblems(problems);
    } finally {
      await page.close();
    }
  });
});
