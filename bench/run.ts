import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseBenchArgs, USAGE } from './support/args.js';
import { machineMeta } from './support/machine.js';
import { RESULTS_FILE, ROOT } from './support/paths.js';
import { renderNotes, renderTable, verdict, writeResults, type Outcome } from './support/report.js';
import { profileChildrenInto } from './support/processes.js';
import type { Scenario } from './support/scenario.js';
import { dispatch } from './scenarios/dispatch.js';
import { fanout } from './scenarios/fanout.js';
import { fanoutCapacity } from './scenarios/fanout-capacity.js';
import { fanoutSelective } from './scenarios/fanout-selective.js';
import { idleWatchers } from './scenarios/idle-watchers.js';
import { match } from './scenarios/match.js';
import { notifyBatchJetStream, notifyBatchMemory } from './scenarios/notify-batch.js';
import { notifyJetStream } from './scenarios/notify-jetstream.js';
import { notifyJetStreamIdempotent, notifyMemoryIdempotent } from './scenarios/notify-idempotent.js';
import { notifyMemory } from './scenarios/notify-memory.js';
import { replay } from './scenarios/replay.js';

/**
 * The one entry point of the benchmarks (`npm run bench [-- --quick] [-- --only a,b]`): runs each
 * scenario in turn, prints the table and writes bench/results.json. A scenario that fails is
 * reported and the others still run; the exit status is 1 when any scenario errored or found a
 * correctness problem (a missed target alone is reported, not an error).
 */
const SCENARIOS: readonly Scenario[] = [
  notifyMemory,
  notifyMemoryIdempotent,
  notifyJetStream,
  notifyJetStreamIdempotent,
  notifyBatchMemory,
  notifyBatchJetStream,
  fanout,
  fanoutCapacity,
  fanoutSelective,
  replay,
  idleWatchers,
  match,
  dispatch,
];

async function main(): Promise<number> {
  let args;
  try {
    args = parseBenchArgs(process.argv.slice(2), join(ROOT, 'bench/profiles'));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const unknown = args.only.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
  if (unknown.length > 0) {
    process.stderr.write(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}\n`);
    return 2;
  }
  const selected = args.only.length === 0 ? SCENARIOS : SCENARIOS.filter((scenario) => args.only.includes(scenario.name));
  if (args.profileDir) {
    mkdirSync(args.profileDir, { recursive: true });
    profileChildrenInto(args.profileDir);
  }

  const meta = machineMeta(
    args.quick,
    selected.map((scenario) => scenario.name),
  );
  const started = performance.now();
  process.stdout.write(`aviso-ts benchmarks (${meta.mode}) on ${meta.cpu_model}, ${meta.cores} cores, Node ${meta.node}\n`);

  const outcomes: Outcome[] = [];
  for (const scenario of selected) {
    const scenarioStarted = performance.now();
    process.stdout.write(`\n▶ ${scenario.name} … `);
    let outcome: Outcome;
    try {
      const measurement = await scenario.run({ quick: args.quick });
      outcome = { name: scenario.name, target: scenario.target, measurement };
    } catch (error) {
      outcome = { name: scenario.name, target: scenario.target, error: error instanceof Error ? error.message : String(error) };
    }
    outcomes.push(outcome);
    const seconds = ((performance.now() - scenarioStarted) / 1000).toFixed(1);
    if ('error' in outcome) process.stdout.write(`ERROR after ${seconds} s: ${outcome.error}\n`);
    else {
      const m = outcome.measurement;
      process.stdout.write(`${m.value} ${m.unit} vs ${m.baseline} (ratio ${m.ratio}) ${verdict(outcome)} in ${seconds} s\n`);
    }
  }

  const durationSeconds = Number(((performance.now() - started) / 1000).toFixed(1));
  writeResults(RESULTS_FILE, outcomes, { ...meta, duration_s: durationSeconds });
  process.stdout.write(`\n${renderTable(outcomes)}\n`);
  const notes = renderNotes(outcomes);
  if (notes.length > 0) process.stdout.write(`\n${notes.join('\n')}\n`);
  process.stdout.write(`\nwrote ${RESULTS_FILE} (${durationSeconds} s)\n`);
  return outcomes.some((outcome) => verdict(outcome) === 'ERROR' || verdict(outcome) === 'FAIL') ? 1 : 0;
}

// Exits explicitly: the exit hook kills any child a failed scenario left behind.
process.exit(await main());
