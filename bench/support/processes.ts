import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchEntry } from './paths.js';

/**
 * Every process and temporary directory the bench starts is registered here, so a run that ends in
 * any way (normally, by an error, by Ctrl-C) kills its children and removes its directories.
 */
const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();
/** Processes the bench did not start itself but must not leave behind (a forked server's workers). */
const grandchildren = new Set<number>();
let cleanupInstalled = false;

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once('exit', cleanUpNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal} received, stopping every child process\n`);
      // `exit` runs cleanUpNow.
      process.exit(130);
    });
  }
}

function cleanUpNow(): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  for (const pid of grandchildren) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // It ended with its parent.
    }
  }
  grandchildren.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

let profileDir: string | undefined;

/** From now on every Node child (server under test, baselines, load generators) writes a CPU profile into `dir`. */
export function profileChildrenInto(dir: string): void {
  profileDir = dir;
}

/** `--cpu-prof` flags for a child named `name` when profiling is on, else none. */
export function profileFlags(name: string): string[] {
  if (profileDir === undefined) return [];
  const file = `${name.replace(/[^a-z0-9_-]+/gi, '-')}-${Date.now()}.cpuprofile`;
  return ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${file}`];
}

export function trackChild(child: ChildProcess): void {
  installCleanup();
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/**
 * Kills `pid` with the run when it is still there: for a process a child forked (nginx's worker),
 * which killing the child itself with SIGKILL would orphan. `untrackGrandchild` once it is gone.
 */
export function trackGrandchild(pid: number): void {
  installCleanup();
  grandchildren.add(pid);
}

export function untrackGrandchild(pid: number): void {
  grandchildren.delete(pid);
}

export function makeTempDir(prefix: string): string {
  installCleanup();
  const dir = mkdtempSync(join(tmpdir(), `aviso-bench-${prefix}-`));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Resolves when the child has exited; SIGKILLs it if it ignores `signal` for `timeoutMs`. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Keeps the end of a stream's text for error messages. */
export function tailCollector(limit = 4_000): { append(chunk: Buffer | string): void; text(): string } {
  let text = '';
  return {
    append(chunk) {
      text = (text + chunk.toString()).slice(-limit);
    },
    text: () => text,
  };
}

/** The shape of every message a worker sends: a `type` tag, `failed` for an error it could not handle. */
export interface WorkerMessage {
  readonly type: string;
}

export interface FailedMessage extends WorkerMessage {
  readonly type: 'failed';
  readonly message: string;
}

function isWorkerMessage(value: unknown): value is WorkerMessage {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/**
 * A bench module running in its own Node process with an IPC channel: it gets its options as JSON
 * in argv, answers with typed messages, and is killed with the run.
 */
export class Worker<Command extends WorkerMessage = WorkerMessage> {
  private readonly inbox: WorkerMessage[] = [];
  private readonly waiters = new Set<() => void>();
  private failure: Error | undefined;
  private readonly stderr = tailCollector();

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.append(chunk));
    child.stdout?.on('data', (chunk: Buffer) => this.stderr.append(chunk));
    child.on('message', (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      if (message.type === 'failed') {
        this.failure = new Error(`${name} failed: ${(message as FailedMessage).message}`);
      } else {
        this.inbox.push(message);
      }
      this.wake();
    });
    child.once('exit', (code, signal) => {
      this.failure ??= new Error(`${name} exited (${signal ?? code}) unexpectedly; output:\n${this.stderr.text()}`);
      this.wake();
    });
  }

  static start<Command extends WorkerMessage = WorkerMessage>(
    modulePath: string,
    options: unknown,
    execArgv: readonly string[] = [],
  ): Worker<Command> {
    const child = fork(benchEntry(modulePath), [JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      execArgv: [...execArgv, ...profileFlags(modulePath)],
      serialization: 'json',
    });
    trackChild(child);
    return new Worker<Command>(modulePath, child);
  }

  get pid(): number {
    return this.child.pid as number;
  }

  send(command: Command): void {
    this.child.send(command);
  }

  /** The first message of `type` that has arrived or arrives within `timeoutMs`; throws otherwise. */
  async next<T extends WorkerMessage>(type: T['type'], timeoutMs: number): Promise<T> {
    const message = await this.within<T>(type, timeoutMs);
    if (message === undefined) throw new Error(`${this.name}: no '${type}' message within ${timeoutMs} ms; output:\n${this.stderr.text()}`);
    return message;
  }

  /** Like `next`, but `undefined` when `timeoutMs` passes first. */
  async within<T extends WorkerMessage>(type: T['type'], timeoutMs: number): Promise<T | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.inbox.findIndex((message) => message.type === type);
      if (index >= 0) return this.inbox.splice(index, 1)[0] as T;
      if (this.failure) throw this.failure;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, remaining);
        this.waiters.add(wake);
      });
    }
  }

  async stop(): Promise<void> {
    this.failure ??= new Error(`${this.name} was stopped`);
    await stopChild(this.child, 'SIGTERM', 5_000);
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
