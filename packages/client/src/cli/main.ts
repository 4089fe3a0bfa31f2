#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { CommanderError, type Command } from 'commander';
import type { CommandContext } from './commands/common.js';
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, UsageError } from './errors.js';
import { createOutput } from './output.js';
import { buildProgram } from './program.js';
import { resolveSettings, type GlobalFlags } from './settings.js';
import { installInterruptHandler } from './signals.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Library errors that mean "the arguments were wrong", not "the run failed". */
const USAGE_ERROR_NAMES = new Set(['UsageError', 'ConfigError']);

let exitCode = EXIT_OK;

async function run(command: Command, body: (ctx: CommandContext) => Promise<number | void>): Promise<void> {
  const flags = command.optsWithGlobals<GlobalFlags & { json?: boolean; verbose: number }>();
  const output = createOutput({ json: flags.json === true, verbosity: flags.verbose });
  const interrupt = installInterruptHandler(() => output.info('Stopping (press Ctrl+C again within 5 s to exit at once)...'));
  // The library unrefs its backoff and watchdog timers (they must not keep an embedding
  // process alive); the command itself must stay alive until its work ends, backoff included.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    const settings = resolveSettings(flags, process.env);
    const code = await body({ settings, output, env: process.env, signal: interrupt.signal });
    exitCode = typeof code === 'number' ? code : EXIT_OK;
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    // The server's request id lets an operator find the request in the server's logs.
    const requestId = (e as { requestId?: unknown }).requestId;
    output.error(typeof requestId === 'string' ? `${e.message} (request id ${requestId})` : e.message);
    if (output.verbosity > 1 && e.stack) output.debug(e.stack);
    exitCode = USAGE_ERROR_NAMES.has(e.name) ? EXIT_USAGE : EXIT_RUNTIME;
  } finally {
    clearInterval(keepAlive);
    interrupt.dispose();
  }
}

async function main(): Promise<void> {
  const program = buildProgram(VERSION, run);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; every parse error is a usage error (2), as in the aviso client.
      exitCode = error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    } else if (error instanceof UsageError) {
      process.stderr.write(`Error: ${error.message}\n`);
      exitCode = EXIT_USAGE;
    } else throw error;
  }
  // Let stdout drain before the exit code is set: a piped reader must get every line.
  process.exitCode = exitCode;
}

await main();
