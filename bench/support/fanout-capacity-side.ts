import { searchCapacity, type CapacityStep } from './capacity-search.js';
import { cpuMeter, treeCpuMeter } from './cpu-time.js';
import type { FanoutTarget } from './fanout-targets.js';
import { FleetSet, type WindowReport } from './fleet-set.js';

/**
 * One server's fan-out capacity at one number of watchers: the fleet holds the watchers, a warm-up
 * step runs at the start rate, then the rate search (`capacity-search.ts`) runs steps of a fixed
 * length. A step publishes its notifications at the step's rate and waits until every stream got
 * every one (or deliveries stop for `drainStallMs`); it holds when nothing was refused or lost, no
 * stream ended, nothing arrived twice or unreadable, and p99 (publish → receipt) is within the bound.
 */

export interface CapacityPlan {
  readonly watchers: number;
  readonly startRate: number;
  readonly stepSeconds: number;
  readonly warmupSeconds: number;
  readonly bisections: number;
  /** Repeats of a failed step before its rate counts as failed. */
  readonly retries: number;
  readonly p99LimitMs: number;
  /** The doubling stops before the offered deliveries per second pass this. */
  readonly maxDeliveriesPerSecond: number;
  readonly fleetProcesses: number;
  /** How the fleet reads its streams (`FleetOpenCommand.reader`). */
  readonly reader: 'node-http' | 'raw-socket';
  readonly drainStallMs: number;
}

export interface Step extends CapacityStep {
  readonly notifications: number;
  /** Offered: rate × watchers. */
  readonly deliveriesPerSecond: number;
  /** Measured: deliveries / (last receipt − first send). */
  readonly deliveredPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly lost: number;
  readonly refused: number;
  readonly streamsEnded: number;
  /** CPU over the step (first send until the last delivery), in cores, and per delivery. */
  readonly serverCores: number;
  readonly serverCpuMicrosPerDelivery: number;
  readonly brokerCores: number | undefined;
  readonly brokerCpuMicrosPerDelivery: number | undefined;
  readonly fleetCores: number;
  readonly fleetCpuMicrosPerDelivery: number;
  readonly publisherCores: number;
  /** Why the step did not hold; empty when it held. */
  readonly failedBy: readonly string[];
}

export interface SideResult {
  readonly name: string;
  readonly watchers: number;
  readonly openMs: number;
  readonly warmup: Step;
  readonly steps: readonly Step[];
  readonly capacity: Step | undefined;
  readonly firstFailure: Step | undefined;
  /** Correctness problems (duplicates, unreadable frames, error frames, refusals, loss on streams that stayed open). */
  readonly problems: readonly string[];
}

const OPEN_TIMEOUT_MS = 300_000;
/** Steps shorter than this would rest the p99 on too few fan-outs. */
const MIN_STEP_NOTIFICATIONS = 3;

async function openFleet(target: FanoutTarget, plan: CapacityPlan): Promise<FleetSet> {
  const fleets = await FleetSet.open(target.subscription, plan.watchers, {
    processes: plan.fleetProcesses,
    reader: plan.reader,
    timeoutMs: OPEN_TIMEOUT_MS,
  });
  try {
    await target.checkSubscribers(plan.watchers);
    return fleets;
  } catch (error) {
    await fleets.stop();
    throw error;
  }
}

function stepProblems(name: string, rate: number, report: WindowReport, refused: number, refusal: string | undefined): string[] {
  const lead = `${name} at ${rate}/s: `;
  const problems: string[] = [];
  if (report.duplicates > 0) problems.push(`${lead}${report.duplicates} duplicate deliveries`);
  if (report.unexpected > 0) problems.push(`${lead}${report.unexpected} unreadable or unexpected frames`);
  if (report.errorFrames > 0) problems.push(`${lead}${report.errorFrames} error frames`);
  if (refused > 0) problems.push(`${lead}${refused} publishes refused, e.g. ${refusal}`);
  // A slow-consumer close may lose what the stream had not taken; with every stream open nothing may be lost.
  if (report.lost > 0 && Object.keys(report.closeReasons).length === 0)
    problems.push(`${lead}${report.lost} deliveries lost while every stream stayed open`);
  return problems;
}

/** A fleet held open on one target, running fixed-rate steps: what a capacity search and an A/B are made of. */
export interface FanoutSession {
  readonly openMs: number;
  /** Publishes `rate × seconds` notifications (at least a few) at `rate` and measures them. */
  step(rate: number, seconds: number): Promise<Step>;
  /** Correctness problems seen so far. */
  readonly problems: readonly string[];
  stop(): Promise<void>;
}

