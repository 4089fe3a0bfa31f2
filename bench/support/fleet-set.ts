import { Fleet, fleetCounts, type FleetCounts } from './fleet.js';
import { percentileOfSorted } from './stats.js';

/** How the fleet subscribes to a server: aviso and the bare server take a POSTed watch, Nchan an EventSource GET. */
export interface Subscription {
  readonly origin: string;
  readonly path: string;
  readonly method: 'GET' | 'POST';
  readonly opening: 'frame' | 'comment';
  /** The request body of watcher `index` (ignored for GET). */
  readonly body: (index: number) => string;
}

export interface WindowReport extends FleetCounts {
  /** Distinct notifications received, summed over streams. */
  readonly received: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly firstReceiveMs: number;
  readonly lastReceiveMs: number;
}

/** Streams being set up at once by one fleet process. */
const OPEN_CONCURRENCY = 100;

/**
 * W streams of one subscription spread evenly over several SSE fleet processes (so the readers
 * can use every core the server leaves them), counted window by window: the steps of a capacity
 * search. Reports merge the processes' counts and latency samples.
 */
export class FleetSet {
  private constructor(
    private readonly fleets: readonly Fleet[],
    readonly watchers: number,
  ) {}

  static async open(
    subscription: Subscription,
    watchers: number,
    options: { readonly processes: number; readonly reader: 'node-http' | 'raw-socket'; readonly timeoutMs: number },
  ): Promise<FleetSet> {
    const { processes, reader, timeoutMs } = options;
    const fleets: Fleet[] = [];
    try {
      for (let p = 0; p < processes; p++) fleets.push(await Fleet.start());
      const perFleet = Math.ceil(watchers / processes);
      // One fleet at a time: one opener at a time keeps the server's accept queue short.
      for (let p = 0; p < processes; p++) {
        const first = p * perFleet;
        const count = Math.max(0, Math.min(perFleet, watchers - first));
        const groups = Array.from({ length: count }, (_, i) => ({ body: subscription.body(first + i), count: 1 }));
        const opened = await (fleets[p] as Fleet).open(
          {
            origin: subscription.origin,
            path: subscription.path,
            method: subscription.method,
            opening: subscription.opening,
            reader,
            groups,
            concurrency: OPEN_CONCURRENCY,
            expectedNotifications: 0,
            streamOffset: first,
            keepSamples: true,
          },
          timeoutMs,
        );
        if (opened.opened !== count) throw new Error(`only ${opened.opened} of ${count} streams opened: ${opened.failures.join('; ')}`);
      }
      return new FleetSet(fleets, watchers);
    } catch (error) {
      await Promise.all(fleets.map((fleet) => fleet.stop()));
      throw error;
    }
  }

  get pids(): number[] {
    return this.fleets.map((fleet) => fleet.pid);
  }

  async window(first: number, count: number): Promise<void> {
    await Promise.all(this.fleets.map((fleet) => fleet.window(first, count)));
  }

  /** Whether every stream got every notification of the window (see `Fleet.drain`). */
  async drain(stallMs: number): Promise<boolean> {
    const complete = await Promise.all(this.fleets.map((fleet) => fleet.drain(stallMs)));
    return complete.every(Boolean);
  }

  async report(): Promise<WindowReport> {
    const reports = await Promise.all(this.fleets.map((fleet) => fleet.report()));
    const samples = reports.flatMap((report) => report.samplesMs ?? []).sort((a, b) => a - b);
    const received = reports.reduce((sum, report) => sum + report.received, 0);
    const finite = (values: number[]): number[] => values.filter(Number.isFinite);
    return {
      ...fleetCounts(reports),
      received,
      p50Ms: percentileOfSorted(samples, 50),
      p99Ms: percentileOfSorted(samples, 99),
      maxMs: percentileOfSorted(samples, 100),
      firstReceiveMs: Math.min(...finite(reports.map((report) => report.firstReceiveMs))),
      lastReceiveMs: Math.max(...finite(reports.map((report) => report.lastReceiveMs))),
    };
  }

  async stop(): Promise<void> {
    await Promise.all(this.fleets.map((fleet) => fleet.stop()));
  }
}
