import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort } from '../../test/support/nats-server.js';
import { descendantPids } from './cpu-time.js';
import { findExecutable } from './executables.js';
import { makeTempDir, removeTempDir, stopChild, tailCollector, trackChild, trackGrandchild, untrackGrandchild } from './processes.js';

/**
 * The Nchan baseline: nginx with Debian's nchan module, one worker process, started in the
 * foreground by the bench from a generated configuration in a temporary prefix directory, on a
 * free loopback port. One channel, a publisher location (`POST` a message, as a provider would)
 * and an EventSource subscriber location; stopped (and its directory removed) with the scenario.
 */

const INSTALL_HINT = "install Debian's nginx-light and libnginx-mod-nchan (`bash scripts/test-prerequisites.sh --bench` does it as root)";
export const NCHAN_PUBLISH_PATH = '/pub';
export const NCHAN_SUBSCRIBE_PATH = '/sub';
const READY_PATH = '/ready';
const STARTUP_TIMEOUT_MS = 15_000;
const READY_POLL_MS = 20;
/** Descriptors the worker needs besides its client sockets (listener, logs, channel to the master). */
const FD_HEADROOM = 200;

export interface NchanInstallation {
  readonly nginx: string;
  /** `ngx_nchan_module.so`, where the Debian package put it. */
  readonly module: string;
}

