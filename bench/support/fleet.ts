import type {
  FleetClosed,
  FleetCommand,
  FleetComplete,
  FleetOpenCommand,
  FleetOpened,
  FleetProgress,
  FleetReport,
  FleetWindowSet,
} from './fleet-protocol.js';
import { Worker } from './processes.js';

const DRAIN_POLL_MS = 500;

/** The bench's handle on an SSE client fleet process (`sse-fleet.ts`). */
export class Fleet {
  private constructor(private readonly worker: Worker<FleetCommand>) {}

  static async start(): Promise<Fleet> {
    const worker = Worker.start<FleetCommand>('support/sse-fleet', {});
    await worker.next('ready', 15_000);
    return new Fleet(worker);
  }

  get pid(): number {
    return this.worker.pid;
  }

  /** Opens the streams and resolves once each got its opening frame (or failed). */
  async open(command: Omit<FleetOpenCommand, 'type'>, timeoutMs: number): Promise<FleetOpened> {
    this.worker.send({ type: 'open', ...command });
    return this.worker.next<FleetOpened>('opened', timeoutMs);
  }

  /** Counts notifications `first` … `first + count − 1` from now on (`FleetWindowCommand`). */
  async window(first: number, count: number): Promise<void> {
    this.worker.send({ type: 'window', first, count });
    await this.worker.next<FleetWindowSet>('window_set', 10_000);
    // The window before may have completed after its drain gave up; that message, sent before the
    // reset, is queued by now and must not end the next drain.
    while ((await this.worker.within<FleetComplete>('complete', 0)) !== undefined);
  }

  /**
   * Waits until every stream received every expected notification (true), or until deliveries
   * stopped making progress for `stallMs` (false): a slow server is waited for as long as it keeps
   * delivering, and only what never arrives counts as lost.
   */
  async drain(stallMs: number): Promise<boolean> {
    let received = -1;
    let lastProgress = Date.now();
    for (;;) {
      if ((await this.worker.within<FleetComplete>('complete', DRAIN_POLL_MS)) !== undefined) return true;
      this.worker.send({ type: 'progress' });
      const progress = await this.worker.next<FleetProgress>('progress', 10_000);
      if (progress.received !== received) {
        received = progress.received;
        lastProgress = Date.now();
      } else if (Date.now() - lastProgress >= stallMs) {
        return false;
      }
    }
  }

  async report(): Promise<FleetReport> {
    this.worker.send({ type: 'report' });
    return this.worker.next<FleetReport>('report', 30_000);
  }

  /** Closes every stream (the client side goes away) and ends the process. */
  async stop(): Promise<void> {
    try {
      this.worker.send({ type: 'close' });
      await this.worker.next<FleetClosed>('closed', 10_000);
    } catch {
      // The process is stopped below either way.
    }
    await this.worker.stop();
  }
}

/** The counts of a fleet report that tell whether delivery was correct. */
export type FleetCounts = Pick<
  FleetReport,
  'streams' | 'lost' | 'streamsWithLoss' | 'duplicates' | 'unexpected' | 'errorFrames' | 'misdelivered' | 'closeReasons'
>;

/** The reports of several fleets holding parts of one set of watchers, as one: counts summed, close reasons merged. */
export function fleetCounts(reports: readonly FleetReport[]): FleetCounts {
  const sum = (pick: (report: FleetReport) => number): number => reports.reduce((total, report) => total + pick(report), 0);
  const closeReasons: Record<string, number> = {};
  for (const report of reports)
    for (const [reason, n] of Object.entries(report.closeReasons)) closeReasons[reason] = (closeReasons[reason] ?? 0) + n;
  return {
    streams: sum((r) => r.streams),
    lost: sum((r) => r.lost),
    streamsWithLoss: sum((r) => r.streamsWithLoss),
    duplicates: sum((r) => r.duplicates),
    unexpected: sum((r) => r.unexpected),
    errorFrames: sum((r) => r.errorFrames),
    misdelivered: sum((r) => r.misdelivered),
    closeReasons,
  };
}

/**
 * Adds to `problems` what a fleet report shows went wrong: lost, duplicate and unreadable
 * notifications, error frames, streams that ended early; each line led by `label` when given.
 * Misdelivery (selective delivery only) is left to the scenario that asks for it.
 */
export function fleetProblems(report: FleetCounts, label: string | undefined, problems: string[]): void {
  const lead = label === undefined ? '' : `${label}: `;
  if (report.lost > 0)
    problems.push(`${lead}${report.lost} notifications lost over ${report.streamsWithLoss} of ${report.streams} watchers`);
  if (report.duplicates > 0) problems.push(`${lead}${report.duplicates} duplicate deliveries`);
  if (report.unexpected > 0) problems.push(`${lead}${report.unexpected} unreadable or unexpected notification frames`);
  if (report.errorFrames > 0) problems.push(`${lead}${report.errorFrames} error frames`);
  const closes = Object.entries(report.closeReasons);
  if (closes.length > 0) problems.push(`${lead}streams ended early: ${closes.map(([reason, n]) => `${n}× ${reason}`).join(', ')}`);
}
