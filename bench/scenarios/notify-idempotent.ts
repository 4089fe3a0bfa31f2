import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { startAviso } from '../support/aviso-process.js';
import { assertAllOk, runAutocannon, type AutocannonResult } from '../support/autocannon-run.js';
import { startPrivateNats } from '../support/nats.js';
import { MARS_NOTIFICATION } from '../support/notifications.js';
import type { Measurement, Scenario, ScenarioContext } from '../support/scenario.js';
import { median, round } from '../support/stats.js';

/**
 * What notify's `Idempotency-Key` costs (docs/api.md "Idempotent notify"): one aviso server, the
 * same load as notify_memory / notify_jetstream (autocannon at 50 connections, the mars example),
 * once with a fresh key per request (the value) and once without the header (the baseline; it
 * sends an ignored `x-bench-nonce` header with a fresh value instead, so autocannon rebuilds every
 * request on both sides and the generator costs the same), the runs alternating (A B A B …), each side's value the median of its runs. Every keyed request is
 * a first request: the record is created and completed, nothing is replayed. On JetStream the
 * stream is purged before every run; the keys stay in the bucket for the window, as in production.
 */
const CONNECTIONS = 50;
const SIZES = {
  full: { rounds: 3, warmupSeconds: 3, durationSeconds: 5 },
  quick: { rounds: 1, warmupSeconds: 1, durationSeconds: 2 },
};

async function compare(context: ScenarioContext, url: string, beforeRun: () => Promise<void>): Promise<Measurement> {
  const size = context.quick ? SIZES.quick : SIZES.full;
  const body = JSON.stringify(MARS_NOTIFICATION);
  const runs = { keyed: [] as AutocannonResult[], plain: [] as AutocannonResult[] };
  for (let r = 0; r < size.rounds; r++) {
    for (const side of ['keyed', 'plain'] as const) {
      await beforeRun();
      runs[side].push(
        await runAutocannon({
          url,
          body,
          connections: CONNECTIONS,
          // Each side warms up once: the keyed side's first run also fills the record store.
          warmupSeconds: r === 0 ? size.warmupSeconds : 0,
          durationSeconds: size.durationSeconds,
          // Both sides rebuild every request in autocannon (a fresh header value each), so the
          // load generator costs the same on both and the ratio is the server's cost alone.
          freshHeader: side === 'keyed' ? 'idempotency-key' : 'x-bench-nonce',
        }),
      );
    }
  }
  const problems: string[] = [];
  for (const [label, list] of [
    ['notify with Idempotency-Key', runs.keyed],
    ['notify without it', runs.plain],
  ] as const) {
    for (const run of list) {
      try {
        assertAllOk(label, run);
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
  }
  const rate = (list: AutocannonResult[]) => median(list.map((run) => run.requestsPerSecond));
  const p = (list: AutocannonResult[], key: 'latencyP50Ms' | 'latencyP99Ms') => median(list.map((run) => run[key]));
  const value = rate(runs.keyed);
  const baseline = rate(runs.plain);
  return {
    value: round(value),
    unit: 'req/s',
    baseline: round(baseline),
    ratio: round(value / baseline, 3),
    pass: value / baseline >= 0.7,
    problems,
    summary: `with key p50/p99 ${p(runs.keyed, 'latencyP50Ms')}/${p(runs.keyed, 'latencyP99Ms')} ms, without ${p(runs.plain, 'latencyP50Ms')}/${p(runs.plain, 'latencyP99Ms')} ms`,
    extra: {
      connections: CONNECTIONS,
      rounds: size.rounds,
      duration_s: size.durationSeconds,
      baseline_kind:
        'the same aviso server and load without the Idempotency-Key header (a fresh ignored x-bench-nonce header instead), runs alternating',
      runs_req_s: runs.keyed.map((run) => round(run.requestsPerSecond)),
      baseline_runs_req_s: runs.plain.map((run) => round(run.requestsPerSecond)),
      p50_ms: p(runs.keyed, 'latencyP50Ms'),
      p99_ms: p(runs.keyed, 'latencyP99Ms'),
      baseline_p50_ms: p(runs.plain, 'latencyP50Ms'),
      baseline_p99_ms: p(runs.plain, 'latencyP99Ms'),
    },
  };
}

export const notifyMemoryIdempotent: Scenario = {
  name: 'notify_memory_idempotent',
  target: 'ratio ≥ 0.70 (vs no header)',
  async run(context) {
    const aviso = await startAviso({
      config: benchConfig({ schemas: { mars: exampleSchema('mars') }, backend: { kind: 'in_memory' } }),
    });
    try {
      return await compare(context, `${aviso.url}/api/v1/notification`, async () => undefined);
    } finally {
      await aviso.stop();
    }
  },
};

export const notifyJetStreamIdempotent: Scenario = {
  name: 'notify_jetstream_idempotent',
  target: 'ratio ≥ 0.70 (vs no header)',
  async run(context) {
    const schemas = { mars: exampleSchema('mars', { storage_policy: { allow_duplicates: true } }) };
    const nats = await startPrivateNats();
    try {
      const aviso = await startAviso({ config: benchConfig({ schemas, backend: { kind: 'jetstream', natsUrl: nats.url } }) });
      const nc = await connect({ servers: nats.url });
      try {
        const url = `${aviso.url}/api/v1/notification`;
        const created = await fetch(url, { method: 'POST', body: JSON.stringify(MARS_NOTIFICATION) });
        if (created.status !== 200) throw new Error(`the first notify answered ${created.status}: ${await created.text()}`);
        const jsm = await jetstreamManager(nc);
        return await compare(context, url, async () => {
          await jsm.streams.purge('MARS');
        });
      } finally {
        await aviso.stop();
        await nc.close();
      }
    } finally {
      await nats.stop();
    }
  },
};
