import type { FleetClosed, FleetCommand, FleetComplete, FleetOpenCommand, FleetOpened, FleetProgress, FleetReport } from './fleet-protocol.js';
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
