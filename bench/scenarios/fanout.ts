import type { BroadcastCommand, BroadcastDone } from '../baselines/sse-frame-server.js';
import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { startAviso } from '../support/aviso-process.js';
import { cpuMeter } from '../support/cpu-time.js';
import { Fleet, fleetProblems } from '../support/fleet.js';
import type { FleetReport } from '../support/fleet-protocol.js';
import { NotifyClient } from '../support/notify-client.js';
import { fanoutNotificationBody, fanoutWatchBody } from '../support/notifications.js';
import { Worker } from '../support/processes.js';
import { atFixedRate } from '../support/rate-schedule.js';
import type { ReadyMessage } from '../support/ready.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { epochMs, round } from '../support/stats.js';

/**
 * W live watchers of `extreme_event` (config/config.yaml) on aviso's in-memory backend, half
 * filtering by an Int constraint (`severity ≥ 1…5`), half by a polygon that intersects the
 * notifications' polygon, all in one SSE client fleet process. The bench notifies at a fixed rate
 * through `POST /api/v1/notification`, each notification carrying its send time; the fleet records
 * per-event latency and which watcher got which notification. Baseline: a bare node:http server
 * writing frames of the same shape to the same kind of fleet at the same rate. Both first send
 * `warmup` notifications at the same rate that are not counted (JIT and first-use costs).
 *
 * delivered events/s = distinct notifications received, over all watchers / (last receive − first send).
 */
const SIZES = {
  full: { watchers: 1000, ratePerSecond: 50, notifications: 500, warmup: 50 },
  quick: { watchers: 200, ratePerSecond: 50, notifications: 150, warmup: 25 },
};
const P99_LIMIT_MS = 50;
/** Issue 14: server CPU per delivered event at most this many times the bare server's. */
const CPU_RATIO_LIMIT = 1.2;
/** Once nothing new arrived for this long, what has not arrived counts as lost. */
const DRAIN_STALL_MS = 5_000;
const OPEN_CONCURRENCY = 100;

interface Side {
  readonly report: FleetReport;
  readonly firstSendMs: number;
  readonly eventsPerSecond: number;
  /** Server CPU from the first (warm-up) send until everything arrived, per event sent (warm-up included). */
  readonly cpuMicrosPerEvent: number;
  /** Server CPU over that time, in cores. */
  readonly cpuCores: number;
}

function cpuPerEvent(cpu: { seconds: number }, size: (typeof SIZES)['full']): number {
  return (cpu.seconds * 1e6) / ((size.warmup + size.notifications) * size.watchers);
}

function deliveredRate(report: FleetReport, firstSendMs: number): number {
  return report.received / ((report.lastReceiveMs - firstSendMs) / 1000);
}

async function openFleet(origin: string, path: string, watchers: number, notifications: number): Promise<Fleet> {
  const fleet = await Fleet.start();
  try {
    const groups = Array.from({ length: watchers }, (_, index) => ({ body: fanoutWatchBody(index), count: 1 }));
    const opened = await fleet.open({ origin, path, groups, concurrency: OPEN_CONCURRENCY, expectedNotifications: notifications }, 60_000);
    if (opened.opened !== watchers) {
      throw new Error(`only ${opened.opened} of ${watchers} watch streams opened: ${opened.failures.join('; ')}`);
    }
    return fleet;
  } catch (error) {
    await fleet.stop();
    throw error;
  }
}

async function measureAviso(size: (typeof SIZES)['full'], problems: string[]): Promise<Side> {
  const aviso = await startAviso({
    config: benchConfig({ schemas: { extreme_event: exampleSchema('extreme_event') }, backend: { kind: 'in_memory' } }),
  });
  try {
    const fleet = await openFleet(aviso.url, '/api/v1/watch', size.watchers, size.notifications);
    try {
      const client = new NotifyClient(aviso.url);
      let firstSendMs = Number.NaN;
      const meter = cpuMeter(aviso.pid);
      const answers = await atFixedRate(size.warmup + size.notifications, size.ratePerSecond, (slot) => {
        const sentMs = epochMs();
        const index = slot - size.warmup;
        if (index === 0) firstSendMs = sentMs;
        return client.post('/api/v1/notification', fanoutNotificationBody(index, sentMs));
      });
      client.close();
      const refused = answers.filter((answer) => answer.status !== 200);
      if (refused.length > 0)
        problems.push(`${refused.length} notify requests answered non-200, e.g. ${refused[0]?.status} ${refused[0]?.body}`);
      await fleet.drain(DRAIN_STALL_MS);
      const cpu = meter.stop();
      const report = await fleet.report();
      return {
        report,
        firstSendMs,
        eventsPerSecond: deliveredRate(report, firstSendMs),
        cpuMicrosPerEvent: cpuPerEvent(cpu, size),
        cpuCores: cpu.cores,
      };
    } finally {
      await fleet.stop();
    }
  } finally {
    await aviso.stop();
  }
}

