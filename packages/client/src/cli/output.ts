import { once } from 'node:events';

/**
 * Where the command writes. Results go to stdout, human-readable on a terminal and one JSON
 * object per line when piped or with --json; progress and diagnostics go to stderr.
 */
export interface Output {
  /** Human output on stdout (a terminal and no --json). */
  readonly human: boolean;
  readonly verbosity: number;
  /** Writes to stdout honouring backpressure, so a slow pipe slows the stream, not memory. */
  write(text: string): Promise<void>;
  /** One result: `human` text on a terminal, else the compact JSON of `data`. */
  result(data: unknown, human: string): Promise<void>;
  info(message: string): void;
  debug(message: string): void;
  error(message: string): void;
}

export function createOutput(options: { json: boolean; verbosity: number }, stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr): Output {
  const human = !options.json && stdout.isTTY === true;
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
    verbosity: options.verbosity,
    async write(text) {
      if (broken) throw broken;
      try {
        if (!stdout.write(text)) await once(stdout, 'drain');
      } catch (error) {
        throw describe(error as NodeJS.ErrnoException);
      }
      if (broken) throw broken;
    },
    async result(data, humanText) {
      await this.write(human ? `${humanText}\n` : `${JSON.stringify(data)}\n`);
    },
    info(message) {
      stderr.write(`${message}\n`);
    },
    debug(message) {
      if (options.verbosity > 0) stderr.write(`DEBUG ${message}\n`);
    },
    error(message) {
      stderr.write(`Error: ${message}\n`);
    },
  };
}
