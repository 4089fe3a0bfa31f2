import { setMaxListeners } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort } from '../test/support/nats-server.js';
import { benchConfig, exampleSchema } from './support/aviso-config.js';
import { startAviso, type AvisoProcess } from './support/aviso-process.js';
import { startPrivateNats, type PrivateNats } from './support/nats.js';
import { MARS_NOTIFICATION } from './support/notifications.js';
import { NotifyClient } from './support/notify-client.js';
import { ROOT } from './support/paths.js';
import { readRssBytes } from './support/rss.js';
import { SoakStream } from './support/soak-stream.js';
import { percentileOfSorted, round } from './support/stats.js';

/**
 * `npm run soak [-- --minutes N] [-- --backend jetstream]`: a long mixed load against the built
 * server, watching its memory and event loop rather than its speed. Notifies at a steady rate, a
 * pool of live watchers that open and close all the time, replays every few seconds, and a few
 * slow readers that read in short bursts. Every 10 s the server's RSS (VmRSS) and event-loop lag
 * (prom-client's `nodejs_eventloop_lag_*` on the metrics listener, a window per scrape) are
 * printed and recorded. At the end: a table, bench/soak-results.json, and exit 1 if a notify
 * failed, a stream ended unexpectedly, or streams were still counted open after every client left.
 */

const USAGE = `usage: npm run soak [-- [--minutes N] [--backend in_memory|jetstream] [--rate R] [--watchers W]]
  --minutes N      duration of the load (default 10; 1 for a quick check)
  --backend B      in_memory (default) or jetstream (a private nats-server -js)
  --rate R         notifies per second (default 50)
  --watchers W     live watchers kept open, each for 5–30 s (default 40)`;

const SAMPLE_EVERY_MS = 10_000;
const REPLAY_EVERY_MS = 5_000;
const SLOW_READERS = 3;
/** A slow reader reads for this long every SLOW_PERIOD_MS. */
const SLOW_READ_MS = 50;
const SLOW_PERIOD_MS = 2_000;
const WATCH_LIFETIME_MS = { min: 5_000, max: 30_000 };
const MAX_NOTIFIES_IN_FLIGHT = 64;
const TOPICS = 100;
const RESULTS_FILE = join(ROOT, 'bench/soak-results.json');

interface Options {
  readonly minutes: number;
  readonly backend: 'in_memory' | 'jetstream';
  readonly rate: number;
  readonly watchers: number;
}

