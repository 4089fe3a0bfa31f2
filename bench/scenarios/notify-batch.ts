import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { startAviso, type AvisoProcess } from '../support/aviso-process.js';
import { assertAllOk, runAutocannon, type AutocannonResult } from '../support/autocannon-run.js';
import { NCHAN_PUBLISH_PATH, nchanUnavailableReason, startNchan, type NchanServer } from '../support/nchan.js';
import { startPrivateNats } from '../support/nats.js';
import { MARS_NOTIFICATION } from '../support/notifications.js';
import type { Measurement, Scenario, ScenarioContext } from '../support/scenario.js';
import { median, round } from '../support/stats.js';

/**
 * Batch notify (`POST /api/v1/notification/batch`, docs/api.md): notifications stored per second
 * when autocannon sends batches of 100 over 50 connections, against the single endpoint of the
 * same server under the same load (one notification per request), and, in memory, against Nchan's
 * publisher location (one message per request, its only form). The runs alternate (batch, single,
 * Nchan, batch, …) and each side's value is the median of its runs. On JetStream one private
 * nats-server with file storage; the mars schema keeps every notification of its one topic
 * (`allow_duplicates: true`), and the stream is purged before every run.
 */
const CONNECTIONS = 50;
const BATCH_ITEMS = 100;
const STREAM = 'MARS';
const SIZES = {
  full: { rounds: 3, warmupSeconds: 3, durationSeconds: 5 },
  quick: { rounds: 1, warmupSeconds: 1, durationSeconds: 2 },
};

interface Sides {
  readonly batch: AutocannonResult[];
  readonly single: AutocannonResult[];
  readonly nchan: AutocannonResult[];
}

const SINGLE_BODY = JSON.stringify(MARS_NOTIFICATION);
const BATCH_BODY = JSON.stringify(Array.from({ length: BATCH_ITEMS }, () => MARS_NOTIFICATION));

/** Runs the sides in turn, `rounds` times; `beforeRun` empties the store where it must. */
async function alternate(
  context: ScenarioContext,
  aviso: AvisoProcess,
  nchan: NchanServer | undefined,
  beforeRun: () => Promise<void>,
): Promise<Sides> {
  const size = context.quick ? SIZES.quick : SIZES.full;
  const load = async (url: string, body: string, r: number): Promise<AutocannonResult> => {
    await beforeRun();
    return runAutocannon({
      url,
      body,
      connections: CONNECTIONS,
      warmupSeconds: r === 0 ? size.warmupSeconds : 0,
      durationSeconds: size.durationSeconds,
    });
  };
  const sides: Sides = { batch: [], single: [], nchan: [] };
  for (let r = 0; r < size.rounds; r++) {
    sides.batch.push(await load(`${aviso.url}/api/v1/notification/batch`, BATCH_BODY, r));
    sides.single.push(await load(`${aviso.url}/api/v1/notification`, SINGLE_BODY, r));
    if (nchan !== undefined) sides.nchan.push(await load(`${nchan.url}${NCHAN_PUBLISH_PATH}`, SINGLE_BODY, r));
  }
  return sides;
}

/** Notifications per second of each side, their ratios and the target's verdict. */
function measurement(sides: Sides, nchanUnavailable: string | undefined, target: { vsSingle: number; vsNchan?: number }): Measurement {
  const problems: string[] = [];
  for (const [label, runs] of [
    ['aviso batch', sides.batch],
    ['aviso single', sides.single],
    ['Nchan', sides.nchan],
  ] as const) {
    for (const run of runs) {
      try {
        assertAllOk(label, run);
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
  }
  const batch = median(sides.batch.map((run) => run.requestsPerSecond)) * BATCH_ITEMS;
  const single = median(sides.single.map((run) => run.requestsPerSecond));
  const nchan = sides.nchan.length === 0 ? Number.NaN : median(sides.nchan.map((run) => run.requestsPerSecond));
  const vsSingle = batch / single;
  const vsNchan = batch / nchan;
  const pass = problems.length === 0 && vsSingle >= target.vsSingle && (target.vsNchan === undefined || vsNchan >= target.vsNchan);
  return {
    value: round(batch),
    unit: 'notifications/s',
    baseline: round(single),
    ratio: round(vsSingle, 3),
    pass,
    problems,
    summary:
      `batches of ${BATCH_ITEMS} at ${CONNECTIONS} connections: p50/p99 ${median(sides.batch.map((run) => run.latencyP50Ms))}/` +
      `${median(sides.batch.map((run) => run.latencyP99Ms))} ms per batch; single endpoint ${round(single)}/s` +
      (sides.nchan.length === 0
        ? nchanUnavailable === undefined
          ? ''
          : '; Nchan not installed'
        : `; Nchan ${round(nchan)} publishes/s (ratio ${round(vsNchan, 3)})`),
    extra: {
      connections: CONNECTIONS,
      batch_items: BATCH_ITEMS,
      batch_runs_notifications_s: sides.batch.map((run) => round(run.requestsPerSecond * BATCH_ITEMS)),
      single_runs_req_s: sides.single.map((run) => round(run.requestsPerSecond)),
      ...(sides.nchan.length > 0
        ? {
            nchan_publishes_s: round(nchan),
            ratio_vs_nchan: round(vsNchan, 3),
            nchan_runs_req_s: sides.nchan.map((run) => round(run.requestsPerSecond)),
          }
        : nchanUnavailable === undefined
          ? {}
          : { nchan_unavailable: nchanUnavailable }),
    },
  };
}

export const notifyBatchMemory: Scenario = {
  name: 'notify_batch_memory',
  target: 'notifications/s ≥ 10 × the single endpoint and ≥ 1.0 × Nchan publishes/s',
  async run(context: ScenarioContext) {
    const aviso = await startAviso({
      config: benchConfig({ schemas: { mars: exampleSchema('mars') }, backend: { kind: 'in_memory' } }),
    });
    const nchanUnavailable = nchanUnavailableReason();
    let nchan: NchanServer | undefined;
    try {
      if (nchanUnavailable === undefined) nchan = await startNchan({ connections: CONNECTIONS });
      const sides = await alternate(context, aviso, nchan, async () => undefined);
      return measurement(sides, nchanUnavailable, { vsSingle: 10, vsNchan: 1 });
    } finally {
      await Promise.all([aviso.stop(), nchan?.stop()]);
    }
  },
};

export const notifyBatchJetStream: Scenario = {
  name: 'notify_batch_jetstream',
  target: 'notifications/s ≥ 5 × the single endpoint',
  async run(context: ScenarioContext) {
    const schemas = { mars: exampleSchema('mars', { storage_policy: { allow_duplicates: true } }) };
    const nats = await startPrivateNats();
    try {
      const nc = await connect({ servers: nats.url });
      const aviso = await startAviso({ config: benchConfig({ schemas, backend: { kind: 'jetstream', natsUrl: nats.url } }) });
      try {
        // The stream exists once aviso stored something.
        const created = await fetch(`${aviso.url}/api/v1/notification`, { method: 'POST', body: SINGLE_BODY });
        if (created.status !== 200) throw new Error(`the first notify answered ${created.status}: ${await created.text()}`);
        const jsm = await jetstreamManager(nc);
        const sides = await alternate(context, aviso, undefined, async () => {
          await jsm.streams.purge(STREAM);
        });
        return measurement(sides, undefined, { vsSingle: 5 });
      } finally {
        await aviso.stop();
        await nc.close();
      }
    } finally {
      await nats.stop();
    }
  },
};