async function measureBaseline(size: (typeof SIZES)['full']): Promise<Side> {
  const server = Worker.start<BroadcastCommand>('baselines/sse-frame-server', {});
  try {
    const { port } = await server.next<ReadyMessage>('ready', 15_000);
    const fleet = await openFleet(`http://127.0.0.1:${port}`, '/api/v1/watch', size.watchers, size.notifications);
    try {
      const meter = cpuMeter(server.pid);
      server.send({ type: 'broadcast', count: size.notifications, warmup: size.warmup, ratePerSecond: size.ratePerSecond });
      const total = size.warmup + size.notifications;
      const done = await server.next<BroadcastDone>('broadcast_done', (total / size.ratePerSecond) * 1000 + 30_000);
      await fleet.drain(DRAIN_STALL_MS);
      const cpu = meter.stop();
      const report = await fleet.report();
      return {
        report,
        firstSendMs: done.firstSendMs,
        eventsPerSecond: deliveredRate(report, done.firstSendMs),
        cpuMicrosPerEvent: cpuPerEvent(cpu, size),
        cpuCores: cpu.cores,
      };
    } finally {
      await fleet.stop();
    }
  } finally {
    await server.stop();
  }
}

export const fanout: Scenario = {
  name: 'fanout',
  target: `ratio ≥ 0.50, p99 ≤ ${P99_LIMIT_MS} ms, CPU/event ≤ ${CPU_RATIO_LIMIT}× bare, lost 0`,
  async run(context: ScenarioContext) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const problems: string[] = [];
    const aviso = await measureAviso(size, problems);
    fleetProblems(aviso.report, 'aviso', problems);
    const baseline = await measureBaseline(size);
    const baselineProblems: string[] = [];
    fleetProblems(baseline.report, 'baseline', baselineProblems);
    if (baselineProblems.length > 0) throw new Error(`the baseline itself lost events: ${baselineProblems.join('; ')}`);

    const ratio = aviso.eventsPerSecond / baseline.eventsPerSecond;
    const p99 = aviso.report.latencyMs.p99;
    const cpuRatio = aviso.cpuMicrosPerEvent / baseline.cpuMicrosPerEvent;
    return {
      value: round(aviso.eventsPerSecond),
      unit: 'events/s',
      baseline: round(baseline.eventsPerSecond),
      ratio: round(ratio, 3),
      pass: ratio >= 0.5 && p99 <= P99_LIMIT_MS && cpuRatio <= CPU_RATIO_LIMIT && aviso.report.lost === 0,
      problems,
      summary:
        `${size.watchers} watchers, p50/p99 ${aviso.report.latencyMs.p50.toFixed(1)}/${p99.toFixed(1)} ms ` +
        `(baseline ${baseline.report.latencyMs.p50.toFixed(1)}/${baseline.report.latencyMs.p99.toFixed(1)}), ` +
        `CPU/event ${round(cpuRatio, 3)}× bare, lost ${aviso.report.lost}`,
      extra: {
        watchers: size.watchers,
        notifications: size.notifications,
        rate_per_s: size.ratePerSecond,
        warmup_notifications: size.warmup,
        expected_events: size.watchers * size.notifications,
        received: aviso.report.received,
        lost: aviso.report.lost,
        duplicates: aviso.report.duplicates,
        p50_ms: round(aviso.report.latencyMs.p50, 3),
        p99_ms: round(p99, 3),
        max_ms: round(aviso.report.latencyMs.max, 3),
        baseline_p50_ms: round(baseline.report.latencyMs.p50, 3),
        baseline_p99_ms: round(baseline.report.latencyMs.p99, 3),
        baseline_max_ms: round(baseline.report.latencyMs.max, 3),
        baseline_lost: baseline.report.lost,
        server_cpu_cores: round(aviso.cpuCores, 3),
        server_cpu_us_per_event: round(aviso.cpuMicrosPerEvent, 3),
        baseline_cpu_cores: round(baseline.cpuCores, 3),
        baseline_cpu_us_per_event: round(baseline.cpuMicrosPerEvent, 3),
        cpu_per_event_ratio: round(cpuRatio, 3),
      },
    };
  },
};
