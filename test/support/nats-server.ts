import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { reapOnExit } from './child-reaper.js';
import { findFreePort } from './ports.js';

// Re-exported for the callers that import it from here (bench/ab.ts, bench/soak.ts, the NATS tests).
export { findFreePort } from './ports.js';

/**
 * Private and shared NATS servers for tests (docs/design/architecture.md "Real NATS in backend tests"). A private
 * server is a real `nats-server -js` with its own port and temporary store, so a test may stop,
 * kill or restart it without disturbing anyone; the shared one (127.0.0.1:4222: the machine's, or
 * the private one the run's global setup starts, shared-nats-setup.ts) is only probed here.
 */

export const SHARED_NATS_URL = 'nats://127.0.0.1:4222';
const DEBIAN_BINARY = '/usr/sbin/nats-server';
const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const OUTPUT_TAIL_CHARS = 16_000;

export interface NatsServerOptions {
  /** Client port; a free one is picked when omitted. */
  readonly port?: number;
  /** JetStream store directory; a temporary one is created (and removed by `stop`) when omitted. */
  readonly storeDir?: string;
  /** Extra command-line arguments, e.g. `['--auth', 'secret']` for token authentication. */
  readonly extraArgs?: readonly string[];
}

export interface NatsServerProcess {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  /** Terminates the server (SIGTERM) and removes the store if this module created it. Idempotent. */
  stop(): Promise<void>;
  /** Terminates the server if it runs and starts it again on the same port with the same store. */
  restart(): Promise<void>;
  /** Simulates a crash (SIGKILL); the store is kept so `restart` can recover it. */
  kill(): Promise<void>;
  /** The last lines the server wrote, for failure messages. */
  output(): string;
}

/** Information a NATS server sends in its `INFO` line as soon as a client connects. */
export interface NatsServerInfo {
  readonly version: string;
  readonly jetstream: boolean;
  readonly serverName: string;
}

/**
 * Finds the `nats-server` binary on `searchPath`, else at the Debian location. Throws an Error
 * that says how to install it.
 */
export function locateNatsServer(searchPath: string = process.env.PATH ?? '', fallbacks: readonly string[] = [DEBIAN_BINARY]): string {
  const candidates = [
    ...searchPath
      .split(delimiter)
      .filter((dir) => dir !== '')
      .map((dir) => join(dir, 'nats-server')),
    ...fallbacks,
  ];
  for (const candidate of candidates) {
    if (isExecutable(candidate)) return candidate;
  }
  throw new Error(
    `nats-server was not found on PATH or at ${fallbacks.join(', ') || '(no fallback)'}: ` +
      'install it with `apt-get install nats-server`, or run `npm test` as root, which installs it',
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Connects over TCP and reads the server's `INFO` line, which every NATS server sends first; this
 * proves a NATS server (not just any listener) accepts clients, without an HTTP monitor.
 */
export async function probeNats(host: string, port: number, timeoutMs = 2_000): Promise<NatsServerInfo> {
  return new Promise<NatsServerInfo>((resolveInfo, reject) => {
    const socket = tcpConnect({ host, port });
    let received = '';
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error(`no INFO line from ${host}:${port} within ${timeoutMs} ms`)));
    socket.once('error', fail);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      const end = received.indexOf('\r\n');
      if (end < 0) return;
      socket.destroy();
      const line = received.slice(0, end);
      if (!line.startsWith('INFO ')) {
        reject(new Error(`${host}:${port} answered with '${line.slice(0, 80)}', not a NATS INFO line`));
        return;
      }
      try {
        const info = JSON.parse(line.slice('INFO '.length)) as { version?: string; jetstream?: unknown; server_name?: string };
        resolveInfo({
          version: String(info.version ?? 'unknown'),
          jetstream: info.jetstream === true,
          serverName: String(info.server_name ?? ''),
        });
      } catch (error) {
        reject(new Error(`unreadable INFO line from ${host}:${port}: ${String(error)}`));
      }
    });
    socket.once('end', () => fail(new Error(`${host}:${port} closed the connection before sending INFO`)));
  });
}

/**
 * Proves that the shared NATS server answers with JetStream enabled. Backend tests call this
 * first and fail loudly otherwise: a missing server must never turn into skipped tests.
 */
