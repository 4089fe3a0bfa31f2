import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findFreePort } from '../support/ports.js';
import { EVERY_CLIENT_ERROR_LINE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer, type ServerOptions } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { floodRequests, type RequestFloodResult } from './support/h2-request-flood.js';
import { metricSum, rssBytes } from './support/raw-sse.js';

/**
 * Hostile input must not amplify (D45, docs/security.md#floods-of-bad-requests-d45). The probe that
 * found it sent 60,000 HTTP/2 requests carrying a 4 KB `Last-Event-ID`: each answer quoted it
 * twice (8 KB), each log line three times (12.5 KB), and HPACK let the sender repeat the header
 * for about 37 bytes, so the log grew 340 times faster than the request bytes and the unbounded
 * stdout buffer took the server from 126 MiB to 1.2 GiB RSS.
 *
 * The same flood against the real process, over TLS and HTTP/2 as the probe sent it, with stdout
 * read at 1 MB/s (a slow log shipper) or written to a file: RSS stays within 320 MiB of the idle
 * process (the documented bound; most of it is garbage the collector has not reclaimed yet: with
 * one error line a second the same flood still reaches about +130 MiB), every answer stays under 1 KB, and what the log could not
 * take is counted. The shipped configuration limits the error lines per second; the floods with
 * that limit lifted show the byte bound of stdout holding on its own.
 */

const REQUESTS = 60_000;
const MIB = 1024 * 1024;
/** docs/security.md#floods-of-bad-requests-d45: what such a flood may add to the idle process. */
const RSS_BOUND_BYTES = 320 * MIB;
/** A slow log shipper. */
const SLOW_SINK_BYTES_PER_SECOND = 1_000_000;
/** An answer quotes 256 characters of the value at most, once. */
const MAX_ANSWER_BYTES = 1_000;
/** Fits HPACK's 4,096-byte dynamic table with the header's name (as the probe's did). */
const LAST_EVENT_ID = 'A'.repeat(4_000);
const IDENTIFIER = encodeURIComponent('{"class":"od"}');
const WATCH_PATH = `/api/v1/watch?event_type=mars&identifier=${IDENTIFIER}`;
/** The second shape: a `from_date` of digits, which the answer's reason used to quote again. */
const FROM_DATE_PATH = `${WATCH_PATH}&from_date=${'1'.repeat(3_950)}`;
/** The flood's client: few connections, many streams each, as an attacker keeps it cheap. */
const FLOOD = { connections: 4, streamsPerConnection: 200 } as const;
/**
 * The floods with every error line let through write a line per request, which costs the server
 * more CPU than the answer: fewer requests keep the test short, still several times what stdout
 * may hold.
 */
const UNLIMITED_LINES_REQUESTS = 30_000;
const TEST_TIMEOUT_MS = 180_000;

const EVENTS_KEPT = new Set(['logging.lines.rate_limited', 'startup.server.started']);

let certificates: TestCertificates | undefined;
let server: RunningServer | undefined;
let stdoutDir: string | undefined;

afterEach(async () => {
  // Killed: a clean stop would first wait for the slow reader to take what stdout holds.
  await server?.stop('SIGKILL');
  server = undefined;
  certificates?.remove();
  certificates = undefined;
  if (stdoutDir) rmSync(stdoutDir, { recursive: true, force: true });
  stdoutDir = undefined;
});

async function start(sink: Pick<ServerOptions, 'stdoutBytesPerSecond' | 'stdoutFile'>, logging: Record<string, unknown> = {}) {
  certificates = createTestCertificates();
  const metricsPort = await findFreePort();
  server = await startServer({
    config: withTls(serverConfig({ metrics: { enabled: true, host: '127.0.0.1', port: metricsPort }, logging }), certificates),
    keepLog: (line) => EVENTS_KEPT.has(String(line.attributes?.['event.name'])),
    ...sink,
  });
  const running = server;
  return {
    server: running,
    counter: async (name: string) => metricSum(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), name),
  };
}

interface FloodMeasure {
  readonly result: RequestFloodResult;
  /** RSS of the idle process, before the flood. */
  readonly base: number;
  /** The highest RSS seen during the flood and in the 2 s after it. */
  readonly peak: number;
}

