import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { startAviso } from '../support/aviso-process.js';
import { assertAllOk, runAutocannon, type AutocannonResult } from '../support/autocannon-run.js';
import { NCHAN_PUBLISH_PATH, nchanUnavailableReason, startNchan, type NchanServer } from '../support/nchan.js';
import { MARS_NOTIFICATION } from '../support/notifications.js';
import { Worker } from '../support/processes.js';
import type { ReadyMessage } from '../support/ready.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { median, round } from '../support/stats.js';

/**
 * notify req/s of aviso on the in-memory backend at 50 connections (autocannon in its own process,
 * the mars example of docs/api.md) against a bare fastify POST route that parses the same body
 * (its own process). Beside it, Nchan's publisher location (nginx, one worker, `support/nchan.ts`)
 * under the same load and body, when nginx and the module are installed (`ratio_vs_nchan`). The
 * servers run side by side, idle while another is measured; the runs alternate (A B C A B C …),
 * and each side's value is the median of its runs.
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
    const nchanUnavailable = nchanUnavailableReason();
    let nchan: NchanServer | undefined;
    const runs = { measured: [] as AutocannonResult[], baseline: [] as AutocannonResult[], nchan: [] as AutocannonResult[] };
    try {
      const { port } = await server.next<ReadyMessage>('ready', 15_000);
      if (nchanUnavailable === undefined) nchan = await startNchan({ connections: CONNECTIONS });
      for (let r = 0; r < size.rounds; r++) {
        runs.measured.push(await load(`${aviso.url}/api/v1/notification`, r));
        runs.baseline.push(await load(`http://127.0.0.1:${port}/api/v1/notification`, r));
        if (nchan !== undefined) runs.nchan.push(await load(`${nchan.url}${NCHAN_PUBLISH_PATH}`, r));
      }
    } finally {
      await Promise.all([aviso.stop(), server.stop(), nchan?.stop()]);
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
    for (const run of runs.nchan) assertAllOk('Nchan baseline', run);
    const nchanValue = runs.nchan.length === 0 ? Number.NaN : median(runs.nchan.map((run) => run.requestsPerSecond));
    const value = median(runs.measured.map((run) => run.requestsPerSecond));
    const baseline = median(runs.baseline.map((run) => run.requestsPerSecond));
    const p50 = median(runs.measured.map((run) => run.latencyP50Ms));
    const p99 = median(runs.measured.map((run) => run.latencyP99Ms));
    const baselineP50 = median(runs.baseline.map((run) => run.latencyP50Ms));
    const baselineP99 = median(runs.baseline.map((run) => run.latencyP99Ms));
    const non2xx = runs.measured.reduce((sum, run) => sum + run.non2xx, 0);
    const nchanSummary =
      nchanUnavailable === undefined
        ? `; Nchan ${round(nchanValue)} req/s (ratio ${round(value / nchanValue, 3)})`
        : '; Nchan not installed';
    return {
      value: round(value),
      unit: 'req/s',
      baseline: round(baseline),
      ratio: round(value / baseline, 3),
      pass: value / baseline >= 0.5,
      problems,
      summary: `p50/p99 ${p50}/${p99} ms (baseline ${baselineP50}/${baselineP99}), non-2xx ${non2xx}${nchanSummary}`,
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
        ...(nchanUnavailable === undefined
          ? {
              nchan_req_s: round(nchanValue),
              ratio_vs_nchan: round(value / nchanValue, 3),
              nchan_runs_req_s: runs.nchan.map((run) => round(run.requestsPerSecond)),
              nchan_p50_ms: median(runs.nchan.map((run) => run.latencyP50Ms)),
              nchan_p99_ms: median(runs.nchan.map((run) => run.latencyP99Ms)),
            }
          : { nchan_unavailable: nchanUnavailable }),
      },
    };
  },
};
