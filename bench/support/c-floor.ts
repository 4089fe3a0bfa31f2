import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { findExecutable } from './executables.js';
import { ROOT } from './paths.js';
import { makeTempDir, stopChild, tailCollector, trackChild } from './processes.js';

/**
 * The C floor of `fanout_capacity` (`baselines/c-fanout-server.c`): compiled with the machine's
 * `cc -O2` when the bench runs, started as its own process, driven over its stdin (`publish <json>`,
 * `count`) and answering on its stdout (`ready <port>`, `clients <n>`).
 */

export const C_FLOOR_SOURCE = join(ROOT, 'bench/baselines/c-fanout-server.c');
export const C_COMPILER_HINT =
  "install Debian's gcc and libc6-dev (`apt-get install -y --no-install-recommends gcc libc6-dev`; " +
  '`npm test` and `bash scripts/test-prerequisites.sh --bench` install them when run as root)';
const READY_TIMEOUT_MS = 15_000;
const ANSWER_TIMEOUT_MS = 30_000;

/** `cc` on `searchPath` (PATH unless given); throws with the install hint when there is none. */
export function findCCompiler(searchPath: string = process.env.PATH ?? ''): string {
  const compiler = findExecutable('cc', searchPath.split(delimiter));
  if (compiler === undefined) throw new Error(`cc (a C compiler) is not installed, so the C floor cannot be built: ${C_COMPILER_HINT}`);
  return compiler;
}

/** Compiles `source` with `cc -O2` into `outputDir`; returns the program's path. */
export function compileCFloor(source: string, outputDir: string): string {
  const compiler = findCCompiler();
  const program = join(outputDir, 'c-fanout-server');
  try {
    execFileSync(compiler, ['-O2', '-Wall', '-Wextra', '-o', program, source], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim() ?? '';
    throw new Error(`cc could not build ${source} (${stderr.slice(-1_000) || (error as Error).message}); ${C_COMPILER_HINT}`, {
      cause: error,
    });
  }
  return program;
}

let builtThisRun: string | undefined;

/** The C floor compiled once per bench run, into a temporary directory removed with the run. */
export function cFloorProgram(): string {
  builtThisRun ??= compileCFloor(C_FLOOR_SOURCE, makeTempDir('c-floor'));
  return builtThisRun;
}

export interface CFloorServer {
  readonly port: number;
  readonly pid: number;
  /** Queues the frame `event: live-notification`, `data: <json>` for every client (`json` is one line). */
  publish(json: string): void;
  /** The responses the server holds, once every command sent before was carried out. */
  clients(): Promise<number>;
  stop(): Promise<void>;
}

interface Waiter {
  readonly resolve: (value: number) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Starts the compiled C floor and waits for its `ready` line. `track` sees that the process ends
 * with its parent: the bench's own registry by default (a test passes its reaper).
 */
export async function startCFloor(program: string, track: (child: ChildProcess) => void = trackChild): Promise<CFloorServer> {
  const child = spawn(program, [], { stdio: ['pipe', 'pipe', 'pipe'] });
  track(child);
  const stderr = tailCollector();
  child.stderr?.on('data', (chunk: Buffer) => stderr.append(chunk));
  // `ready` first, then one `clients` answer per `count`, in order.
  const waiters: Waiter[] = [];
  let failure: Error | undefined;
  const fail = (error: Error): void => {
    failure ??= error;
    for (const waiter of waiters.splice(0)) waiter.reject(failure);
  };
  let partial = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (text: string) => {
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const match = /^(?:ready|clients) (\d+)$/.exec(line);
      const waiter = waiters.shift();
      if (match === null || waiter === undefined) fail(new Error(`the C floor said ${JSON.stringify(line)} unasked`));
      else waiter.resolve(Number(match[1]));
    }
  });
  child.once('exit', (code, signal) => fail(new Error(`the C floor exited (${signal ?? code}); stderr: ${stderr.text()}`)));
  child.once('error', (error) => fail(error));
  // A write after the process is gone fails here; the exit above tells why.
  child.stdin?.on('error', () => {});

  const nextAnswer = (timeoutMs: number, what: string): Promise<number> =>
    new Promise((resolve, reject) => {
      if (failure !== undefined) {
        reject(failure);
        return;
      }
      const timer = setTimeout(
        () => fail(new Error(`the C floor gave no ${what} within ${timeoutMs} ms; stderr: ${stderr.text()}`)),
        timeoutMs,
      );
      waiters.push({
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });

  try {
    const port = await nextAnswer(READY_TIMEOUT_MS, 'ready line');
    return {
      port,
      pid: child.pid as number,
      publish(json) {
        if (json.includes('\n')) throw new Error('a frame for the C floor must be one line');
        child.stdin?.write(`publish ${json}\n`);
      },
      clients() {
        const answer = nextAnswer(ANSWER_TIMEOUT_MS, 'client count');
        child.stdin?.write('count\n');
        return answer;
      },
      async stop() {
        // End of stdin ends it; SIGTERM ends it too, should it be busy.
        child.stdin?.end();
        await stopChild(child, 'SIGTERM', 5_000);
      },
    };
  } catch (error) {
    await stopChild(child, 'SIGTERM', 5_000);
    throw error;
  }
}
