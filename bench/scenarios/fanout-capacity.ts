import { loadavg } from 'node:os';
import { cFloorProgram } from '../support/c-floor.js';
import { measureCapacity, type CapacityPlan, type SideResult, type Step } from '../support/fanout-capacity-side.js';
import {
  BARE,
  checkTargets,
  C_FLOOR,
  describeTargets,
  FANOUT_CAPACITY_TARGETS,
  NCHAN,
  sameRunRatio,
  type PointFigures,
} from '../support/fanout-capacity-targets.js';
import {
  startAvisoTarget,
  startBareTarget,
  startCFloorTarget,
  startNchanTarget,
  type AvisoSide,
  type FanoutTarget,
} from '../support/fanout-targets.js';
import { findNchan } from '../support/nchan.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { round } from '../support/stats.js';

/**
 * Fan-out capacity: the highest rate of deliveries per second a server sustains with p99
 * (publish → receipt) ≤ 100 ms and nothing lost, found by a rate search (doubling, then
 * bisecting; `support/capacity-search.ts`) with W live watchers of one channel held by two SSE
 * fleet processes. Measured in the same run for aviso in memory, aviso on JetStream (a private
 * nats-server), the bare node:http SSE server, Nchan (nginx, one worker) and the C floor (epoll,
 * one thread: the limit), each at every W. The same fleet code reads them all: aviso's watchers are
 * the `fanout` scenario's (half an Int constraint, half a polygon, each matching every
 * notification), the bare server's and the floor's streams take the same requests and filter
 * nothing, Nchan's are EventSource GETs on its one channel.
 *
 * value = aviso in memory at the first W; baseline = the bare server there; `ratio_vs_nchan` beside
 * it; every side's CPU per delivery also against Nchan's and the floor's (`support/fanout-capacity-targets.ts`).
 */
const SIZES = {
  full: {
    points: [
      { watchers: 1_000, startRate: 10 },
      { watchers: 10_000, startRate: 1 },
    ],
    stepSeconds: 3,
    warmupSeconds: 2,
    bisections: 2,
    retries: 1,
  },
  // One point: opening thousands of streams for each of the servers would be most of a quick run.
  quick: { points: [{ watchers: 200, startRate: 25 }], stepSeconds: 1, warmupSeconds: 1, bisections: 1, retries: 0 },
};
/**
 * The aviso configurations measured, one line each. Another process layout is one more line, e.g.
 * `{ name: 'aviso_jetstream_workers_2', backend: 'jetstream', application: { workers: 2 } }`
 * (`application` is merged into the bench's configuration, and CPU is read over the whole process
 * tree; `application.workers` above 1 is meant for the JetStream backend only).
 */
const AVISO_SIDES: readonly AvisoSide[] = [
  { name: 'aviso_memory', backend: 'in_memory', application: {} },
  { name: 'aviso_jetstream', backend: 'jetstream', application: {} },
  // D36: two server processes on one port (JetStream only); CPU is read over the process tree.
  { name: 'aviso_jetstream_workers_2', backend: 'jetstream', application: { workers: 2 } },
];
/** The side the targets are about. */
const PRIMARY = 'aviso_memory';
const P99_LIMIT_MS = 100;
const FLEET_PROCESSES = 2;
const FLEET_READER = 'raw-socket';
const DRAIN_STALL_MS = 5_000;
const MAX_DELIVERIES_PER_SECOND = 2_000_000;

interface PointResult {
  readonly watchers: number;
  readonly sides: readonly SideResult[];
}

function capacityOf(side: SideResult | undefined): number {
  return side?.capacity?.deliveriesPerSecond ?? 0;
}

function stepRecord(step: Step): Record<string, unknown> {
  return {
    rate_per_s: step.rate,
    notifications: step.notifications,
    offered_deliveries_per_s: round(step.deliveriesPerSecond),
    delivered_per_s: round(step.deliveredPerSecond),
    pass: step.pass,
    failed_by: step.failedBy,
    p50_ms: round(step.p50Ms, 3),
    p99_ms: round(step.p99Ms, 3),
    max_ms: round(step.maxMs, 3),
    lost: step.lost,
    refused: step.refused,
    streams_ended: step.streamsEnded,
    server_cores: round(step.serverCores, 3),
    server_cpu_us_per_delivery: round(step.serverCpuMicrosPerDelivery, 3),
    ...(step.brokerCores === undefined
      ? {}
      : { nats_cores: round(step.brokerCores, 3), nats_cpu_us_per_delivery: round(step.brokerCpuMicrosPerDelivery ?? Number.NaN, 3) }),
    fleet_cores: round(step.fleetCores, 3),
    fleet_cpu_us_per_delivery: round(step.fleetCpuMicrosPerDelivery, 3),
    publisher_cores: round(step.publisherCores, 3),
  };
}