export async function openFanoutSession(target: FanoutTarget, plan: CapacityPlan): Promise<FanoutSession> {
  const openStarted = performance.now();
  let fleets = await openFleet(target, plan);
  const openMs = performance.now() - openStarted;
  const problems: string[] = [];
  let nextIndex = 0;
  const step = async (rate: number, seconds: number): Promise<Step> => {
    const notifications = Math.max(MIN_STEP_NOTIFICATIONS, Math.round(rate * seconds));
    const first = nextIndex;
    nextIndex += notifications;
    await fleets.window(first, notifications);
    const server = treeCpuMeter(target.serverPid);
    const broker = target.brokerPid === undefined ? undefined : cpuMeter(target.brokerPid);
    const fleetMeters = fleets.pids.map((pid) => cpuMeter(pid));
    const publisherAtStart = process.cpuUsage();
    const wallAtStart = performance.now();
    const sent = await target.publish(first, notifications, rate);
    await fleets.drain(plan.drainStallMs);
    const serverCpu = server.stop();
    const brokerCpu = broker?.stop();
    const fleetCpu = fleetMeters.map((meter) => meter.stop());
    const publisherUsage = process.cpuUsage(publisherAtStart);
    const wallSeconds = (performance.now() - wallAtStart) / 1000;
    const report = await fleets.report();
    problems.push(...stepProblems(target.name, rate, report, sent.refused, sent.refusal));
    const streamsEnded = Object.values(report.closeReasons).reduce((sum, n) => sum + n, 0);
    const failedBy: string[] = [];
    if (report.p99Ms > plan.p99LimitMs) failedBy.push(`p99 ${report.p99Ms.toFixed(1)} ms`);
    if (report.lost > 0) failedBy.push(`lost ${report.lost}`);
    if (sent.refused > 0) failedBy.push(`refused ${sent.refused}`);
    if (streamsEnded > 0) failedBy.push(`${streamsEnded} streams ended`);
    if (report.duplicates + report.unexpected + report.errorFrames > 0) failedBy.push('bad frames');
    if (streamsEnded > 0) {
      // The following steps need every watcher again.
      await fleets.stop();
      fleets = await openFleet(target, plan);
    }
    const perDelivery = (seconds: number): number => (report.received > 0 ? (seconds * 1e6) / report.received : Number.NaN);
    return {
      rate,
      pass: failedBy.length === 0,
      notifications,
      deliveriesPerSecond: rate * plan.watchers,
      deliveredPerSecond: report.received / ((report.lastReceiveMs - sent.firstSendMs) / 1000),
      p50Ms: report.p50Ms,
      p99Ms: report.p99Ms,
      maxMs: report.maxMs,
      lost: report.lost,
      refused: sent.refused,
      streamsEnded,
      serverCores: serverCpu.cores,
      serverCpuMicrosPerDelivery: perDelivery(serverCpu.seconds),
      brokerCores: brokerCpu?.cores,
      brokerCpuMicrosPerDelivery: brokerCpu === undefined ? undefined : perDelivery(brokerCpu.seconds),
      fleetCores: fleetCpu.reduce((sum, cpu) => sum + cpu.cores, 0),
      fleetCpuMicrosPerDelivery: perDelivery(fleetCpu.reduce((sum, cpu) => sum + cpu.seconds, 0)),
      publisherCores: target.publishesFromBench ? (publisherUsage.user + publisherUsage.system) / 1e6 / wallSeconds : 0,
      failedBy,
    };
  };
  return { openMs, step, problems, stop: () => fleets.stop() };
}

export async function measureCapacity(target: FanoutTarget, plan: CapacityPlan): Promise<SideResult> {
  const session = await openFanoutSession(target, plan);
  try {
    const warmup = await session.step(plan.startRate, plan.warmupSeconds);
    const search = await searchCapacity(
      {
        startRate: plan.startRate,
        maxRate: plan.maxDeliveriesPerSecond / plan.watchers,
        bisections: plan.bisections,
        retries: plan.retries,
      },
      (rate) => session.step(rate, plan.stepSeconds),
    );
    return { name: target.name, watchers: plan.watchers, openMs: session.openMs, warmup, ...search, problems: session.problems };
  } finally {
    await session.stop();
  }
}
