import { once } from 'node:events';
import { colorEnabled, createLogger, type Logger } from './log.js';

/**
 * Where the command writes. Results go to stdout, human-readable on a terminal and one JSON
 * object per line when piped or with --json. On stderr: the status lines a person reads
 * (`Connecting for …`, `Listening for …`, `Error in listener …`, warnings), always plain text, and
 * the diagnostic records of `log` (retries, warnings of the TLS and credential settings, debug),
 * whose shape and level follow the aviso client (see log.ts).
 */
export interface Output {
  /** Human output on stdout (a terminal and no --json). */
  readonly human: boolean;
  /** ANSI colors on stdout's human output (`--color`). */
  readonly color: boolean;
  readonly log: Logger;
  /** Writes to stdout honouring backpressure, so a slow pipe slows the stream, not memory. */
  write(text: string): Promise<void>;
  /** One result: `human` text on a terminal, else the compact JSON of `data`. */
  result(data: unknown, human: string): Promise<void>;
  /** A plain status line on stderr. */
  line(message: string): void;
  /** `Error: message` on stderr. */
  error(message: string): void;
}

export interface OutputOptions {
  readonly json: boolean;
  readonly verbosity: number;
  readonly color?: 'auto' | 'always' | 'never';
  readonly env?: NodeJS.ProcessEnv;
  readonly version?: string;
}

export function createOutput(
  options: OutputOptions,
  stdout: NodeJS.WriteStream = process.stdout,
  stderr: NodeJS.WriteStream = process.stderr,
): Output {
  const human = !options.json && stdout.isTTY === true;
  const env = options.env ?? {};
  const mode = options.color ?? 'never';
  const log = createLogger({
    stderr,
    verbosity: options.verbosity,
    env,
    color: colorEnabled(mode, stderr.isTTY === true, env),
    version: options.version ?? '0.0.0',
  });
  // A reader that went away (`aviso listen | head -1`) surfaces as EPIPE on a later write; keep
  // it so the next write fails as a trigger failure instead of crashing on an unhandled event.
  let broken: Error | undefined;
  const describe = (error: NodeJS.ErrnoException): Error =>
    new Error(error.code === 'EPIPE' ? 'stdout was closed by its reader' : `cannot write to stdout: ${error.message}`);
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    broken = describe(error);
  });
  return {
    human,
    color: human && colorEnabled(mode, true, env),
    log,
    async write(text) {
      if (broken) throw broken;
      try {
        if (!stdout.write(text)) await once(stdout, 'drain');
      } catch (error) {
        throw describe(error as NodeJS.ErrnoException);
      }
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- an Error: the 'error' listener may set it during the await, which TypeScript's narrowing to undefined above does not see
      if (broken) throw broken;
    },
    async result(data, humanText) {
      await this.write(human ? `${humanText}\n` : `${JSON.stringify(data)}\n`);
    },
    line(message) {
      stderr.write(`${message}\n`);
    },
    error(message) {
      stderr.write(`Error: ${message}\n`);
    },
  };
}