/**
 * Server CPU per delivery in the first step at the start rate, which every side measures under
 * the same offered load whether it held or not: the comparison of CPU per delivery at one rate
 * (at its own capacity a side runs at another rate, and per-delivery costs fall as writes batch).
 */
function cpuAtStartRate(side: SideResult | undefined): number {
  return side?.steps[0]?.serverCpuMicrosPerDelivery ?? Number.NaN;
}

/**
 * A capacity against a baseline's: NaN (null in results.json) when the baseline held no rate within
 * the bound, so a loaded machine on which even the baseline failed reads as "not measured", never as
 * an infinite ratio that passes.
 */
const capacityRatio = sameRunRatio;

/** Server CPU per delivery at the start rate against another side's at the same point. */
function cpuRatio(side: SideResult | undefined, baseline: SideResult | undefined): number {
  return sameRunRatio(cpuAtStartRate(side), cpuAtStartRate(baseline));
}

function pointFigures(point: PointResult): PointFigures {
  return {
    watchers: point.watchers,
    sides: Object.fromEntries(
      point.sides.map((side) => [side.name, { deliveriesPerSecond: capacityOf(side), cpuMicrosPerDelivery: cpuAtStartRate(side) }]),
    ),
  };
}

function pointRecord(point: PointResult): Record<string, unknown> {
  const bare = point.sides.find((side) => side.name === BARE);
  const nchan = point.sides.find((side) => side.name === NCHAN);
  const floor = point.sides.find((side) => side.name === C_FLOOR);
  const record: Record<string, unknown> = { watchers: point.watchers };
  for (const side of point.sides) {
    const capacity = side.capacity;
    record[side.name] = {
      capacity_rate_per_s: capacity?.rate ?? 0,
      deliveries_per_s: capacityOf(side),
      ...(capacity === undefined ? {} : { at_capacity: stepRecord(capacity) }),
      first_failure: side.firstFailure === undefined ? null : { rate_per_s: side.firstFailure.rate, failed_by: side.firstFailure.failedBy },
      ...(side.name.startsWith('aviso')
        ? {
            ratio_vs_bare: round(capacityRatio(capacityOf(side), capacityOf(bare)), 3),
            ratio_vs_nchan: round(capacityRatio(capacityOf(side), capacityOf(nchan)), 3),
          }
        : {}),
      cpu_us_per_delivery_at_start_rate: round(cpuAtStartRate(side), 3),
      cpu_ratio_vs_bare_at_start_rate: round(cpuRatio(side, bare), 3),
      cpu_ratio_vs_nchan_at_start_rate: round(cpuRatio(side, nchan), 3),
      cpu_ratio_vs_c_floor_at_start_rate: round(cpuRatio(side, floor), 3),
      open_ms: round(side.openMs),
      warmup: stepRecord(side.warmup),
      steps: side.steps.map(stepRecord),
    };
  }
  return record;
}

/** Every side's CPU per delivery at the start rate, the floor's in µs and the others' as multiples of it. */
function describeCpu(point: PointResult): string {
  const floor = point.sides.find((side) => side.name === C_FLOOR);
  const others = point.sides.filter((side) => side !== floor).map((side) => `${side.name} ${cpuRatio(side, floor).toFixed(2)}×`);
  return `CPU/delivery at ${point.sides[0]?.steps[0]?.rate ?? '?'}/s: ${C_FLOOR} ${cpuAtStartRate(floor).toFixed(1)} µs, ${others.join(', ')}`;
}

function describe(side: SideResult | undefined): string {
  if (side === undefined) return '?';
  const capacity = side.capacity;
  if (capacity === undefined) return `none (p99 ${side.steps[0]?.p99Ms.toFixed(0) ?? '?'} ms at ${side.steps[0]?.rate}/s)`;
  return `${round(capacity.deliveriesPerSecond, 3).toLocaleString('en-US')} (${capacity.rate}/s, p99 ${capacity.p99Ms.toFixed(0)} ms)`;
}

