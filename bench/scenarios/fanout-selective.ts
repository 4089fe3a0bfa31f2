import { readFileSync } from 'node:fs';
import { benchConfig, exampleSchema } from '../support/aviso-config.js';
import { startAviso, type AvisoProcess } from '../support/aviso-process.js';
import { cpuMeter } from '../support/cpu-time.js';
import { Fleet, fleetCounts, fleetProblems } from '../support/fleet.js';
import { NotifyClient } from '../support/notify-client.js';
import { selectiveNotificationBody, selectiveWatchBody } from '../support/notifications.js';
import { atFixedRate } from '../support/rate-schedule.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { epochMs, percentileOfSorted, round } from '../support/stats.js';
import { seededRandom } from '../support/seeded-random.js';

/**
 * W live watchers of mars on the in-memory backend, each on its own topic (every identifier field
 * given, a distinct `step` per watcher), held by two SSE client fleet processes. The bench notifies
 * at a fixed rate, each notification to the topic of one watcher drawn at random (a seeded
 * generator, the same draw for every W), so exactly one watcher matches each notification. It is
 * run at a small and a large W; the server's CPU per notification (from /proc/<pid>/stat, from the
 * first measured send until the last delivery) should not grow with the watchers it does not match:
 * ratio = CPU per notification at the large W ÷ at the small W.
 *
 * Every process here holds at most one socket per stream, and the largest W stays under the
 * per-process file-descriptor limit (20,000 on this machine): the server holds W sockets, each fleet
 * W / 2. The limits of the spawned processes are read from /proc and checked before opening.
 */
const SIZES = {
  full: { watchers: [1_000, 15_000], ratePerSecond: 200, notifications: 2_000, warmup: 200 },
  quick: { watchers: [200, 2_000], ratePerSecond: 200, notifications: 400, warmup: 100 },
};
const FLEETS = 2;
const RATIO_LIMIT = 1.3;
const P99_LIMIT_MS = 20;
const DRAIN_STALL_MS = 5_000;
const OPEN_CONCURRENCY = 200;
/** Descriptors a process needs besides its sockets (stdio, IPC, the event loop's, log file). */
const FD_HEADROOM = 200;
/** The server's CPU while idle with every stream open, over this long, before notifying. */
const IDLE_WINDOW_MS = 2_000;

interface Side {
  readonly watchers: number;
  readonly cpuMicrosPerNotification: number;
  readonly cpuCores: number;
  readonly idleCores: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly lost: number;
  readonly problems: string[];
  readonly openMs: number;
}

function openFilesLimit(pid: number): number {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((text) => text.startsWith('Max open files'));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === 'unlimited' ? Number.POSITIVE_INFINITY : Number(soft);
}

function checkOpenFiles(pid: number, label: string, sockets: number): void {
  const limit = openFilesLimit(pid);
  if (!(limit >= sockets + FD_HEADROOM)) {
    throw new Error(`${label} may open ${limit} files but needs ${sockets + FD_HEADROOM}: raise \`ulimit -n\` for the bench`);
  }
}

async function openFleets(aviso: AvisoProcess, watchers: number, targets: readonly number[]): Promise<{ fleets: Fleet[]; openMs: number }> {
  const fleets: Fleet[] = [];
  const started = epochMs();
  try {
    for (let f = 0; f < FLEETS; f++) fleets.push(await Fleet.start());
    const perFleet = Math.ceil(watchers / FLEETS);
    for (const fleet of fleets) checkOpenFiles(fleet.pid, 'an SSE fleet process', perFleet);
    // One fleet at a time: opening streams costs the server the same either way, and one opener
    // at a time keeps its accept queue short.
    for (let f = 0; f < FLEETS; f++) {
      const first = f * perFleet;
      const count = Math.min(perFleet, watchers - first);
      const groups = Array.from({ length: count }, (_, i) => ({ body: selectiveWatchBody(first + i), count: 1 }));
      const opened = await (fleets[f] as Fleet).open(
        {
          origin: aviso.url,
          path: '/api/v1/watch',
          groups,
          concurrency: OPEN_CONCURRENCY,
          expectedNotifications: targets.length,
          targets,
          streamOffset: first,
          keepSamples: true,
        },
        300_000,
      );
      if (opened.opened !== count) throw new Error(`only ${opened.opened} of ${count} watch streams opened: ${opened.failures.join('; ')}`);
    }
    return { fleets, openMs: epochMs() - started };
  } catch (error) {
    await Promise.all(fleets.map((fleet) => fleet.stop()));
    throw error;
  }
}

async function drainAll(fleets: readonly Fleet[]): Promise<void> {
  // Each fleet drains on its own; a fleet that owns nothing is complete at once.
  await Promise.all(fleets.map((fleet) => fleet.drain(DRAIN_STALL_MS)));
}

