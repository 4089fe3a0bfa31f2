import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { startAviso } from '../support/aviso-process.js';
import { assertAllOk, runAutocannon, type AutocannonResult } from '../support/autocannon-run.js';
import { interleaved } from '../support/interleave.js';
import { MARS_NOTIFICATION } from '../support/notifications.js';
import { Worker } from '../support/processes.js';
import type { ReadyMessage } from '../support/ready.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { median, round } from '../support/stats.js';

/**
 * notify req/s of aviso on the in-memory backend at 50 connections (autocannon in its own process,
 * the mars example of docs/api.md) against a bare fastify POST route that parses the same body
 * (its own process). Both servers run side by side, idle while the other is measured; the runs
 * alternate, and each side's value is the median of its runs.
 */
const CONNECTIONS = 50;
const SIZES = {
  full: { rounds: 3, warmupSeconds: 3, durationSeconds: 5 },
  quick: { rounds: 1, warmupSeconds: 1, durationSeconds: 2 },
};

export const notifyMemory: Scenario = {
  name: 'notify_memory',
  target: 'ratio ≥ 0.50',
  async run(context: ScenarioContext) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const body = JSON.stringify(MARS_NOTIFICATION);
    const load = (url: string, round: number): Promise<AutocannonResult> =>
      runAutocannon({
        url,
        body,
        connections: CONNECTIONS,
        warmupSeconds: round === 0 ? size.warmupSeconds : 0,
        durationSeconds: size.durationSeconds,
      });

    const aviso = await startAviso({
      config: benchConfig({ schemas: { mars: exampleSchema('mars') }, backend: { kind: 'in_memory' } }),
    });
    const server = Worker.start('baselines/fastify-notify-server', {});
    let runs: { measured: AutocannonResult[]; baseline: AutocannonResult[] };
    try {
      const { port } = await server.next<ReadyMessage>('ready', 15_000);
      runs = await interleaved(
        size.rounds,
        (r) => load(`${aviso.url}/api/v1/notification`, r),
        (r) => load(`http://127.0.0.1:${port}/api/v1/notification`, r),
      );
    } finally {
      await Promise.all([aviso.stop(), server.stop()]);
    }

    const problems: string[] = [];
    for (const run of runs.measured) {
      try {
        assertAllOk('aviso notify', run);
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    for (const run of runs.baseline) assertAllOk('fastify baseline', run);
    const value = median(runs.measured.map((run) => run.requestsPerSecond));
    const baseline = median(runs.baseline.map((run) => run.requestsPerSecond));
    const p50 = median(runs.measured.map((run) => run.latencyP50Ms));
    const p99 = median(runs.measured.map((run) => run.latencyP99Ms));
    const baselineP50 = median(runs.baseline.map((run) => run.latencyP50Ms));
    const baselineP99 = median(runs.baseline.map((run) => run.latencyP99Ms));
    const non2xx = runs.measured.reduce((sum, run) => sum + run.non2xx, 0);
    return {
      value: round(value),
      unit: 'req/s',
      baseline: round(baseline),
      ratio: round(value / baseline, 3),
      pass: value / baseline >= 0.5,
      problems,
      summary: `p50/p99 ${p50}/${p99} ms (baseline ${baselineP50}/${baselineP99}), non-2xx ${non2xx}`,
      extra: {
        connections: CONNECTIONS,
        rounds: size.rounds,
        duration_s: size.durationSeconds,
        runs_req_s: runs.measured.map((run) => round(run.requestsPerSecond)),
        baseline_runs_req_s: runs.baseline.map((run) => round(run.requestsPerSecond)),
        requests: runs.measured.reduce((sum, run) => sum + run.ok, 0),
        non2xx,
        errors: runs.measured.reduce((sum, run) => sum + run.errors, 0),
        p50_ms: p50,
        p99_ms: p99,
        baseline_p50_ms: baselineP50,
        baseline_p99_ms: baselineP99,
      },
    };
  },
};
