import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlRequest, shellCommands, type CurlRequest, type DocCommand } from '../support/doc-commands.js';
import { startNatsServer, type NatsServerProcess } from '../support/nats-server.js';
import type { RunningServer } from '../support/server-process.js';
import { startShippedServer } from '../support/shipped-server.js';

/**
 * Every `curl` example of the pages a newcomer follows, and the `npx aviso` commands of README and
 * docs/cli.md that end by themselves, run as written against the real server on the
 * shipped config/config.yaml (what `npm start` serves), in memory and on JetStream with
 * getting-started's two variables. Only the address changes: `localhost:8000` becomes the test
 * server's. An example answers 2xx unless it is listed below as a documented refusal, so an
 * example that stops fitting the shipped schemas or the API fails here.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const PAGES = ['README.md', 'docs/getting-started.md', 'docs/api.md', 'docs/console.md', 'docs/streaming.md'];
const DOCUMENTED_ADDRESS = /^http:\/\/localhost:8000(?=\/)/;

/** Pages whose `npx aviso` commands are run too: the ones that end by themselves (`listen` runs until Ctrl+C). */
const CLI_PAGES = ['README.md', 'docs/cli.md'];
const ENDS_BY_ITSELF = new Set(['notify', 'replay', '--help']);

/** Examples that show a refusal on purpose: the page, a piece of the command, what it answers. */
const REFUSALS: readonly { page: string; contains: string; status: number; code: string }[] = [
  { page: 'docs/getting-started.md', contains: '"class":"odd"', status: 400, code: 'INVALID_NOTIFICATION_REQUEST' },
];

interface Answer {
  readonly status: number;
  /** The whole body, or for a stream (`-N`) its first frame. */
  readonly text: string;
}

function curlExamples(): { command: DocCommand; request: CurlRequest }[] {
  return PAGES.flatMap((page) =>
    shellCommands(page, readFileSync(join(ROOT, page), 'utf8'))
      .filter((command) => command.words[0] === 'curl')
      .map((command) => ({ command, request: curlRequest(command) })),
  );
}

/** Sends what curl would send; a stream is read up to its first complete frame, then closed. */
function send(server: RunningServer, example: CurlRequest): Promise<Answer> {
  const url = example.url.replace(DOCUMENTED_ADDRESS, server.url);
  return new Promise((resolveAnswer, reject) => {
    const outgoing = httpRequest(url, { method: example.method, headers: example.headers, timeout: 10_000 }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (example.streaming && text.includes('\n\n')) {
          resolveAnswer({ status: response.statusCode ?? 0, text: text.slice(0, text.indexOf('\n\n')) });
          outgoing.destroy();
        }
      });
      response.on('end', () => resolveAnswer({ status: response.statusCode ?? 0, text }));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within 10 s from ${example.method} ${url}`)));
    outgoing.on('error', reject);
    outgoing.end(example.body);
  });
}

function cliExamples(): DocCommand[] {
  return CLI_PAGES.flatMap((page) =>
    shellCommands(page, readFileSync(join(ROOT, page), 'utf8')).filter(
      (command) => command.words[0] === 'npx' && command.words[1] === 'aviso' && ENDS_BY_ITSELF.has(command.words[2] ?? ''),
    ),
  );
}

/** Runs `npx aviso …` from the checkout as the pages do, with `AVISO_BASE_URL` the test server's (the pages export it). */
function runAviso(server: RunningServer, words: readonly string[], home: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(words[0]!, words.slice(1), {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: home, AVISO_BASE_URL: server.url },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, output }));
  });
}

const EXAMPLES = curlExamples();
const CLI_EXAMPLES = cliExamples();
let nats: NatsServerProcess;
let inMemory: RunningServer;
let onJetStream: RunningServer;

beforeAll(async () => {
  nats = await startNatsServer();
  [inMemory, onJetStream] = await Promise.all([startShippedServer(), startShippedServer({ natsUrl: nats.url })]);
});
afterAll(async () => {
  await Promise.all([inMemory?.stop(), onJetStream?.stop()]);
  await nats?.stop();
});

describe('the examples of the docs', () => {
  it('are found on every page that shows some, each addressed to the shipped localhost:8000', () => {
    const pages = new Set(EXAMPLES.map(({ command }) => command.page));
    // docs/api.md shows bodies and answers, no command yet; a curl added there is run like the others.
    expect([...pages]).toEqual(expect.arrayContaining(['README.md', 'docs/console.md', 'docs/getting-started.md', 'docs/streaming.md']));
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(10);
    for (const { command, request } of EXAMPLES) expect(request.url, `${command.page}:${command.line}`).toMatch(DOCUMENTED_ADDRESS);
    for (const refusal of REFUSALS) {
      expect(EXAMPLES.some(({ command }) => command.page === refusal.page && command.text.includes(refusal.contains))).toBe(true);
    }
  });

  describe.each([
    ['in memory', () => inMemory],
    ['on JetStream', () => onJetStream],
  ])('%s', (_backend, server) => {
    it('the aviso commands that end by themselves exit 0', async () => {
      expect(CLI_EXAMPLES.length).toBeGreaterThanOrEqual(4);
      const home = mkdtempSync(join(tmpdir(), 'aviso-docs-'));
      for (const command of CLI_EXAMPLES) {
        const { code, output } = await runAviso(server(), command.words, home);
        expect(code, `${command.page}:${command.line}: ${command.text}\n${output}`).toBe(0);
      }
      rmSync(home, { recursive: true, force: true });
    });

    it('answer as the pages say, in page order', async () => {
      for (const { command, request } of EXAMPLES) {
        const where = `${command.page}:${command.line}: ${command.text}`;
        const answer = await send(server(), request);
        const refusal = REFUSALS.find((listed) => listed.page === command.page && command.text.includes(listed.contains));
        if (refusal) {
          expect(answer.status, where).toBe(refusal.status);
          expect((JSON.parse(answer.text) as { code?: string }).code, where).toBe(refusal.code);
          continue;
        }
        expect(answer.status, `${where}\n${answer.text}`).toBeGreaterThanOrEqual(200);
        expect(answer.status, `${where}\n${answer.text}`).toBeLessThan(300);
        if (request.url.endsWith('/api/v1/notification')) expect(JSON.parse(answer.text), where).toMatchObject({ status: 'success' });
        // A stream's first frame is its opening: the server accepted the watch, not an error frame.
        if (request.streaming) expect(answer.text, where).not.toMatch(/^event: error/m);
      }
    });
  });
});
