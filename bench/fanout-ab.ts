import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openFanoutSession, type CapacityPlan, type FanoutSession, type Step } from './support/fanout-capacity-side.js';
import { startAvisoTarget, type FanoutTarget } from './support/fanout-targets.js';
import { profileChildrenInto } from './support/processes.js';
import { pairedSummary, runsVerdict, sidesInRound } from './support/interleave.js';
import { median, round } from './support/stats.js';

/**
 * A/B of the live fan-out of two builds (`node dist/bench/fanout-ab.js --a OLD/dist/src/main.js
 * [--b dist/src/main.js] [--backend jetstream] [--watchers 10000] [--rate 1] [--seconds 10]
 * [--rounds 4] [--runs 2] [--metrics] [--profile-dir DIR]`): both servers hold W watchers of one
 * topic (the `fanout_capacity` fleet, two reader processes each), and fixed-rate steps alternate
 * between them (A B, then B A, and so on). Each step reports the server's CPU per delivery, and p99
 * and max publish → receipt; with one notification a second to 10,000 watchers, max is the time
 * from acceptance to the last frame read. CPU per delivery moves less than latency when other work
 * shares the machine: it is the number to keep a change by.
 *
 * A server process keeps a bias of its own for its whole life: the same build on both sides came
 * out 5 % cheaper on one side in one run and 4 % dearer on that side in the next (bench/HISTORY.md
 * "The live phase's fan-out cost"), so the rounds of one run are not independent. Each of `--runs`
 * starts both servers afresh (the second run starts B first), and the verdict is the median over
 * the runs of each run's median B ÷ A.
 */
const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist/src/main.js' },
    backend: { type: 'string', default: 'in_memory' },
    watchers: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '4' },
    runs: { type: 'string', default: '2' },
    // Both servers serve Prometheus metrics, as production does.
    metrics: { type: 'boolean', default: false },
    // Every child process (servers, fleets) with --cpu-prof, profiles in this directory.
    'profile-dir': { type: 'string' },
  },
});
if (values['profile-dir'] !== undefined) {
  mkdirSync(values['profile-dir'], { recursive: true });
  profileChildrenInto(resolve(values['profile-dir']));
}
if (values.a === undefined) throw new Error('--a <main.js of the other build> is required');
const backend = values.backend === 'jetstream' ? 'jetstream' : 'in_memory';
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const runs = Number(values.runs);
const plan: CapacityPlan = {
  watchers: Number(values.watchers),
  startRate: rate,
  stepSeconds: seconds,
  warmupSeconds: 2,
  bisections: 0,
  retries: 0,
  p99LimitMs: 100,
  maxDeliveriesPerSecond: Number.POSITIVE_INFINITY,
  fleetProcesses: 2,
  reader: 'raw-socket',
  drainStallMs: 5_000,
};

interface Side {
  readonly label: string;
  readonly target: FanoutTarget;
  readonly session: FanoutSession;
  readonly steps: Step[];
}

async function openSide(label: string, entry: string): Promise<Side> {
  const target = await startAvisoTarget({
    name: `aviso_${label}`,
    backend,
    application: {},
    entry: resolve(entry),
    metrics: values.metrics === true,
  });
  try {
    const session = await openFanoutSession(target, plan);
    return { label, target, session, steps: [] };
  } catch (error) {
    await target.stop();
    throw error;
  }
}

function line(side: Side, round_: number, step: Step): string {
  return (
    `round ${round_} ${side.label}: ${round(step.serverCpuMicrosPerDelivery)} µs CPU/delivery, p99 ${round(step.p99Ms)} ms, ` +
    `max ${round(step.maxMs)} ms, lost ${step.lost}${step.failedBy.length > 0 ? ` (${step.failedBy.join(', ')})` : ''}`
  );
}

process.stdout.write(
  `fanout A/B: ${plan.watchers} watchers, ${rate}/s, ${seconds} s steps, ${rounds} rounds × ${runs} runs, ${backend}, ` +
    `load average ${loadavg()[0]?.toFixed(2)}\n`,
);

/** One run: both servers started afresh (B first in odd runs), warmed up, then `rounds` pairs of steps. */
async function runOnce(run: number): Promise<{ a: Side; b: Side }> {
  const opened: Side[] = [];
  try {
    for (const [label, entry] of sidesInRound(run, ['A', values.a as string] as const, ['B', values.b] as const)) {
      opened.push(await openSide(label, entry));
    }
    const a = opened.find((side) => side.label === 'A') as Side;
    const b = opened.find((side) => side.label === 'B') as Side;
    for (const side of opened) await side.session.step(rate, plan.warmupSeconds);
    for (let r = 0; r < rounds; r++) {
      for (const side of sidesInRound(r, a, b)) {
        const step = await side.session.step(rate, seconds);
        side.steps.push(step);
        process.stdout.write(`run ${run} ${line(side, r, step)}\n`);
      }
    }
    return { a, b };
  } finally {
    for (const side of opened) {
      await side.session.stop();
      await side.target.stop();
    }
  }
}

const cpuOf = (side: Side): number[] => side.steps.map((step) => step.serverCpuMicrosPerDelivery);
const all: Record<'A' | 'B', Step[]> = { A: [], B: [] };
const runRatios: number[] = [];
for (let run = 0; run < runs; run++) {
  const { a, b } = await runOnce(run);
  all.A.push(...a.steps);
  all.B.push(...b.steps);
  for (const side of [a, b]) {
    if (side.session.problems.length > 0) process.stdout.write(`run ${run} ${side.label} problems: ${side.session.problems.join('; ')}\n`);
  }
  runRatios.push(median(cpuOf(b)) / median(cpuOf(a)));
  process.stdout.write(`run ${run}: CPU per delivery, ${pairedSummary(cpuOf(a), cpuOf(b))}\n`);
}
for (const label of ['A', 'B'] as const) {
  const of = (pick: (step: Step) => number): number => round(median(all[label].map(pick)));
  process.stdout.write(
    `${label}: median ${of((s) => s.serverCpuMicrosPerDelivery)} µs CPU/delivery, p99 ${of((s) => s.p99Ms)} ms, max ${of((s) => s.maxMs)} ms\n`,
  );
}
process.stdout.write(`B ÷ A of CPU per delivery, ${runsVerdict(runRatios)}\n`);
process.stdout.write(`load average at the end ${loadavg()[0]?.toFixed(2)}\n`);
process.exit(0);
