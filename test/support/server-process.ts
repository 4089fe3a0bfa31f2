import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { reapOnExit } from './child-reaper.js';

const ROOT = resolve(import.meta.dirname, '../..');
export const SERVER_ENTRY = join(ROOT, 'dist/src/main.js');

export interface LogLine {
  readonly severityText?: string;
  readonly body?: string;
  readonly attributes?: Record<string, unknown>;
  readonly [key: string]: unknown;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** Parsed JSON log lines from stdout so far. */
  readonly logs: LogLine[];
  stderr(): string;
  /** The YAML file AVISOSERVER_CONFIG_FILE names. */
  readonly configFile: string;
  /** Overwrites that file (with the same port handling as at start), e.g. before a reload. */
  rewriteConfig(config: Record<string, unknown> | string): void;
  /** Sends a signal without waiting for anything (e.g. SIGHUP). */
  signal(signal: NodeJS.Signals): void;
  /**
   * The first log line from index `from` on whose `event.name` is `eventName`, waiting for it;
   * `from` defaults to the lines logged so far, so only a later line counts.
   */
  waitForLog(eventName: string, options?: { from?: number; timeoutMs?: number }): Promise<LogLine>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ServerOptions {
  /** Written as YAML and passed with AVISOSERVER_CONFIG_FILE. */
  readonly config: Record<string, unknown> | string;
  readonly env?: Record<string, string>;
  /** Listen on this port (`application.port` of an object config); a restart reuses its old one. */
  readonly port?: number;
  /** How long to wait for `startup.server.started` (or, running to exit, for the exit); 15 s unless given. */
  readonly startTimeoutMs?: number;
  /**
   * Read the server's stdout at about this many bytes per second instead of as fast as it comes: a
   * slow log sink, so the server's writes wait for the reader.
   */
  readonly stdoutBytesPerSecond?: number;
  /** Which parsed lines `logs` keeps (all unless given): a flood's lines need not stay in the test's memory. */
  readonly keepLog?: (line: LogLine) => boolean;
  /**
   * Send stdout to this file instead of a pipe (a fast log sink that never makes the server wait).
   * `logs` then holds only the lines up to `startup.server.started`.
   */
  readonly stdoutFile?: string;
}

/** A `waitForLog` call still waiting: told of each line logged from then on. */
interface LogWaiter {
  readonly eventName: string;
  readonly from: number;
  found(line: LogLine): void;
}

function eventNameOf(line: LogLine | undefined): unknown {
  return line?.attributes?.['event.name'];
}

function ensureBuilt(): void {
  if (!existsSync(SERVER_ENTRY)) {
    throw new Error(`${SERVER_ENTRY} is missing: run \`npm run build\` (npm test does it for you)`);
  }
}

function writeConfig(config: Record<string, unknown> | string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'aviso-e2e-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, typeof config === 'string' ? config : stringify(config));
  return { dir, file };
}

function withPort(config: Record<string, unknown> | string, port: number | undefined): Record<string, unknown> | string {
  return port === undefined || typeof config === 'string'
    ? config
    : { ...config, application: { ...(config.application as object | undefined), port } };
}

function spawnServer(options: ServerOptions): { child: ChildProcess; dir: string; file: string } {
  ensureBuilt();
  const { dir, file } = writeConfig(withPort(options.config, options.port));
  const stdoutFd = options.stdoutFile === undefined ? undefined : openSync(options.stdoutFile, 'w');
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, AVISOSERVER_CONFIG_FILE: file, ...options.env },
    stdio: ['ignore', stdoutFd ?? 'pipe', 'pipe'],
  });
  // The child has its own copy of the descriptor.
  if (stdoutFd !== undefined) closeSync(stdoutFd);
  reapOnExit(child);
  return { child, dir, file };
}

/**
 * Calls `onText` with what the server writes on stdout: from its pipe (at most `bytesPerSecond`
 * when given), or, when stdout is a file, from that file until `stop()` (polled, so the
 * server never waits for the test).
 */
