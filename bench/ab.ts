import { parseArgs } from 'node:util';
import { findFreePort } from '../test/support/nats-server.js';
import { resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { benchConfig, exampleSchema } from './support/aviso-config.js';
import { startAviso, type AvisoProcess } from './support/aviso-process.js';
import { assertAllOk, runAutocannon } from './support/autocannon-run.js';
import { cpuSplitSeconds } from './support/cpu-time.js';
import { interleaved, pairedSummary, runsVerdict, sidesInRound } from './support/interleave.js';
import { startPrivateNats } from './support/nats.js';
import { MARS_NOTIFICATION } from './support/notifications.js';
import { median, round } from './support/stats.js';
import { parse as parseYaml } from 'yaml';

/**
 * A/B of the notify path of two builds (`node dist/bench/ab.js --a OLD/dist/src/main.js
 * [--b dist/src/main.js] [--backend jetstream] [--rounds 4] [--runs 2] [--seconds 4] [--a-level warn]
 * [--b-level warn] [--a-set path=value …] [--b-set path=value …] [--distinct-topics]`): both
 * servers run side by side with the bench's configuration, autocannon loads them in turn (A B,
 * then B A, and so on), and each load reports req/s and the server's CPU per request (user +
 * system, and user alone, from /proc over the load, divided by the 2xx answers). CPU per request
 * moves much less than req/s when other work shares the machine, so it is the number to compare.
 * One server process can keep a bias of its own for its life (the same two builds came out 1.40,
 * 1.07 and 0.83 apart in three runs minutes apart: bench/HISTORY.md "A bias that lives with a
 * server process"). Each of `--runs` starts both afresh (B first in odd runs), and the verdict is
 * the median over runs of B ÷ A.
 */
const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist/src/main.js' },
    backend: { type: 'string', default: 'in_memory' },
    rounds: { type: 'string', default: '4' },
    // Fresh pairs of servers: one server process can keep a bias of its own for its life.
    runs: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '50' },
    // Each side's log level (e.g. `warn`: no per-request lines), to measure what the lines cost
    // with either process in either role.
    'a-level': { type: 'string', default: 'info' },
    'b-level': { type: 'string', default: 'info' },
    // A setting of one side only, `dotted.path=value` (the value read as YAML), repeatable: to
    // measure what one setting costs with the same build on both sides, e.g.
    // `--a-set notification_backend.in_memory.persist_sequences=false`.
    'a-set': { type: 'string', multiple: true, default: [] },
    // Each request a topic of its own (the step counts up) instead of one topic for all.
    'distinct-topics': { type: 'boolean', default: false },
    'b-set': { type: 'string', multiple: true, default: [] },
  },
});
if (values.a === undefined) throw new Error('--a <main.js of the other build> is required');
const rounds = Number(values.rounds);
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const body = JSON.stringify(MARS_NOTIFICATION);
const jetStream = values.backend === 'jetstream';
const schemas = { mars: exampleSchema('mars', jetStream ? { storage_policy: { allow_duplicates: true } } : {}) };