export async function requireSharedNats(url: string = SHARED_NATS_URL): Promise<void> {
  const { hostname, port } = parseNatsUrl(url);
  let info: NatsServerInfo;
  try {
    info = await probeNats(hostname, port);
  } catch (error) {
    throw new Error(
      `NATS with JetStream must be running at ${url} for the JetStream tests (they are never skipped), ` +
        'but it does not answer. Start one with `nats-server -js` (install it with ' +
        '`apt-get install nats-server`), or run `npm test`, which starts one when none answers. ' +
        `Probe failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  if (!info.jetstream) {
    throw new Error(
      `The NATS server at ${url} (version ${info.version}) runs without JetStream; the JetStream tests ` +
        'need it: restart it with `nats-server -js`.',
    );
  }
}

function parseNatsUrl(url: string): { hostname: string; port: number } {
  const parsed = new URL(url);
  const hostname = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  return { hostname, port: parsed.port === '' ? 4222 : Number(parsed.port) };
}

/** Children still running when the test process exits are killed so no server outlives a run. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function track(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const leftover of running) leftover.kill('SIGKILL');
    });
  }
  running.add(child);
  child.once('exit', () => running.delete(child));
}

/** Starts a private `nats-server -js` and resolves once it accepts client connections. */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServerProcess> {
  const binary = locateNatsServer();
  const port = options.port ?? (await findFreePort());
  const ownsStore = options.storeDir === undefined;
  const storeDir = options.storeDir ?? mkdtempSync(join(tmpdir(), 'aviso-nats-'));
  let output = '';
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stopped = false;
  // A unique name lets readiness tell our server from another process already on the port.
  const serverName = `aviso_test_${process.pid}_${port}_${Date.now().toString(36)}`;

  const launch = async (): Promise<void> => {
    const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir, '-n', serverName, ...(options.extraArgs ?? [])];
    const spawned = spawn(binary, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    track(spawned);
    reapOnExit(spawned);
    const append = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    };
    spawned.stdout?.on('data', append);
    spawned.stderr?.on('data', append);
    let exitCode: string | undefined;
    exited = new Promise<void>((resolveExit) => {
      spawned.once('exit', (code, signal) => {
        exitCode = signal ?? String(code);
        resolveExit();
      });
      spawned.once('error', (error) => {
        exitCode = error.message;
        resolveExit();
      });
    });
    child = spawned;
    await waitUntilReady(
      port,
      serverName,
      () => exitCode,
      () => output,
    );
  };

  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    const current = child;
    child = undefined;
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) {
      await exited;
      return;
    }
    current.kill(signal);
    const timer = setTimeout(() => current.kill('SIGKILL'), STOP_TIMEOUT_MS);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  try {
    await launch();
  } catch (error) {
    await terminate('SIGKILL');
    if (ownsStore) rmSync(storeDir, { recursive: true, force: true });
    throw error;
  }

  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    output: () => output,
    async stop() {
      if (stopped) return;
      stopped = true;
      await terminate('SIGTERM');
      if (ownsStore) rmSync(storeDir, { recursive: true, force: true });
    },
    async kill() {
      await terminate('SIGKILL');
    },
    async restart() {
      if (stopped) throw new Error(`the NATS server on port ${port} was stopped; start a new one instead`);
      await terminate('SIGTERM');
      await launch();
    },
  };
}

async function waitUntilReady(port: number, serverName: string, exitReason: () => string | undefined, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError = 'not probed yet';
  for (;;) {
    const reason = exitReason();
    if (reason !== undefined) {
      throw new Error(`nats-server exited (${reason}) before accepting connections on port ${port}; output:\n${output()}`);
    }
    let info: NatsServerInfo | undefined;
    try {
      info = await probeNats('127.0.0.1', port, 1_000);
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    if (info !== undefined && info.serverName !== serverName) {
      lastError = `port ${port} is answered by another NATS server ('${info.serverName}')`;
    } else if (info !== undefined) {
      if (!info.jetstream) throw new Error(`nats-server on port ${port} started without JetStream; output:\n${output()}`);
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `nats-server did not accept connections on port ${port} within ${READY_TIMEOUT_MS} ms ` + `(${lastError}); output:\n${output()}`,
      );
    }
    // Retry interval of the readiness poll: the server offers no event to wait for before it listens.
    await new Promise<void>((resolveRetry) => setTimeout(resolveRetry, 25));
  }
}