interface Sample {
  readonly atS: number;
  readonly rssBytes: number;
  readonly lagS: number;
  readonly lagP50S: number;
  readonly lagP99S: number;
  readonly lagMaxS: number;
  readonly activeStreams: number;
  readonly notifiesAcked: number;
}

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: 'string', default: '10' },
      backend: { type: 'string', default: 'in_memory' },
      rate: { type: 'string', default: '50' },
      watchers: { type: 'string', default: '40' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const minutes = Number(values.minutes);
  const rate = Number(values.rate);
  const watchers = Number(values.watchers);
  if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, not ${values.minutes}`);
  if (!(rate > 0)) throw new Error(`--rate must be a positive number, not ${values.rate}`);
  if (!Number.isInteger(watchers) || watchers < 0) throw new Error(`--watchers must be a whole number, not ${values.watchers}`);
  if (values.backend !== 'in_memory' && values.backend !== 'jetstream')
    throw new Error(`--backend must be in_memory or jetstream, not ${values.backend}`);
  return { minutes, backend: values.backend, rate, watchers };
}

/** Counts of the whole run; `problems` are what makes it fail. */
class Tally {
  notifiesSent = 0;
  notifiesAcked = 0;
  notifiesFailed = 0;
  watchesOpened = 0;
  watchEvents = 0;
  replays = 0;
  replayEvents = 0;
  slowConsumerCloses = 0;
  readonly problems: string[] = [];

  problem(text: string): void {
    if (this.problems.length < 50) this.problems.push(text);
    else if (this.problems.length === 50) this.problems.push('… (more problems not listed)');
  }
}

function notifyBody(i: number): string {
  return JSON.stringify({
    ...MARS_NOTIFICATION,
    identifier: { ...MARS_NOTIFICATION.identifier, step: String(i % TOPICS) },
    payload: { i, location: `/data/od/enfo/${i}.grib` },
  });
}

function watchBody(index: number): string {
  // Most watch every od notification; some one step (a narrow filter on the same stream).
  const identifier = index % 4 === 3 ? { class: 'od', step: String(index % TOPICS) } : { class: 'od' };
  return JSON.stringify({ event_type: 'mars', identifier });
}

/** Steady notify traffic: `rate` per second on a schedule, never more than a bounded number in flight. */
function notifyLoad(client: NotifyClient, rate: number, tally: Tally, signal: AbortSignal): Promise<void> {
  const started = performance.now();
  let inFlight = 0;
  const pending = new Set<Promise<void>>();
  const sendOne = (): void => {
    const i = tally.notifiesSent++;
    inFlight++;
    const done = client
      .post('/api/v1/notification', notifyBody(i))
      .then(
        ({ status, body }) => {
          if (status === 200) tally.notifiesAcked++;
          else {
            tally.notifiesFailed++;
            tally.problem(`notify ${i}: status ${status} ${body.slice(0, 200)}`);
          }
        },
        (error: unknown) => {
          tally.notifiesFailed++;
          tally.problem(`notify ${i}: ${error instanceof Error ? error.message : String(error)}`);
        },
      )
      .finally(() => {
        inFlight--;
        pending.delete(done);
      });
    pending.add(done);
  };
  return (async () => {
    while (!signal.aborted) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate);
      while (tally.notifiesSent < due && inFlight < MAX_NOTIFIES_IN_FLIGHT) sendOne();
      await sleep(10);
    }
    await Promise.all(pending);
  })();
}

/** Checks how a watch stream ended once it is over; `expectSlow` allows the slow-consumer close (D9, D32). */
function judgeWatch(stream: SoakStream, what: string, tally: Tally, expectSlow: boolean): void {
  tally.watchEvents += stream.notifications;
  if (stream.status !== 200) tally.problem(`${what}: status ${stream.status}`);
  if (stream.outOfOrder > 0) tally.problem(`${what}: ${stream.outOfOrder} notifications out of order`);
  if (stream.errorFrames > 0) tally.problem(`${what}: ${stream.errorFrames} error frames`);
  if (stream.closedByClient) return;
  if (expectSlow && stream.closeReason === 'end_of_stream' && stream.closeCause === 'slow_consumer') {
    tally.slowConsumerCloses++;
    return;
  }
  const ending = stream.closeCause ? `${stream.closeReason} (cause ${stream.closeCause})` : stream.closeReason;
  tally.problem(`${what} ended unexpectedly: ${ending ?? stream.transportError ?? 'without a close frame'}`);
}

/** A pool of live watchers, each closed by the client after 5–30 s and replaced at once. */
function watchChurn(origin: URL, size: number, tally: Tally, signal: AbortSignal, highest: { sequence: number }): Promise<void> {
  const open = async (slot: number): Promise<void> => {
    while (!signal.aborted) {
      const index = tally.watchesOpened++;
      const stream = new SoakStream(origin, '/api/v1/watch', watchBody(index));
      const lifetime = WATCH_LIFETIME_MS.min + Math.random() * (WATCH_LIFETIME_MS.max - WATCH_LIFETIME_MS.min);
      const timer = setTimeout(() => stream.close(), lifetime);
      const stop = (): void => stream.close();
      signal.addEventListener('abort', stop, { once: true });
      await stream.closed();
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      highest.sequence = Math.max(highest.sequence, stream.lastSequence);
      judgeWatch(stream, `watch ${index} (slot ${slot})`, tally, false);
      // A stream that failed is not reopened in a tight loop.
      if (!stream.closedByClient) await sleep(1_000);
    }
  };
  return Promise.all(Array.from({ length: size }, (_, slot) => open(slot))).then(() => undefined);
}

/** Watchers that read for SLOW_READ_MS every SLOW_PERIOD_MS; one closed as a slow consumer reconnects. */
function slowReaders(origin: URL, tally: Tally, signal: AbortSignal): Promise<void> {
  const reader = async (slot: number): Promise<void> => {
    while (!signal.aborted) {
      tally.watchesOpened++;
      const stream = new SoakStream(origin, '/api/v1/watch', watchBody(0));
      const stop = (): void => stream.close();
      signal.addEventListener('abort', stop, { once: true });
      const bursts = setInterval(() => {
        stream.resume();
        setTimeout(() => stream.pause(), SLOW_READ_MS);
      }, SLOW_PERIOD_MS);
      stream.pause();
      await stream.closed();
      clearInterval(bursts);
      signal.removeEventListener('abort', stop);
      judgeWatch(stream, `slow reader ${slot}`, tally, true);
      if (!stream.closedByClient) await sleep(1_000);
    }
  };
  return Promise.all(Array.from({ length: SLOW_READERS }, (_, slot) => reader(slot))).then(() => undefined);
}

/** A replay of the last ~1,000 sequences every few seconds, read to its end. */
async function replays(origin: URL, tally: Tally, signal: AbortSignal, highest: { sequence: number }): Promise<void> {
  while (!signal.aborted) {
    await sleep(REPLAY_EVERY_MS, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return;
    const fromId = Math.max(1, highest.sequence - 1_000);
    const body = JSON.stringify({ event_type: 'mars', identifier: { class: 'od' }, from_id: String(fromId) });
    const stream = new SoakStream(origin, '/api/v1/replay', body);
    await stream.closed();
    tally.replays++;
    tally.replayEvents += stream.notifications;
    if (stream.status !== 200) tally.problem(`replay from ${fromId}: status ${stream.status}`);
    else if (stream.closeReason !== 'end_of_stream')
      tally.problem(`replay from ${fromId} ended with ${stream.closeReason ?? stream.transportError ?? 'no close frame'}`);
    if (stream.outOfOrder > 0) tally.problem(`replay from ${fromId}: ${stream.outOfOrder} out of order`);
  }
}

/** The value of a sample (no labels) in a Prometheus exposition; NaN when absent. */
function gauge(exposition: string, name: string): number {
  const line = exposition.split('\n').find((text) => text.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : Number.NaN;
}

function labelledSum(exposition: string, name: string): number {
  return exposition
    .split('\n')
    .filter((text) => text.startsWith(`${name}{`) || text.startsWith(`${name} `))
    .reduce((sum, text) => sum + Number(text.slice(text.lastIndexOf(' ') + 1)), 0);
}

async function scrape(metricsPort: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  return response.text();
}

async function sample(aviso: AvisoProcess, metricsPort: number, startedMs: number, tally: Tally): Promise<Sample> {
  const exposition = await scrape(metricsPort);
  return {
    atS: round((performance.now() - startedMs) / 1000, 3),
    rssBytes: readRssBytes(aviso.pid),
    lagS: gauge(exposition, 'nodejs_eventloop_lag_seconds'),
    lagP50S: gauge(exposition, 'nodejs_eventloop_lag_p50_seconds'),
    lagP99S: gauge(exposition, 'nodejs_eventloop_lag_p99_seconds'),
    lagMaxS: gauge(exposition, 'nodejs_eventloop_lag_max_seconds'),
    activeStreams: labelledSum(exposition, 'aviso_sse_connections_active'),
    notifiesAcked: tally.notifiesAcked,
  };
}

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
const ms = (seconds: number): string => (seconds * 1000).toFixed(2);

function printSample(s: Sample): void {
  process.stdout.write(
    `t=${String(Math.round(s.atS)).padStart(4)} s  rss ${mb(s.rssBytes).padStart(6)} MiB  ` +
      `lag p50 ${ms(s.lagP50S)} p99 ${ms(s.lagP99S)} max ${ms(s.lagMaxS)} ms  ` +
      `streams ${s.activeStreams}  notifies acked ${s.notifiesAcked}\n`,
  );
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const durationMs = options.minutes * 60_000;
  process.stdout.write(
    `aviso-ts soak: ${options.minutes} min on ${options.backend}, ${options.rate} notifies/s, ` +
      `${options.watchers} churning watchers, ${SLOW_READERS} slow readers, a replay every ${REPLAY_EVERY_MS / 1000} s\n`,
  );

  let nats: PrivateNats | undefined;
  let aviso: AvisoProcess | undefined;
  const tally = new Tally();
  const samples: Sample[] = [];
  let leakedStreams: number;
  try {
    nats = options.backend === 'jetstream' ? await startPrivateNats() : undefined;
    const metricsPort = await findFreePort();
    const config = {
      ...benchConfig({
        schemas: { mars: exampleSchema('mars') },
        backend: nats ? { kind: 'jetstream', natsUrl: nats.url } : { kind: 'in_memory' },
        // Small enough that a slow reader can be closed as a slow consumer within a run.
        watchEndpoint: { max_buffered_events: 256 },
      }),
      metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
    };
    aviso = await startAviso({ config });
    const origin = new URL(aviso.url);
    const startedMs = performance.now();
    const first = await sample(aviso, metricsPort, startedMs, tally);
    samples.push(first);
    printSample(first);

    const stop = new AbortController();
    // Every open stream listens for the end of the run.
    setMaxListeners(0, stop.signal);
    const client = new NotifyClient(aviso.url);
    const highest = { sequence: 0 };
    const loads = Promise.all([
      notifyLoad(client, options.rate, tally, stop.signal),
      watchChurn(origin, options.watchers, tally, stop.signal, highest),
      slowReaders(origin, tally, stop.signal),
      replays(origin, tally, stop.signal, highest),
    ]);
    const sampler = (async () => {
      let next = startedMs + SAMPLE_EVERY_MS;
      while (!stop.signal.aborted) {
        await sleep(Math.max(0, Math.min(next, startedMs + durationMs) - performance.now()));
        if (performance.now() >= startedMs + durationMs) break;
        const current = await sample(aviso, metricsPort, startedMs, tally);
        samples.push(current);
        printSample(current);
        next += SAMPLE_EVERY_MS;
      }
    })();
    await sleep(durationMs);
    stop.abort();
    await Promise.all([loads, sampler]);
    client.close();
    const last = await sample(aviso, metricsPort, startedMs, tally);
    samples.push(last);
    printSample(last);

    // Every client left: the server must count no open stream any more.
    const deadline = Date.now() + 10_000;
    for (;;) {
      leakedStreams = labelledSum(await scrape(metricsPort), 'aviso_sse_connections_active');
      if (leakedStreams === 0 || Date.now() > deadline) break;
      await sleep(200);
    }
    if (leakedStreams !== 0) tally.problem(`${leakedStreams} streams still counted open 10 s after every client left`);
  } finally {
    await aviso?.stop();
    await nats?.stop();
  }

  const rss = samples.map((s) => s.rssBytes);
  const windows = samples.slice(1).filter((s) => Number.isFinite(s.lagP99S));
  const sortedOf = (values: number[]): number[] => [...values].sort((a, b) => a - b);
  const summary = {
    rss_mib: {
      start: round((rss[0] as number) / 1024 / 1024),
      max: round(Math.max(...rss) / 1024 / 1024),
      end: round((rss.at(-1) as number) / 1024 / 1024),
    },
    // Per 10 s window (prom-client resets its event-loop histogram at every scrape): the median of
    // the windows' p50, the highest window p99 and the highest single delay.
    event_loop_lag_ms: {
      p50: round(percentileOfSorted(sortedOf(windows.map((s) => s.lagP50S)), 50) * 1000),
      p99: round(Math.max(...windows.map((s) => s.lagP99S)) * 1000),
      max: round(Math.max(...windows.map((s) => s.lagMaxS)) * 1000),
    },
    notifies: { sent: tally.notifiesSent, acked: tally.notifiesAcked, failed: tally.notifiesFailed },
    watches_opened: tally.watchesOpened,
    watch_events: tally.watchEvents,
    replays: tally.replays,
    replay_events: tally.replayEvents,
    slow_consumer_closes: tally.slowConsumerCloses,
    streams_open_after_clients_left: leakedStreams,
    errors: tally.problems.length,
  };
  writeFileSync(
    RESULTS_FILE,
    `${JSON.stringify({ options, summary, problems: tally.problems, samples, finished_at: new Date().toISOString() }, null, 2)}\n`,
  );

  const rows: [string, string][] = [
    ['RSS start / max / end', `${summary.rss_mib.start} / ${summary.rss_mib.max} / ${summary.rss_mib.end} MiB`],
    [
      'event-loop lag p50 / p99 / max',
      `${summary.event_loop_lag_ms.p50} / ${summary.event_loop_lag_ms.p99} / ${summary.event_loop_lag_ms.max} ms`,
    ],
    ['notifies sent / acked / failed', `${tally.notifiesSent} / ${tally.notifiesAcked} / ${tally.notifiesFailed}`],
    ['watches opened / events received', `${tally.watchesOpened} / ${tally.watchEvents}`],
    ['replays / events replayed', `${tally.replays} / ${tally.replayEvents}`],
    ['slow_consumer closes (expected)', String(tally.slowConsumerCloses)],
    ['errors', String(tally.problems.length)],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  process.stdout.write(`\n| ${'measure'.padEnd(width)} | value |\n|${'-'.repeat(width + 2)}|-------|\n`);
  for (const [name, value] of rows) process.stdout.write(`| ${name.padEnd(width)} | ${value} |\n`);
  for (const problem of tally.problems) process.stdout.write(`problem: ${problem}\n`);
  process.stdout.write(`\nresults written to ${RESULTS_FILE}\n`);
  return tally.problems.length === 0 ? 0 : 1;
}

process.exit(await main());