async function measure(watchers: number, size: (typeof SIZES)['full']): Promise<Side> {
  const random = seededRandom(14);
  const pick = (): number => Math.floor(random() * watchers);
  const targets = Array.from({ length: size.notifications }, pick);
  const warmupTargets = Array.from({ length: size.warmup }, pick);
  const aviso = await startAviso({
    config: benchConfig({
      schemas: { mars: exampleSchema('mars') },
      backend: { kind: 'in_memory' },
      // No heartbeats during the run: their cost grows with W whatever the notifications do.
      watchEndpoint: { sse_heartbeat_interval_sec: 3600 },
    }),
  });
  try {
    checkOpenFiles(aviso.pid, 'the server', watchers);
    const { fleets, openMs } = await openFleets(aviso, watchers, targets);
    try {
      const idle = cpuMeter(aviso.pid);
      await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS));
      const idleCores = idle.stop().cores;
      const client = new NotifyClient(aviso.url);
      const problems: string[] = [];
      let meter: ReturnType<typeof cpuMeter> | undefined;
      const total = size.warmup + size.notifications;
      const answers = await atFixedRate(total, size.ratePerSecond, (slot) => {
        const index = slot - size.warmup;
        // Warm-up notifications (negative index) go to random watchers too, and are not counted.
        const watcher = index < 0 ? (warmupTargets[slot] as number) : (targets[index] as number);
        if (index === 0) meter = cpuMeter(aviso.pid);
        return client.post('/api/v1/notification', selectiveNotificationBody(watcher, index, epochMs()));
      });
      client.close();
      const refused = answers.filter((answer) => answer.status !== 200);
      if (refused.length > 0)
        problems.push(`${refused.length} notify requests answered non-200, e.g. ${refused[0]?.status} ${refused[0]?.body}`);
      await drainAll(fleets);
      const cpu = (meter as ReturnType<typeof cpuMeter>).stop();
      const reports = await Promise.all(fleets.map((fleet) => fleet.report()));
      const counts = fleetCounts(reports);
      fleetProblems(counts, undefined, problems);
      if (counts.misdelivered > 0) problems.push(`${counts.misdelivered} notifications delivered to a watcher of another topic`);
      const samples = reports.flatMap((report) => report.samplesMs ?? []).sort((a, b) => a - b);
      return {
        watchers,
        cpuMicrosPerNotification: (cpu.seconds * 1e6) / size.notifications,
        cpuCores: cpu.cores,
        idleCores,
        p50Ms: percentileOfSorted(samples, 50),
        p99Ms: percentileOfSorted(samples, 99),
        maxMs: percentileOfSorted(samples, 100),
        lost: counts.lost,
        problems,
        openMs,
      };
    } finally {
      await Promise.all(fleets.map((fleet) => fleet.stop()));
    }
  } finally {
    await aviso.stop();
  }
}

export const fanoutSelective: Scenario = {
  name: 'fanout_selective',
  target: `ratio ≤ ${RATIO_LIMIT}, p99 ≤ ${P99_LIMIT_MS} ms, lost 0`,
  async run(context: ScenarioContext) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const [fewCount, manyCount] = size.watchers as [number, number];
    const few = await measure(fewCount, size);
    const many = await measure(manyCount, size);
    const ratio = many.cpuMicrosPerNotification / few.cpuMicrosPerNotification;
    const p99 = Math.max(few.p99Ms, many.p99Ms);
    const ms = (value: number): string => value.toFixed(1);
    const side = (s: Side): Record<string, unknown> => ({
      cpu_us_per_notification: round(s.cpuMicrosPerNotification),
      cpu_cores: round(s.cpuCores, 3),
      idle_cpu_cores: round(s.idleCores, 3),
      p50_ms: round(s.p50Ms, 3),
      p99_ms: round(s.p99Ms, 3),
      max_ms: round(s.maxMs, 3),
      lost: s.lost,
      open_ms: round(s.openMs),
    });
    return {
      value: round(many.cpuMicrosPerNotification),
      unit: 'CPU µs/notification',
      baseline: round(few.cpuMicrosPerNotification),
      ratio: round(ratio, 3),
      pass: ratio <= RATIO_LIMIT && p99 <= P99_LIMIT_MS && few.lost + many.lost === 0,
      problems: [...few.problems.map((p) => `${fewCount} watchers: ${p}`), ...many.problems.map((p) => `${manyCount} watchers: ${p}`)],
      summary:
        `${manyCount} vs ${fewCount} watchers: p99 ${ms(many.p99Ms)} / ${ms(few.p99Ms)} ms, ` +
        `idle ${many.idleCores.toFixed(3)} / ${few.idleCores.toFixed(3)} cores, lost ${many.lost + few.lost}`,
      extra: {
        watchers: [fewCount, manyCount],
        notifications: size.notifications,
        warmup_notifications: size.warmup,
        rate_per_s: size.ratePerSecond,
        fleet_processes: FLEETS,
        p99_ms: round(p99, 3),
        [`at_${fewCount}`]: side(few),
        [`at_${manyCount}`]: side(many),
      },
    };
  },
};
