import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { reapOnExit } from '../../../../test/support/child-reaper.js';

/** The built `aviso` bin; tests drive it as a subprocess, as a user would. */
export const CLI_ENTRY = resolve(import.meta.dirname, '../../dist/cli/main.js');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunningCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once `predicate` holds for stderr (or stdout), failing after `ms`. */
  waitFor(predicate: (out: { stdout: string; stderr: string }) => boolean, ms?: number): Promise<void>;
  readonly exited: Promise<number | null>;
}

/** A clean environment: HOME points at a scratch dir so ~/.config/aviso is never the user's. */
export function cliEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: home, ...extra };
}

/** `input`, when given, is written to the command's standard input, which is then closed. */
export function startCli(args: readonly string[], env: Record<string, string>, cwd?: string, input?: string): RunningCli {
  if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} is missing: run \`npm run build\``);
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
    env,
    cwd: cwd ?? env.HOME,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin?.end(input);
  reapOnExit(child);
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const poke = (): void => waiters.forEach((w) => w());
  child.stdout?.on('data', (c: Buffer) => ((stdout += c.toString('utf8')), poke()));
  child.stderr?.on('data', (c: Buffer) => ((stderr += c.toString('utf8')), poke()));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => (poke(), r(code))));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor(predicate, ms = 15_000) {
      return new Promise<void>((resolveWait, reject) => {
        const check = (): void => {
          if (predicate({ stdout, stderr })) {
            clearInterval(poll);
            clearTimeout(timer);
            waiters.delete(check);
            resolveWait();
          } else if (child.exitCode !== null) {
            clearInterval(poll);
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`aviso exited (${child.exitCode}) first; stdout: ${stdout}\nstderr: ${stderr}`));
          }
        };
        // Files written by triggers change without output: poll as well.
        const poll = setInterval(check, 50);
        const timer = setTimeout(() => {
          clearInterval(poll);
          waiters.delete(check);
          reject(new Error(`timed out; stdout: ${stdout}\nstderr: ${stderr}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
  };
}

export async function runCli(args: readonly string[], env: Record<string, string>, cwd?: string, input?: string): Promise<CliResult> {
  const cli = startCli(args, env, cwd, input);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

export function ndjson(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export function sequences(text: string): number[] {
  return ndjson(text).map((n) => n.sequence as number);
}