const nats = jetStream ? await startPrivateNats() : undefined;
const config = benchConfig({ schemas, backend: nats ? { kind: 'jetstream', natsUrl: nats.url } : { kind: 'in_memory' } });
/** `config` with each `dotted.path=value` setting applied. */
function withSettings(base: Record<string, unknown>, settings: readonly string[]): Record<string, unknown> {
  const result = structuredClone(base);
  for (const setting of settings) {
    const at = setting.indexOf('=');
    if (at < 1) throw new Error(`--a-set/--b-set take path=value, got '${setting}'`);
    const path = setting.slice(0, at).split('.');
    let node = result;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      node = (node[key] = typeof next === 'object' && next !== null ? next : {}) as Record<string, unknown>;
    }
    node[path.at(-1) as string] = parseYaml(setting.slice(at + 1));
  }
  return result;
}
/** A side whose level hides `startup.server.started` gets a fixed free port and is awaited on `/health`. */
async function startSide(entry: string, level: string, settings: readonly string[]): Promise<AvisoProcess> {
  const own = withSettings(config, settings);
  if (level === 'info' || level === 'debug' || level === 'trace') {
    return startAviso({ config: { ...own, logging: { level } }, entry: resolve(entry) });
  }
  const port = await findFreePort();
  const application = { ...(own.application as Record<string, unknown>), port };
  return startAviso({ config: { ...own, application, logging: { level } }, entry: resolve(entry), port });
}
const nc = nats ? await connect({ servers: nats.url }) : undefined;
interface Run {
  readonly perSecond: number;
  /** User + system CPU per 2xx answer, µs; `userMicros` the user part alone (the JavaScript). */
  readonly cpuMicros: number;
  readonly userMicros: number;
}
/** One autocannon run against one side, printed as it ends. */
function measureSide([label, aviso]: [string, AvisoProcess], runIndex: number): (round: number) => Promise<Run> {
  return async (r) => {
    if (nc) await (await jetstreamManager(nc)).streams.purge('MARS');
    const before = cpuSplitSeconds(aviso.pid);
    const result = await runAutocannon({
      url: `${aviso.url}/api/v1/notification`,
      body,
      connections,
      warmupSeconds: 0,
      durationSeconds: seconds,
      distinctTopics: values['distinct-topics'] === true,
    });
    const after = cpuSplitSeconds(aviso.pid);
    assertAllOk(label, result);
    const perRequest = (seconds: number): number => round((seconds * 1e6) / result.ok);
    const measured = {
      perSecond: round(result.requestsPerSecond),
      userMicros: perRequest(after.user - before.user),
      cpuMicros: perRequest(after.user + after.system - before.user - before.system),
    };
    process.stdout.write(
      `run ${runIndex} round ${r} ${label}: ${measured.perSecond} req/s, CPU ${measured.cpuMicros} µs/request (user ${measured.userMicros})\n`,
    );
    return measured;
  };
}
/** One run: both servers started afresh (B first in odd runs), warmed up, then `rounds` pairs. */
async function runOnce(run: number): Promise<{ A: Run[]; B: Run[] }> {
  const started: [string, AvisoProcess][] = [];
  try {
    const order = sidesInRound(
      run,
      ['A', values.a as string, values['a-level'], values['a-set']] as const,
      ['B', values.b, values['b-level'], values['b-set']] as const,
    );
    for (const [label, entry, level, settings] of order) started.push([label, await startSide(entry, level, settings ?? [])]);
    for (const [, aviso] of started) {
      const warm = await runAutocannon({
        url: `${aviso.url}/api/v1/notification`,
        body,
        connections,
        warmupSeconds: 0,
        durationSeconds: 2,
      });
      assertAllOk('warm-up', warm);
    }
    const a = started.find(([label]) => label === 'A') as [string, AvisoProcess];
    const b = started.find(([label]) => label === 'B') as [string, AvisoProcess];
    // A B, then B A, and so on: each side is measured second as often as first.
    const measured = await interleaved(rounds, measureSide(a, run), measureSide(b, run));
    return { A: measured.measured, B: measured.baseline };
  } finally {
    await Promise.all(started.map(([, aviso]) => aviso.stop()));
  }
}

const results: Record<'A' | 'B', Run[]> = { A: [], B: [] };
const runRatios: number[] = [];
const cpuOf = (list: readonly Run[]): number[] => list.map((one) => one.cpuMicros);
try {
  for (let run = 0; run < runs; run++) {
    const measured = await runOnce(run);
    results.A.push(...measured.A);
    results.B.push(...measured.B);
    runRatios.push(median(cpuOf(measured.B)) / median(cpuOf(measured.A)));
    process.stdout.write(`run ${run}: CPU per request, ${pairedSummary(cpuOf(measured.A), cpuOf(measured.B))}\n`);
  }
} finally {
  await nc?.close();
  await nats?.stop();
}
for (const label of ['A', 'B'] as const) {
  const list = results[label];
  process.stdout.write(
    `${label}: median ${median(list.map((one) => one.perSecond))} req/s, CPU ${median(list.map((one) => one.cpuMicros))} µs/request ` +
      `(user ${median(list.map((one) => one.userMicros))})\n`,
  );
}
process.stdout.write(`B ÷ A of CPU per request, ${runsVerdict(runRatios)}\n`);
process.exit(0);