/** Sends the flood while sampling the server's RSS every 100 ms. */
async function flood(
  running: RunningServer,
  requests: number,
  target: { path: string; repeatedHeader?: { name: string; value: string } },
): Promise<FloodMeasure> {
  const pid = running.process.pid as number;
  const base = await rssBytes(pid);
  let peak = base;
  const sample = async (): Promise<void> => {
    peak = Math.max(peak, await rssBytes(pid));
  };
  const sampler = setInterval(() => void sample().catch(() => undefined), 100);
  const startedAt = Date.now();
  try {
    const result = await floodRequests({ port: running.port, requests, ...FLOOD, ...target });
    const seconds = (Date.now() - startedAt) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await sample();
    console.log(
      `${requests} requests in ${seconds.toFixed(1)} s: ${(result.requestBytes / 1e6).toFixed(2)} MB sent, ` +
        `${(result.bodyBytes / 1e6).toFixed(1)} MB of answers (largest ${result.largestBody} bytes); ` +
        `RSS ${(base / MIB).toFixed(0)} MiB idle, ${(peak / MIB).toFixed(0)} MiB at most (+${((peak - base) / MIB).toFixed(0)} MiB)`,
    );
    return { result, base, peak };
  } finally {
    clearInterval(sampler);
  }
}

function expectBoundedAnswers({ result }: FloodMeasure, requests: number, quoted: string): void {
  expect(result.answered).toBe(requests);
  expect(result.resets).toBe(0);
  expect(result.largestBody).toBeLessThan(MAX_ANSWER_BYTES);
  const sample = JSON.parse(result.sampleBody) as { code: string; message: string; details: string };
  expect(sample.code).toBe('INVALID_WATCH_REQUEST');
  expect(sample.message).toContain(`${quoted.slice(0, 256)}…(${quoted.length} characters)`);
  expect(result.sampleBody.split(quoted.slice(0, 256)).length - 1).toBe(1);
}

describe('60,000 HTTP/2 requests with a 4 KB invalid value (D45)', () => {
  it(
    'a 4 KB Last-Event-ID, stdout read at 1 MB/s, the shipped configuration: RSS within its bound, the error lines rate-limited and counted',
    async () => {
      const { server: running, counter } = await start({ stdoutBytesPerSecond: SLOW_SINK_BYTES_PER_SECOND });
      const measure = await flood(running, REQUESTS, { path: WATCH_PATH, repeatedHeader: { name: 'last-event-id', value: LAST_EVENT_ID } });
      expectBoundedAnswers(measure, REQUESTS, LAST_EVENT_ID);
      expect(measure.peak - measure.base).toBeLessThan(RSS_BOUND_BYTES);
      // 20 lines a second are written; the rest are counted, and reported once a second.
      const limited = await counter('aviso_log_lines_rate_limited_total');
      expect(limited).toBeGreaterThan(REQUESTS * 0.9);
      expect(limited).toBeLessThan(REQUESTS);
      await running.waitForLog('logging.lines.rate_limited', { from: 0 });
      // A few dozen lines a second: even the slow reader takes them all.
      expect(await counter('aviso_log_lines_dropped_total')).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 4 KB from_date, stdout read at 1 MB/s, every error line let through: stdout holds its bound, drops whole lines and counts them',
    async () => {
      const { server: running, counter } = await start({ stdoutBytesPerSecond: SLOW_SINK_BYTES_PER_SECOND }, EVERY_CLIENT_ERROR_LINE);
      const measure = await flood(running, UNLIMITED_LINES_REQUESTS, { path: FROM_DATE_PATH });
      expectBoundedAnswers(measure, UNLIMITED_LINES_REQUESTS, '1'.repeat(3_950));
      expect(measure.peak - measure.base).toBeLessThan(RSS_BOUND_BYTES);
      expect(await counter('aviso_log_lines_rate_limited_total')).toBe(0);
      expect(await counter('aviso_log_lines_dropped_total')).toBeGreaterThan(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 4 KB Last-Event-ID, stdout to a file, every error line let through: RSS within its bound',
    async () => {
      stdoutDir = mkdtempSync(join(tmpdir(), 'aviso-stdout-'));
      const stdoutFile = join(stdoutDir, 'stdout.log');
      const { server: running, counter } = await start({ stdoutFile }, EVERY_CLIENT_ERROR_LINE);
      const measure = await flood(running, UNLIMITED_LINES_REQUESTS, {
        path: WATCH_PATH,
        repeatedHeader: { name: 'last-event-id', value: LAST_EVENT_ID },
      });
      expectBoundedAnswers(measure, UNLIMITED_LINES_REQUESTS, LAST_EVENT_ID);
      expect(measure.peak - measure.base).toBeLessThan(RSS_BOUND_BYTES);
      // Whatever stdout could not take was counted; what it wrote is about a line per request, each cut.
      const dropped = await counter('aviso_log_lines_dropped_total');
      const written = statSync(stdoutFile).size;
      console.log(`stdout file: ${(written / 1e6).toFixed(1)} MB, ${dropped} lines dropped`);
      expect(written / Math.max(1, UNLIMITED_LINES_REQUESTS - dropped)).toBeLessThan(1_500);
    },
    TEST_TIMEOUT_MS,
  );
});
