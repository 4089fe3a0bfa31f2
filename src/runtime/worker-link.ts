import type { Worker } from 'node:cluster';
import type { ReloadOutcome } from '../config/reload-outcome.js';
import type { MetricsSnapshot } from '../metrics/prometheus-metrics.js';
import { isWorkerMessage, type PrimaryMessage, type WorkerMessage } from './worker-messages.js';

/** The worker ended (or its channel closed) before it answered. */
export class WorkerGoneError extends Error {
  constructor(workerId: number) {
    super(`worker ${workerId} exited before it answered`);
    this.name = 'WorkerGoneError';
  }
}

interface Pending {
  settle(message: WorkerMessage | Error): void;
}

/**
 * The primary's end of one worker's IPC channel (D36): plain sends, and requests whose answer
 * carries the request's id, each bounded by a timeout and failed at once when the worker exits.
 */
export class WorkerLink {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private gone = false;

  constructor(
    readonly workerId: number,
    readonly worker: Worker,
    /** Messages that answer no request (`aviso:listening`, `aviso:reload-request`). */
    onMessage: (message: WorkerMessage) => void,
  ) {
    worker.on('message', (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      const id = 'id' in message ? message.id : undefined;
      const waiting = id === undefined ? undefined : this.pending.get(id);
      if (waiting) waiting.settle(message);
      else onMessage(message);
    });
    worker.on('exit', () => {
      this.gone = true;
      for (const waiting of [...this.pending.values()]) waiting.settle(new WorkerGoneError(workerId));
    });
  }

  /** Whether the worker has exited (its exit has been handled by everyone listening for it). */
  get exited(): boolean {
    return this.gone;
  }

  get pid(): number | undefined {
    return this.worker.process.pid;
  }

  send(message: PrimaryMessage): void {
    if (this.gone || !this.worker.isConnected()) return;
    // A channel that closes meanwhile fails the send here; the worker's exit is handled by the pool.
    this.worker.send(message, undefined, () => undefined);
  }

  /** The worker applies a reload; resolves with its outcome. */
  async reload(build: (id: number) => PrimaryMessage, timeoutMs: number): Promise<ReloadOutcome> {
    const answer = await this.request(build, timeoutMs, 'apply the reload');
    if (answer.type !== 'aviso:reloaded') throw new Error(`worker ${this.workerId} answered ${answer.type} to a reload`);
    return answer.outcome;
  }

  async snapshot(timeoutMs: number): Promise<MetricsSnapshot> {
    const answer = await this.request((id) => ({ type: 'aviso:metrics', id }), timeoutMs, 'send its metrics');
    if (answer.type === 'aviso:metrics-snapshot') return answer.snapshot;
    if (answer.type === 'aviso:metrics-failed') throw new Error(`worker ${this.workerId} could not render its metrics: ${answer.error}`);
    throw new Error(`worker ${this.workerId} answered ${answer.type} to a metrics request`);
  }

  private request(build: (id: number) => PrimaryMessage, timeoutMs: number, what: string): Promise<WorkerMessage> {
    if (this.gone) return Promise.reject(new WorkerGoneError(this.workerId));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => waiting.settle(new Error(`worker ${this.workerId} did not ${what} within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      const waiting: Pending = {
        settle: (result) => {
          clearTimeout(timer);
          this.pending.delete(id);
          if (result instanceof Error) reject(result);
          else resolve(result);
        },
      };
      this.pending.set(id, waiting);
      this.send(build(id));
    });
  }
}