async function measureTarget(name: string, start: () => Promise<FanoutTarget>, plan: CapacityPlan): Promise<SideResult> {
  try {
    const target = await start();
    try {
      return await measureCapacity(target, plan);
    } finally {
      await target.stop();
    }
  } catch (error) {
    throw new Error(`${name}, ${plan.watchers} watchers: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

export const fanoutCapacity: Scenario = {
  name: 'fanout_capacity',
  target: `${PRIMARY}: ${describeTargets(FANOUT_CAPACITY_TARGETS)} (p99 ≤ ${P99_LIMIT_MS} ms, lost 0)`,
  async run(context: ScenarioContext) {
    // Nchan and the C floor are sides the targets compare against: without either, say so first.
    findNchan();
    const floorProgram = cFloorProgram();
    const size = context.quick ? SIZES.quick : SIZES.full;
    const loadAtStart = loadavg()[0] ?? 0;
    const points: PointResult[] = [];
    for (const point of size.points) {
      const plan: CapacityPlan = {
        watchers: point.watchers,
        startRate: point.startRate,
        stepSeconds: size.stepSeconds,
        warmupSeconds: size.warmupSeconds,
        bisections: size.bisections,
        retries: size.retries,
        p99LimitMs: P99_LIMIT_MS,
        maxDeliveriesPerSecond: MAX_DELIVERIES_PER_SECOND,
        fleetProcesses: FLEET_PROCESSES,
        reader: FLEET_READER,
        drainStallMs: DRAIN_STALL_MS,
      };
      const sides: SideResult[] = [];
      for (const side of AVISO_SIDES) sides.push(await measureTarget(side.name, () => startAvisoTarget(side), plan));
      sides.push(await measureTarget(BARE, startBareTarget, plan));
      sides.push(await measureTarget(NCHAN, () => startNchanTarget(point.watchers), plan));
      sides.push(await measureTarget(C_FLOOR, () => startCFloorTarget(floorProgram), plan));
      points.push({ watchers: point.watchers, sides });
    }

    const main = points[0] as PointResult;
    const find = (point: PointResult, name: string): SideResult | undefined => point.sides.find((side) => side.name === name);
    const value = capacityOf(find(main, PRIMARY));
    const bare = capacityOf(find(main, BARE));
    const nchan = capacityOf(find(main, NCHAN));
    const ratio = capacityRatio(value, bare);
    const ratioVsNchan = capacityRatio(value, nchan);
    const cpuVsBare = cpuRatio(find(main, PRIMARY), find(main, BARE));
    const targets = checkTargets(PRIMARY, points.map(pointFigures), FANOUT_CAPACITY_TARGETS);
    const missed = targets.filter((target) => !target.met).length;
    const summary =
      points
        .map(
          (point) =>
            `${point.watchers} watchers: ${point.sides.map((side) => `${side.name} ${describe(side)}`).join(', ')}; ${describeCpu(point)}`,
        )
        .join('; ') +
      `; ${PRIMARY} CPU/delivery ${round(cpuVsBare, 3)}× bare at ${main.sides[0]?.steps[0]?.rate ?? '?'}/s; ${missed} of ${targets.length} targets missed`;
    return {
      value: round(value),
      unit: 'deliveries/s',
      baseline: round(bare),
      ratio: round(ratio, 3),
      // A ratio against a side that measured nothing is NaN and never meets its target.
      pass: missed === 0,
      problems: points.flatMap((point) =>
        point.sides.flatMap((side) => side.problems.map((problem) => `${point.watchers} watchers, ${problem}`)),
      ),
      summary,
      extra: {
        watchers: size.points.map((point) => point.watchers),
        start_rates_per_s: size.points.map((point) => point.startRate),
        step_s: size.stepSeconds,
        warmup_s: size.warmupSeconds,
        bisections: size.bisections,
        retries_of_a_failed_step: size.retries,
        p99_limit_ms: P99_LIMIT_MS,
        fleet_processes: FLEET_PROCESSES,
        fleet_reader: FLEET_READER,
        nchan_deliveries_per_s: round(nchan),
        ratio_vs_nchan: round(ratioVsNchan, 3),
        cpu_ratio_vs_bare_at_start_rate: round(cpuVsBare, 3),
        cpu_ratio_vs_nchan_at_start_rate: round(cpuRatio(find(main, PRIMARY), find(main, NCHAN)), 3),
        cpu_ratio_vs_c_floor_at_start_rate: round(cpuRatio(find(main, PRIMARY), find(main, C_FLOOR)), 3),
        c_floor_deliveries_per_s: round(capacityOf(find(main, C_FLOOR))),
        targets: targets.map((target) => ({ target: target.target, ratio: round(target.ratio, 3), limit: target.limit, met: target.met })),
        load_average_at_start: round(loadAtStart, 3),
        load_average_at_end: round(loadavg()[0] ?? 0, 3),
        ...Object.fromEntries(points.map((point) => [`at_${point.watchers}`, pointRecord(point)])),
      },
    };
  },
};
