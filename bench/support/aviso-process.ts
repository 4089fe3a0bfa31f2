import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { SERVER_ENTRY } from './paths.js';
import { makeTempDir, profileFlags, removeTempDir, stopChild, tailCollector, trackChild } from './processes.js';

const STARTUP_TIMEOUT_MS = 30_000;
const LOG_POLL_MS = 20;

export interface AvisoProcess {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** SIGTERM (graceful shutdown), SIGKILL after 10 s; removes the temporary config. */
  stop(): Promise<void>;
}

export interface AvisoOptions {
  /** The whole configuration file, written as YAML and passed with AVISOSERVER_CONFIG_FILE. */
  readonly config: Record<string, unknown>;
  /** Extra node flags, e.g. `--cpu-prof`. */
  readonly execArgv?: readonly string[];
  /** Another build's `main.js` (A/B comparisons, `bench/ab.ts`); the current build by default. */
  readonly entry?: string;
  /**
   * The port `config` sets, for a configuration whose log level hides the startup line: the
   * process is then ready once `/health` answers.
   */
  readonly port?: number;
}

/**
 * Starts the built server (`dist/src/main.js`) as its own process and resolves once it logged
 * `startup.server.started`. Its log (JSON lines on stdout, one per notify at `info`) goes to a file
 * in its temporary directory, as a container runtime would keep it: a pipe to this process would
 * stall the server's logger whenever the bench, competing for the same two cores, reads late.
 */
export async function startAviso(options: AvisoOptions): Promise<AvisoProcess> {
  const dir = makeTempDir('aviso');
  const file = join(dir, 'config.yaml');
  const logFile = join(dir, 'aviso.log');
  writeFileSync(file, stringify(options.config));
  const logFd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...(options.execArgv ?? []), ...profileFlags('aviso'), options.entry ?? SERVER_ENTRY], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, AVISOSERVER_CONFIG_FILE: file },
    stdio: ['ignore', logFd, 'pipe'],
  });
  closeSync(logFd);
  trackChild(child);
  const stderr = tailCollector();
  child.stderr?.on('data', (chunk: Buffer) => stderr.append(chunk));
  let exitCode: string | undefined;
  child.once('exit', (code, signal) => (exitCode = String(signal ?? code)));

  const stop = async (): Promise<void> => {
    await stopChild(child, 'SIGTERM', 10_000);
    removeTempDir(dir);
  };

  try {
    const port =
      options.port ??
      (await startupPort(
        logFile,
        () => exitCode,
        () => stderr.text(),
      ));
    if (options.port !== undefined)
      await untilHealthy(
        options.port,
        () => exitCode,
        () => stderr.text(),
      );
    return { url: `http://127.0.0.1:${port}`, pid: child.pid as number, child, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function untilHealthy(port: number, exitCode: () => string | undefined, stderr: () => string): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    const answered = await fetch(`http://127.0.0.1:${port}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) return;
    const code = exitCode();
    if (code !== undefined) throw new Error(`aviso exited (${code}) before listening; stderr: ${stderr()}`);
    if (Date.now() > deadline) throw new Error(`aviso did not answer /health within ${STARTUP_TIMEOUT_MS} ms; stderr: ${stderr()}`);
    await sleep(LOG_POLL_MS);
  }
}

/** Reads the log as it grows until the `startup.server.started` line, and returns its port. */
async function startupPort(logFile: string, exitCode: () => string | undefined, stderr: () => string): Promise<number> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  let offset = 0;
  let pending = '';
  for (;;) {
    const text = readFrom(logFile, offset);
    offset += Buffer.byteLength(text);
    pending += text;
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (!line.includes('startup.server.started')) continue;
      const port = (JSON.parse(line) as { attributes?: { port?: unknown } }).attributes?.port;
      if (typeof port === 'number') return port;
    }
    const code = exitCode();
    if (code !== undefined) throw new Error(`aviso exited (${code}) before listening; stderr: ${stderr()}`);
    if (Date.now() > deadline)
      throw new Error(`aviso did not log startup.server.started within ${STARTUP_TIMEOUT_MS} ms; stderr: ${stderr()}`);
    // Poll period of the log; the server offers nothing else to wait on before it listens.
    await sleep(LOG_POLL_MS);
  }
}

function readFrom(file: string, offset: number): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const read = readSync(fd, buffer, 0, buffer.length, offset);
    // Only whole UTF-8 sequences: the log is ASCII JSON in practice, so this is the whole read.
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