function readStdout(child: ChildProcess, options: ServerOptions, onText: (text: string) => void): { stop(): void } {
  const { stdoutFile, stdoutBytesPerSecond } = options;
  if (stdoutFile !== undefined) {
    let position = 0;
    const buffer = Buffer.alloc(64 * 1024);
    const poll = setInterval(() => {
      const fd = openSync(stdoutFile, 'r');
      try {
        for (
          let read = readSync(fd, buffer, 0, buffer.length, position);
          read > 0;
          read = readSync(fd, buffer, 0, buffer.length, position)
        ) {
          position += read;
          onText(buffer.toString('utf8', 0, read));
        }
      } finally {
        closeSync(fd);
      }
    }, 50);
    return { stop: () => clearInterval(poll) };
  }
  const stdout = child.stdout;
  stdout?.on('data', (chunk: Buffer) => {
    onText(chunk.toString('utf8'));
    if (stdoutBytesPerSecond === undefined) return;
    // A slow reader: the pipe fills and the server's writes wait, as behind a slow log shipper.
    stdout.pause();
    setTimeout(() => stdout.resume(), (chunk.length / stdoutBytesPerSecond) * 1000).unref();
  });
  return { stop: () => undefined };
}

/** Starts the real server process and waits for its `startup.server.started` log event. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { child, dir, file } = spawnServer(options);
  const logs: LogLine[] = [];
  const logWaiters = new Set<LogWaiter>();
  let stderr = '';
  let pending = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));

  const keepLog = options.keepLog ?? (() => true);
  let reader: { stop(): void } | undefined;
  const port = await new Promise<number>((resolvePort, reject) => {
    const startTimeoutMs = options.startTimeoutMs ?? 15_000;
    const timer = setTimeout(
      () => reject(new Error(`server did not start within ${startTimeoutMs / 1000} s; stderr: ${stderr}`)),
      startTimeoutMs,
    );
    reader = readStdout(child, options, (text) => {
      pending += text;
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
        if (!line.trim()) continue;
        const parsed = JSON.parse(line) as LogLine;
        if (keepLog(parsed)) {
          logs.push(parsed);
          const index = logs.length - 1;
          for (const waiter of logWaiters) {
            if (index >= waiter.from && eventNameOf(parsed) === waiter.eventName) waiter.found(parsed);
          }
        }
        if (parsed.attributes?.['event.name'] === 'startup.server.started') {
          clearTimeout(timer);
          if (options.stdoutFile !== undefined) reader?.stop();
          resolvePort(parsed.attributes.port as number);
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening; stderr: ${stderr}`));
    });
  });

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    process: child,
    logs,
    stderr: () => stderr,
    configFile: file,
    rewriteConfig(config) {
      const next = withPort(config, options.port);
      writeFileSync(file, typeof next === 'string' ? next : stringify(next));
    },
    signal(signal) {
      child.kill(signal);
    },
    async waitForLog(eventName, { from = logs.length, timeoutMs = 10_000 } = {}) {
      const logged = logs.slice(from).find((line) => eventNameOf(line) === eventName);
      if (logged) return logged;
      // Not logged yet: the stdout reader hands over the line as soon as it is parsed.
      return new Promise<LogLine>((resolveLine, reject) => {
        const waiter: LogWaiter = {
          eventName,
          from,
          found(line) {
            clearTimeout(timer);
            logWaiters.delete(waiter);
            resolveLine(line);
          },
        };
        const timer = setTimeout(() => {
          logWaiters.delete(waiter);
          reject(new Error(`no ${eventName} log line within ${timeoutMs} ms; stderr: ${stderr}`));
        }, timeoutMs);
        logWaiters.add(waiter);
      });
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

export interface ExitResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the server with a config that must make it exit, and collects its output. */
export async function runServerToExit(options: ServerOptions): Promise<ExitResult> {
  const { child, dir } = spawnServer(options);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.startTimeoutMs ?? 15_000);
  const code = await new Promise<number | null>((resolveExit) => child.on('exit', (c) => resolveExit(c)));
  clearTimeout(timer);
  rmSync(dir, { recursive: true, force: true });
  return { code, stdout, stderr };
}
