import cluster from 'node:cluster';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/model.js';
import type { ReloadSource } from '../config/reload-outcome.js';
import { forwardedLines } from '../logging/logger.js';
import { quickExitsAfter, restartDelayMs } from './restart-policy.js';
import { WorkerLink } from './worker-link.js';
import type { WorkerMessage } from './worker-messages.js';
import { forEachLine } from './worker-output.js';

/** Why startup failed: a worker ended before it listened. */
export interface StartupFailure {
  readonly workerId: number;
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** What it wrote on stderr, its one failure line among them when it wrote one (D17). */
  readonly stderr: readonly string[];
}

export interface WorkerPoolOptions {
  readonly size: number;
  readonly logger: Logger;
  /** The configuration a worker starts with and its version: what its siblings run now. */
  readonly startingPoint: () => { readonly config: AppConfig; readonly version: number };
  /** A worker's admin route or `SIGHUP` asked for a reload of every worker. */
  readonly onReloadRequest: (link: WorkerLink, requester: number, source: ReloadSource) => void;
  /** A worker started after the pool was serving (a replacement) now listens. */
  readonly onReplacementListening: (slot: WorkerSlot) => void;
  /** A worker is gone (for any reason), before any replacement is forked. */
  readonly onExit: (workerId: number) => void;
  /** Milliseconds since some origin; `Date.now` unless a test gives another. */
  readonly now?: () => number;
}

/** One worker position, 1 to N: a replacement takes the id of the worker it replaces. */
export interface WorkerSlot {
  readonly id: number;
  link: WorkerLink | undefined;
  listening: boolean;
  /** The configuration version it started with or was last brought to. */
  configVersion: number;
  forkedAt: number;
  quickExits: number;
  restart: NodeJS.Timeout | undefined;
  /** stderr lines held back until it listens, during the pool's startup only. */
  heldStderr: string[] | undefined;
}

type Phase = 'starting' | 'serving' | 'stopping';

/**
 * The primary's workers (D36): forks them with the configuration to serve, forwards their output
 * line by line, replaces one that dies while serving (restart-policy.ts), and stops them all.
 */
export class WorkerPool {
  private readonly slots: WorkerSlot[];
  private phase: Phase = 'starting';
  private readonly now: () => number;
  /** Resolves when every worker's process has closed its output, once stopping. */
  private readonly closed = new Set<Promise<void>>();
  private readonly exitCodes: (number | null)[] = [];
  private startup: { resolve(port: number): void; reject(failure: StartupFailure): void } | undefined;

  constructor(private readonly options: WorkerPoolOptions) {
    this.now = options.now ?? Date.now;
    this.slots = Array.from({ length: options.size }, (_, index) => ({
      id: index + 1,
      link: undefined,
      listening: false,
      configVersion: 0,
      forkedAt: 0,
      quickExits: 0,
      restart: undefined,
      heldStderr: [],
    }));
  }

  /** Forks every worker; resolves with the port once all listen, rejects when one ends before. */
  start(): Promise<number> {
    const started = new Promise<number>((resolve, reject) => (this.startup = { resolve, reject }));
    for (const slot of this.slots) this.fork(slot);
    return started;
  }

  /** The links of the workers that serve now. */
  listening(): WorkerLink[] {
    return this.slots.flatMap((slot) => (slot.listening && slot.link ? [slot.link] : []));
  }

  /** Asks every worker to drain; resolves with their exit codes once every one has exited. */
  async stop(reason: string): Promise<(number | null)[]> {
    this.phase = 'stopping';
    for (const slot of this.slots) {
      clearTimeout(slot.restart);
      slot.restart = undefined;
      slot.link?.send({ type: 'aviso:shutdown', reason });
    }
    while (this.closed.size > 0) await Promise.all(this.closed);
    return this.exitCodes;
  }

  /** Ends every worker at once (a second signal, or a startup that failed). */
  kill(): Promise<void> {
    this.phase = 'stopping';
    for (const slot of this.slots) {
      clearTimeout(slot.restart);
      slot.link?.worker.process.kill('SIGKILL');
    }
    return Promise.all(this.closed).then(() => undefined);
  }

