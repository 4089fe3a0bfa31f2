import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { stringify } from 'yaml';
import { findFreePort } from '../test/support/ports.js';
import { benchConfig, exampleSchema } from './support/aviso-config.js';
import { makeTempDir, removeTempDir, stopChild, trackChild } from './support/processes.js';
import { MARS_NOTIFICATION } from './support/notifications.js';
import { median, round } from './support/stats.js';

/**
 * A/B of the notify path of two builds in machine instructions, not seconds
 * (`node dist/bench/instructions-ab.js --a OLD/dist/src/main.js [--b dist/src/main.js]
 * [--requests 3000] [--warmup 4000] [--rounds 2] [--connections 10]`).
 *
 * Each side runs under `valgrind --tool=callgrind` with instrumentation off while it starts and
 * warms up; it is switched on (`callgrind_control -i on`) for exactly `--requests` notifies, and
 * the count of instructions the server executed for them is divided by the requests. An
 * instruction count does not include the time other work takes from the server, but it still
 * moves by up to 8 % between runs of one build (2026-12-05, bench/HISTORY.md "A lighter single
 * notify"): how many requests share an event-loop turn, and so the work per request, follows the
 * machine's load. Use it for changes larger than that. It does not see cache misses, system
 * calls' kernel time or the length of GC pauses.
 */
const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist/src/main.js' },
    requests: { type: 'string', default: '3000' },
    warmup: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
  },
});
if (values.a === undefined) throw new Error('--a <main.js of the other build> is required');
const requests = Number(values.requests);
const warmup = Number(values.warmup);
const connections = Number(values.connections);
const body = JSON.stringify(MARS_NOTIFICATION);

interface Side {
  readonly label: string;
  readonly entry: string;
}

/** Notifies `amount` times at `connections` concurrent connections; every answer must be 2xx. */
async function load(url: string, amount: number): Promise<void> {
  const result = await autocannon({
    url: `${url}/api/v1/notification`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    amount,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error('server did not become healthy under valgrind within 60 s');
}

/** Instructions per notify of one side, measured once. */
async function measure(side: Side): Promise<number> {
  const dir = makeTempDir('aviso-instr');
  const port = await findFreePort();
  const config = benchConfig({ schemas: { mars: exampleSchema('mars') }, backend: { kind: 'in_memory' }, application: { port } });
  const configFile = join(dir, 'config.yaml');
  writeFileSync(configFile, stringify(config));
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(dir, 'callgrind.out')}`, process.execPath, resolve(side.entry)],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: dir, AVISOSERVER_CONFIG_FILE: configFile },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  trackChild(child);
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitForHealth(url, child);
    await load(url, warmup);
    const pid = String(child.pid);
    execFileSync('callgrind_control', ['-i', 'on', pid], { stdio: 'ignore' });
    await load(url, requests);
    execFileSync('callgrind_control', ['-i', 'off', pid], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-d', pid], { stdio: 'ignore' });
    // The dump is written by the server's own thread at its next scheduling point.
    await sleep(1000);
    const instructions = dumpedInstructions(dir);
    return round(instructions / requests);
  } finally {
    await stopChild(child, 'SIGKILL', 10_000);
    removeTempDir(dir);
  }
}

/** The sum of the instruction totals of every dump callgrind wrote in `dir`. */
function dumpedInstructions(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir).filter((file) => file.startsWith('callgrind.out'))) {
    const match = /^totals:\s+(\d+)/m.exec(readFileSync(join(dir, name), 'utf8'));
    if (match) total += Number(match[1]);
  }
  if (total === 0) throw new Error('callgrind wrote no instruction count');
  return total;
}

const sides: readonly Side[] = [
  { label: 'A', entry: values.a },
  { label: 'B', entry: values.b },
];
const counts: Record<string, number[]> = { A: [], B: [] };
for (let r = 0; r < Number(values.rounds); r++) {
  for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
    const perRequest = await measure(side);
    counts[side.label]?.push(perRequest);
    process.stdout.write(`round ${r} ${side.label}: ${perRequest} instructions/notify\n`);
  }
}
for (const side of sides) process.stdout.write(`${side.label}: median ${median(counts[side.label] ?? [])} instructions/notify\n`);
process.exit(0);