/** The nginx binary and the nchan module; throws with the install hint when either is missing. */
export function findNchan(): NchanInstallation {
  const nginx = findExecutable('nginx', [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin']);
  if (nginx === undefined) throw new Error(`nginx is not installed: ${INSTALL_HINT}`);
  let listing: string;
  try {
    listing = execFileSync('dpkg', ['-L', 'libnginx-mod-nchan'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    throw new Error(`the nchan module is not installed: ${INSTALL_HINT}`);
  }
  const module = listing.split('\n').find((line) => line.endsWith('/ngx_nchan_module.so'));
  if (module === undefined) throw new Error(`libnginx-mod-nchan lists no ngx_nchan_module.so: ${INSTALL_HINT}`);
  return { nginx, module };
}

/** Why Nchan cannot be measured on this machine, or undefined when it can (for scenarios where it is a side note). */
export function nchanUnavailableReason(): string | undefined {
  try {
    findNchan();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export interface NchanConfigOptions {
  readonly prefix: string;
  readonly port: number;
  readonly module: string;
  /** Client connections the worker must hold at once (subscribers and publishers). */
  readonly connections: number;
  /** Whether the master runs as root, which makes nginx switch its worker to the `user` directive's account. */
  readonly asRoot: boolean;
  /** The hard limit on open files nginx inherits: it cannot raise its own past it. */
  readonly maxOpenFiles: number;
}

/**
 * The generated nginx.conf. Everything nginx writes (pid, logs, temporary bodies) stays in the
 * prefix directory. The access log is kept, as nginx keeps it by default: aviso writes its
 * per-request log lines in the bench too. Subscribers get only messages published after they
 * joined (`nchan_subscriber_first_message newest`), as an aviso watch without a replay start
 * does, and every message is an `event: live-notification` frame, the event the fleet counts.
 */
export function nchanConfig(options: NchanConfigOptions): string {
  const path = (name: string): string => join(options.prefix, name);
  // Once fewer than 1/16 of its connection slots are free, nginx closes connections it deems
  // reusable to make room, and an idle EventSource subscriber is one: twice the need keeps clear of
  // it. Each slot may hold a descriptor, and nginx cannot raise its limit past the inherited one.
  const slots = Math.min(2 * options.connections + FD_HEADROOM, options.maxOpenFiles);
  return [
    `load_module ${options.module};`,
    'daemon off;',
    'master_process on;',
    'worker_processes 1;',
    `worker_rlimit_nofile ${slots};`,
    // As root nginx would run its worker as `nobody`, who may not enter the private prefix directory.
    ...(options.asRoot ? ['user root;'] : []),
    `pid ${path('nginx.pid')};`,
    `error_log ${path('error.log')} warn;`,
    `events { worker_connections ${slots}; }`,
    'http {',
    `  access_log ${path('access.log')};`,
    `  client_body_temp_path ${path('client_body')};`,
    `  proxy_temp_path ${path('proxy')};`,
    `  fastcgi_temp_path ${path('fastcgi')};`,
    `  uwsgi_temp_path ${path('uwsgi')};`,
    `  scgi_temp_path ${path('scgi')};`,
    '  server {',
    `    listen 127.0.0.1:${options.port};`,
    `    location = ${READY_PATH} { access_log off; return 204; }`,
    `    location = ${NCHAN_PUBLISH_PATH} { nchan_publisher; nchan_channel_id fanout; }`,
    `    location = ${NCHAN_SUBSCRIBE_PATH} {`,
    '      nchan_subscriber eventsource;',
    '      nchan_channel_id fanout;',
    '      nchan_subscriber_first_message newest;',
    '      nchan_eventsource_event live-notification;',
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}

export interface NchanServer {
  readonly url: string;
  readonly masterPid: number;
  readonly workerPid: number;
  /** Subscribers on the channel, from the publisher location's channel info (0 before the channel exists). */
  subscribers(): Promise<number>;
  /** Fast shutdown (SIGTERM), SIGKILL after 10 s; removes the prefix directory. */
  stop(): Promise<void>;
}

/** One GET on a fresh connection (none left open on the server), with the status and body. */
function getOnce(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-2_000);
  } catch {
    return '(no error log)';
  }
}

/** The hard `Max open files` limit of this process (its children inherit it). */
function hardOpenFilesLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((text) => text.startsWith('Max open files'));
  const hard = line?.split(/\s{2,}/)[2];
  return hard === undefined || hard === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(hard);
}

export async function startNchan(options: { readonly connections: number }): Promise<NchanServer> {
  const installation = findNchan();
  const maxOpenFiles = hardOpenFilesLimit();
  if (maxOpenFiles < options.connections + 2 * FD_HEADROOM) {
    throw new Error(
      `nginx may open ${maxOpenFiles} files but needs ${options.connections + 2 * FD_HEADROOM}: raise \`ulimit -n\` for the bench`,
    );
  }
  const prefix = makeTempDir('nchan');
  const port = await findFreePort();
  const configFile = join(prefix, 'nginx.conf');
  const errorLog = join(prefix, 'error.log');
  writeFileSync(
    configFile,
    nchanConfig({
      prefix,
      port,
      module: installation.module,
      connections: options.connections,
      asRoot: process.getuid?.() === 0,
      maxOpenFiles,
    }),
  );
  // `-e`: the error log before the configuration is read, so nothing goes to the system's log.
  const child = spawn(installation.nginx, ['-p', prefix, '-c', configFile, '-e', errorLog], {
    cwd: prefix,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  trackChild(child);
  const stderr = tailCollector();
  child.stderr?.on('data', (chunk: Buffer) => stderr.append(chunk));
  let exitCode: string | undefined;
  child.once('exit', (code, signal) => (exitCode = String(signal ?? code)));
  const url = `http://127.0.0.1:${port}`;
  let workerPid: number | undefined;

  const stop = async (): Promise<void> => {
    await stopChild(child, 'SIGTERM', 10_000);
    if (workerPid !== undefined) {
      try {
        process.kill(workerPid, 'SIGKILL');
      } catch {
        // It ended with the master, as it should.
      }
      untrackGrandchild(workerPid);
    }
    removeTempDir(prefix);
  };

  try {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    for (;;) {
      const answer = await getOnce(`${url}${READY_PATH}`).catch(() => undefined);
      if (answer?.status === 204) break;
      const failure = `stderr: ${stderr.text()}; error.log: ${tail(errorLog)}`;
      if (exitCode !== undefined) throw new Error(`nginx exited (${exitCode}) before answering; ${failure}`);
      if (Date.now() > deadline) throw new Error(`nginx did not answer ${READY_PATH} within ${STARTUP_TIMEOUT_MS} ms; ${failure}`);
      // nginx tells nothing when it listens; its first answer is the readiness.
      await sleep(READY_POLL_MS);
    }
    const workers = descendantPids(child.pid as number);
    if (workers.length !== 1) throw new Error(`nginx should run one worker process, found ${workers.length}`);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- it narrows workerPid (number | undefined) to a number for the lines below
    workerPid = workers[0] as number;
    trackGrandchild(workerPid);
    return {
      url,
      masterPid: child.pid as number,
      workerPid,
      async subscribers() {
        const answer = await getOnce(`${url}${NCHAN_PUBLISH_PATH}`, { accept: 'text/json' });
        if (answer.status === 404) return 0;
        if (answer.status !== 200) throw new Error(`nchan channel info answered ${answer.status}: ${answer.body.slice(0, 200)}`);
        return (JSON.parse(answer.body) as { subscribers: number }).subscribers;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
