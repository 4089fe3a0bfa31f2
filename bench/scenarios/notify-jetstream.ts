import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamPublishCommand, JetStreamPublisherOptions, JetStreamPublisherResult } from '../baselines/jetstream-publisher.js';
import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { startAviso } from '../support/aviso-process.js';
import { assertAllOk, runAutocannon } from '../support/autocannon-run.js';
import { interleaved } from '../support/interleave.js';
import { startPrivateNats } from '../support/nats.js';
import { MARS_NOTIFICATION } from '../support/notifications.js';
import { Worker } from '../support/processes.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { median, round } from '../support/stats.js';
import { storedLayouts } from '../support/stored-layout.js';

/**
 * notify req/s of aviso on JetStream at 50 connections (autocannon in its own process) against raw
 * `js.publish` of the same message with 50 publishes in flight (its own process). One private
 * nats-server with file storage serves both; the mars schema gets
 * `storage_policy: { allow_duplicates: true }`, so every publish of the one topic is kept
 * (max_msgs_per_subject −1) instead of replacing the previous one. The baseline publishes into the
 * stream aviso created (its settings); the stream is purged before every run, and the runs of the
 * two sides alternate, each side's value being the median of its runs.
 */
const IN_FLIGHT = 50;
const STREAM = 'MARS';
const SIZES = {
  full: { rounds: 3, warmupSeconds: 3, durationSeconds: 5 },
  quick: { rounds: 1, warmupSeconds: 1, durationSeconds: 2 },
};

interface Run {
  readonly perSecond: number;
  readonly p50Ms: number | undefined;
  readonly p99Ms: number | undefined;
  readonly non2xx: number;
  readonly problem: string | undefined;
}

export const notifyJetStream: Scenario = {
  name: 'notify_jetstream',
  target: 'ratio ≥ 0.60',
  async run(context: ScenarioContext) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const schemas = { mars: exampleSchema('mars', { storage_policy: { allow_duplicates: true } }) };
    const body = JSON.stringify(MARS_NOTIFICATION);
    const nats = await startPrivateNats();
    try {
      const nc = await connect({ servers: nats.url });
      const aviso = await startAviso({ config: benchConfig({ schemas, backend: { kind: 'jetstream', natsUrl: nats.url } }) });
      const publisherOptions: JetStreamPublisherOptions = { natsUrl: nats.url, message: storedLayouts(schemas)(body), inFlight: IN_FLIGHT };
      const publisher = Worker.start<JetStreamPublishCommand>('baselines/jetstream-publisher', publisherOptions);
      let runs: { measured: Run[]; baseline: Run[] };
      try {
        await publisher.next('ready', 15_000);
        const jsm = await jetstreamManager(nc);
        // The stream exists once aviso stored something: create it the way aviso does.
        const created = await fetch(`${aviso.url}/api/v1/notification`, { method: 'POST', body });
        if (created.status !== 200) throw new Error(`the first notify answered ${created.status}: ${await created.text()}`);
        runs = await interleaved<Run>(
          size.rounds,
          async (r) => {
            await jsm.streams.purge(STREAM);
            const result = await runAutocannon({
              url: `${aviso.url}/api/v1/notification`,
              body,
              connections: IN_FLIGHT,
              warmupSeconds: r === 0 ? size.warmupSeconds : 0,
              durationSeconds: size.durationSeconds,
            });
            let problem: string | undefined;
            try {
              assertAllOk('aviso notify', result);
            } catch (error) {
              problem = (error as Error).message;
            }
            return { perSecond: result.requestsPerSecond, p50Ms: result.latencyP50Ms, p99Ms: result.latencyP99Ms, non2xx: result.non2xx, problem };
          },
          async (r) => {
            await jsm.streams.purge(STREAM);
            publisher.send({ type: 'run', warmupSeconds: r === 0 ? size.warmupSeconds : 0, durationSeconds: size.durationSeconds });
            const result = await publisher.next<JetStreamPublisherResult>('result', (size.warmupSeconds + size.durationSeconds + 30) * 1000);
            if (result.failed > 0) throw new Error(`raw publish baseline: ${result.failed} publishes failed`);
            return { perSecond: result.messagesPerSecond, p50Ms: undefined, p99Ms: undefined, non2xx: 0, problem: undefined };
          },
        );
      } finally {
        await Promise.all([aviso.stop(), publisher.stop()]);
        await nc.close();
      }

      const value = median(runs.measured.map((run) => run.perSecond));
      const baseline = median(runs.baseline.map((run) => run.perSecond));
      const p50 = median(runs.measured.map((run) => run.p50Ms ?? Number.NaN));
      const p99 = median(runs.measured.map((run) => run.p99Ms ?? Number.NaN));
      const non2xx = runs.measured.reduce((sum, run) => sum + run.non2xx, 0);
      return {
        value: round(value),
        unit: 'req/s',
        baseline: round(baseline),
        ratio: round(value / baseline, 3),
        pass: value / baseline >= 0.6,
        problems: runs.measured.flatMap((run) => (run.problem ? [run.problem] : [])),
        summary: `p50/p99 ${p50}/${p99} ms, non-2xx ${non2xx}`,
        extra: {
          in_flight: IN_FLIGHT,
          rounds: size.rounds,
          duration_s: size.durationSeconds,
          storage: 'file; mars with allow_duplicates: true; one topic; a Nats-Msg-Id per message on both sides',
          runs_req_s: runs.measured.map((run) => round(run.perSecond)),
          baseline_runs_msg_s: runs.baseline.map((run) => round(run.perSecond)),
          p50_ms: p50,
          p99_ms: p99,
          non2xx,
        },
      };
    } finally {
      await nats.stop();
    }
  },
};
