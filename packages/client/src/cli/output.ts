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
  return {
    human,
    verbosity: options.verbosity,
    async write(text) {
      if (!stdout.write(text)) await once(stdout, 'drain');
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