  private fork(slot: WorkerSlot): void {
    const worker = cluster.fork();
    const link = new WorkerLink(slot.id, worker, (message) => this.received(slot, message));
    slot.link = link;
    slot.listening = false;
    slot.forkedAt = this.now();
    const { stdout, stderr } = worker.process;
    if (stdout) {
      const sink = forwardedLines(this.options.logger);
      forEachLine(stdout, (line) => {
        if (sink.write(`${line}\n`) || stdout.isPaused()) return;
        // stdout is behind: the worker's lines wait in its pipe, not in the primary's memory.
        stdout.pause();
        sink.once('drain', () => stdout.resume());
      });
    }
    if (stderr) forEachLine(stderr, (line) => this.stderrLine(slot, line));
    const closed = new Promise<void>((resolve) => worker.process.once('close', () => resolve()));
    this.closed.add(closed);
    void closed.then(() => this.closed.delete(closed));
    worker.once('exit', (code, signal) => this.exited(slot, link, code, signal));
    this.options.logger.info(
      { event_name: 'cluster.worker.forked', worker: slot.id, pid: worker.process.pid },
      `Worker ${slot.id} started (pid ${worker.process.pid})`,
    );
  }

  private stderrLine(slot: WorkerSlot, line: string): void {
    if (slot.heldStderr) slot.heldStderr.push(line);
    else process.stderr.write(`${line}\n`);
  }

  private received(slot: WorkerSlot, message: WorkerMessage): void {
    if (message.type === 'aviso:awaiting-start') {
      const { config, version } = this.options.startingPoint();
      slot.configVersion = version;
      slot.link?.send({ type: 'aviso:start', workerId: slot.id, config });
      return;
    }
    if (message.type === 'aviso:reload-request') {
      if (slot.link) this.options.onReloadRequest(slot.link, message.requester, message.source);
      return;
    }
    if (message.type !== 'aviso:listening' || this.phase === 'stopping') return;
    slot.listening = true;
    // Logged here too: the primary's own lines keep their order, a worker's arrive through its pipe.
    this.options.logger.info(
      { event_name: 'cluster.worker.listening', worker: slot.id, pid: slot.link?.pid, port: message.port },
      `Worker ${slot.id} (pid ${slot.link?.pid}) listens on port ${message.port}`,
    );
    if (this.phase === 'serving') {
      this.options.onReplacementListening(slot);
      return;
    }
    for (const line of slot.heldStderr ?? []) process.stderr.write(`${line}\n`);
    slot.heldStderr = undefined;
    if (this.slots.every((each) => each.listening)) {
      this.phase = 'serving';
      this.startup?.resolve(message.port);
    }
  }

  private exited(slot: WorkerSlot, link: WorkerLink, code: number | null, signal: string | null): void {
    if (slot.link !== link) return;
    slot.link = undefined;
    slot.listening = false;
    this.options.onExit(slot.id);
    const details = { worker: slot.id, pid: link.pid, exit_code: code, signal };
    if (this.phase === 'stopping') {
      this.exitCodes.push(code);
      this.options.logger.info({ event_name: 'cluster.worker.exited', ...details }, `Worker ${slot.id} exited`);
      return;
    }
    if (this.phase === 'starting') {
      this.phase = 'stopping';
      this.startup?.reject({ workerId: slot.id, exitCode: code, signal, stderr: slot.heldStderr ?? [] });
      return;
    }
    slot.quickExits = quickExitsAfter(slot.quickExits, this.now() - slot.forkedAt);
    const delayMs = restartDelayMs(slot.quickExits);
    this.options.logger.error(
      { event_name: 'cluster.worker.exited', ...details, restart_in_ms: delayMs, quick_exits: slot.quickExits },
      `Worker ${slot.id} exited unexpectedly (${signal ?? `code ${code}`}); a replacement starts in ${delayMs} ms`,
    );
    slot.restart = setTimeout(() => {
      slot.restart = undefined;
      if (this.phase === 'serving') this.fork(slot);
    }, delayMs);
  }
}
