import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { toHeaders } from '../../src/backend/jetstream/message-mapping.js';
import type { OrderedReaderOptions, OrderedReaderResult } from '../baselines/jetstream-ordered-reader.js';
import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { cpuMeter } from '../support/cpu-time.js';
import { startAviso } from '../support/aviso-process.js';
import { startPrivateNats } from '../support/nats.js';
import { marsNotification } from '../support/notifications.js';
import { NotifyClient } from '../support/notify-client.js';
import { Worker } from '../support/processes.js';
import type { ReplayReaderOptions, ReplayReaderResult } from '../support/replay-reader.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { round } from '../support/stats.js';
import { storedLayouts } from '../support/stored-layout.js';

/**
 * One `POST /api/v1/replay` from `from_id: "0"` over N stored mars notifications on JetStream
 * (`replay_batch_delay_ms: 0`, default `replay_batch_size` 100, `max_historical_notifications`
 * N + 1), read to the end by a client process: events/s. Baseline: a raw JetStream ordered
 * consumer reading the same N messages in its own process.
 *
 * The store is filled with raw `js.publish` of exactly what notify stores (subject, payload,
 * `aviso_identifier` header, computed by aviso's own code), after one notify through aviso has
 * created the stream with aviso's settings. Each notification has its own step, so its own subject.
 */
const SIZES = { full: { notifications: 100_000 }, quick: { notifications: 10_000 } };
const STREAM = 'MARS';
const PUBLISH_WINDOW = 256;

async function fillStore(natsUrl: string, schemas: Record<string, unknown>, count: number): Promise<void> {
  const layoutOf = storedLayouts(schemas);
  const nc = await connect({ servers: natsUrl });
  try {
    const js = jetstream(nc);
    let next = 1; // 0 went through aviso
    const lane = async (): Promise<void> => {
      while (next < count) {
        const layout = layoutOf(JSON.stringify(marsNotification(next++)));
        const headers = toHeaders(layout.headers);
        await js.publish(layout.subject, layout.payload, headers ? { headers } : {});
      }
    };
    await Promise.all(Array.from({ length: PUBLISH_WINDOW }, lane));
  } finally {
    await nc.close();
  }
}

export const replay: Scenario = {
  name: 'replay',
  target: 'ratio ≥ 0.60',
  async run(context: ScenarioContext) {
    const { notifications } = context.quick ? SIZES.quick : SIZES.full;
    const schemas = { mars: exampleSchema('mars', { storage_policy: { allow_duplicates: true } }) };
    const nats = await startPrivateNats();
    try {
      const aviso = await startAviso({
        config: benchConfig({
          schemas,
          backend: { kind: 'jetstream', natsUrl: nats.url },
          watchEndpoint: { replay_batch_delay_ms: 0, max_historical_notifications: notifications + 1 },
        }),
      });
      let measured: ReplayReaderResult;
      let serverCores = Number.NaN;
      let natsCores = Number.NaN;
      try {
        const client = new NotifyClient(aviso.url);
        const created = await client.post('/api/v1/notification', JSON.stringify(marsNotification(0)));
        client.close();
        if (created.status !== 200) throw new Error(`the first notify answered ${created.status}: ${created.body}`);
        await fillStore(nats.url, schemas, notifications);

        const options: ReplayReaderOptions = {
          origin: aviso.url,
          body: JSON.stringify({ event_type: 'mars', identifier: { class: 'od' }, from_id: '0' }),
        };
        const avisoCpu = cpuMeter(aviso.pid);
        const natsCpu = cpuMeter(nats.pid);
        const reader = Worker.start('support/replay-reader', options);
        try {
          measured = await reader.next<ReplayReaderResult>('result', 300_000);
          serverCores = avisoCpu.stop().cores;
          natsCores = natsCpu.stop().cores;
        } finally {
          await reader.stop();
        }
      } finally {
        await aviso.stop();
      }

      const baselineOptions: OrderedReaderOptions = { natsUrl: nats.url, stream: STREAM, expected: notifications };
      const baselineNatsCpu = cpuMeter(nats.pid);
      const baselineReader = Worker.start('baselines/jetstream-ordered-reader', baselineOptions);
      let baseline: OrderedReaderResult;
      let baselineNatsCores = Number.NaN;
      try {
        baseline = await baselineReader.next<OrderedReaderResult>('result', 300_000);
        baselineNatsCores = baselineNatsCpu.stop().cores;
      } finally {
        await baselineReader.stop();
      }

      const problems: string[] = [];
      if (measured.status !== 200) problems.push(`replay answered ${measured.status}`);
      if (measured.events !== notifications) problems.push(`replay delivered ${measured.events} of ${notifications} notifications`);
      if (!measured.controls.includes('replay_completed'))
        problems.push(`replay did not complete: controls ${measured.controls.join(', ')}`);
      if (measured.closeReason !== 'end_of_stream')
        problems.push(`replay closed with ${measured.closeReason ?? 'no connection-closing frame'}`);
      if (measured.errorFrames > 0) problems.push(`${measured.errorFrames} error frames`);
      if (measured.outOfOrder > 0) problems.push(`${measured.outOfOrder} events out of sequence order`);
      if (baseline.events !== notifications) throw new Error(`the ordered consumer read ${baseline.events} of ${notifications}`);

      const value = measured.events / (measured.elapsedMs / 1000);
      const baselineValue = baseline.events / (baseline.elapsedMs / 1000);
      const ratio = value / baselineValue;
      return {
        value: round(value),
        unit: 'events/s',
        baseline: round(baselineValue),
        ratio: round(ratio, 3),
        pass: ratio >= 0.6,
        problems,
        summary: `${measured.events} events in ${(measured.elapsedMs / 1000).toFixed(2)} s (baseline ${(baseline.elapsedMs / 1000).toFixed(2)} s)`,
        extra: {
          notifications,
          replay_batch_size: 100,
          elapsed_ms: round(measured.elapsedMs),
          first_event_ms: round(measured.firstEventMs),
          baseline_elapsed_ms: round(baseline.elapsedMs),
          server_cpu_cores: round(serverCores, 3),
          nats_cpu_cores: round(natsCores, 3),
          baseline_nats_cpu_cores: round(baselineNatsCores, 3),
        },
      };
    } finally {
      await nats.stop();
    }
  },
};
