import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { FastifyPublishOptions } from '../baselines/fastify-publish-server.js';
import type { JetStreamPublishCommand, JetStreamPublisherOptions, JetStreamPublisherResult } from '../baselines/jetstream-publisher.js';
import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { startAviso } from '../support/aviso-process.js';
import { assertAllOk, runAutocannon } from '../support/autocannon-run.js';
import { startPrivateNats } from '../support/nats.js';
import { MARS_NOTIFICATION } from '../support/notifications.js';
import { Worker } from '../support/processes.js';
import type { ReadyMessage } from '../support/ready.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { median, round } from '../support/stats.js';
import { storedLayouts } from '../support/stored-layout.js';

/**
 * notify req/s of aviso on JetStream at 50 connections (autocannon in its own process) against two
 * baselines, each in its own process: a bare fastify route that publishes the same message and
 * awaits the ack (what a user would write by hand; autocannon at 50 connections too — the target's
 * baseline), and raw `js.publish` of the same message with 50 publishes in flight (no HTTP at all:
 * the limit, reported beside it). One private nats-server with file storage serves all three; the
 * mars schema gets `storage_policy: { allow_duplicates: true }`, so every publish of the one topic
 * is kept (max_msgs_per_subject −1) instead of replacing the previous one. The baselines publish
 * into the stream aviso created (its settings); the stream is purged before every run, and the runs
 * of the three sides alternate (A B C A B C …), each side's value being the median of its runs.
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
  target: 'ratio ≥ 0.60 (fastify + publish)',
  async run(context: ScenarioContext) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const schemas = { mars: exampleSchema('mars', { storage_policy: { allow_duplicates: true } }) };
    const body = JSON.stringify(MARS_NOTIFICATION);
    const nats = await startPrivateNats();
    try {
      const nc = await connect({ servers: nats.url });
      const aviso = await startAviso({ config: benchConfig({ schemas, backend: { kind: 'jetstream', natsUrl: nats.url } }) });
      const message = storedLayouts(schemas)(body);
      const publisherOptions: JetStreamPublisherOptions = { natsUrl: nats.url, message, inFlight: IN_FLIGHT };
      const publisher = Worker.start<JetStreamPublishCommand>('baselines/jetstream-publisher', publisherOptions);
      const fastifyOptions: FastifyPublishOptions = { natsUrl: nats.url, message };
      const fastify = Worker.start('baselines/fastify-publish-server', fastifyOptions);
      const runs = { measured: [] as Run[], fastify: [] as Run[], raw: [] as Run[] };
      try {
        await publisher.next('ready', 15_000);
        const { port } = await fastify.next<ReadyMessage>('ready', 15_000);
        const jsm = await jetstreamManager(nc);
        // The stream exists once aviso stored something: create it the way aviso does.
        const created = await fetch(`${aviso.url}/api/v1/notification`, { method: 'POST', body });
        if (created.status !== 200) throw new Error(`the first notify answered ${created.status}: ${await created.text()}`);
        const overHttp = async (label: string, url: string, r: number): Promise<Run> => {
          await jsm.streams.purge(STREAM);
          const result = await runAutocannon({
            url,
            body,
            connections: IN_FLIGHT,
            warmupSeconds: r === 0 ? size.warmupSeconds : 0,
            durationSeconds: size.durationSeconds,
          });
          let problem: string | undefined;
          try {
            assertAllOk(label, result);
          } catch (error) {
            problem = (error as Error).message;
          }
          return {
            perSecond: result.requestsPerSecond,
            p50Ms: result.latencyP50Ms,
            p99Ms: result.latencyP99Ms,
            non2xx: result.non2xx,
            problem,
          };
        };
        for (let r = 0; r < size.rounds; r++) {
          runs.measured.push(await overHttp('aviso notify', `${aviso.url}/api/v1/notification`, r));
          const viaFastify = await overHttp('fastify + publish baseline', `http://127.0.0.1:${port}/api/v1/notification`, r);
          if (viaFastify.problem !== undefined) throw new Error(viaFastify.problem);
          runs.fastify.push(viaFastify);
          await jsm.streams.purge(STREAM);
          publisher.send({ type: 'run', warmupSeconds: r === 0 ? size.warmupSeconds : 0, durationSeconds: size.durationSeconds });
          const result = await publisher.next<JetStreamPublisherResult>('result', (size.warmupSeconds + size.durationSeconds + 30) * 1000);
          if (result.failed > 0) throw new Error(`raw publish baseline: ${result.failed} publishes failed`);
          runs.raw.push({ perSecond: result.messagesPerSecond, p50Ms: undefined, p99Ms: undefined, non2xx: 0, problem: undefined });
        }
      } finally {
        await Promise.all([aviso.stop(), publisher.stop(), fastify.stop()]);
        await nc.close();
      }

      const value = median(runs.measured.map((run) => run.perSecond));
      const baseline = median(runs.fastify.map((run) => run.perSecond));
      const raw = median(runs.raw.map((run) => run.perSecond));
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
        summary:
          `p50/p99 ${p50}/${p99} ms (fastify+publish ${median(runs.fastify.map((run) => run.p50Ms ?? Number.NaN))}/` +
          `${median(runs.fastify.map((run) => run.p99Ms ?? Number.NaN))}), non-2xx ${non2xx}; ` +
          `raw publish ${round(raw)} msg/s, ratio ${round(value / raw, 3)}`,
        extra: {
          in_flight: IN_FLIGHT,
          rounds: size.rounds,
          duration_s: size.durationSeconds,
          storage: 'file; mars with allow_duplicates: true; one topic; a Nats-Msg-Id per message on both sides',
          runs_req_s: runs.measured.map((run) => round(run.perSecond)),
          baseline_kind: 'bare fastify route + js.publish awaiting the ack, autocannon at the same connections',
          baseline_runs_req_s: runs.fastify.map((run) => round(run.perSecond)),
          raw_publish_msg_s: round(raw),
          ratio_vs_raw_publish: round(value / raw, 3),
          raw_publish_runs_msg_s: runs.raw.map((run) => round(run.perSecond)),
          fastify_publish_ratio_vs_raw_publish: round(baseline / raw, 3),
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
