#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { CommanderError, type Command } from 'commander';
import type { CommandContext } from './commands/common.js';
import { EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, UsageError } from './errors.js';
import { createOutput, type Output } from './output.js';
import { buildProgram } from './program.js';
import { resolveSettings, type GlobalFlags, type Settings } from './settings.js';
import { installInterruptHandler } from './signals.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Library errors that mean "the arguments were wrong", not "the run failed". */
const USAGE_ERROR_NAMES = new Set(['UsageError', 'ConfigError']);

let exitCode = EXIT_OK;

/** The records the aviso client writes once settings are resolved: the warnings of risky settings (on every run, whatever the command), and a debug summary. */
function warnAboutSettings(settings: Settings, output: Output): void {
  if (settings.dangerAcceptInvalidCerts.value) {
    output.log.log('warn', 'TLS certificate validation disabled by --danger-accept-invalid-certs; do not use in production', {
      'event.name': 'cli.tls.insecure_mode',
    });
  }
  output.log.log('debug', 'resolved configuration', {
    'event.name': 'cli.config.resolved',
    config_path: settings.configFile.value,
    state_path: settings.stateFile.value,
    base_url_set: settings.baseUrl.value !== undefined,
    auth_provider_set: settings.credential !== undefined,
    listeners_count: settings.listeners.length,
  });
  if (settings.credential?.source === 'flag') {
    output.log.log(
      'warn',
      'a credential on the command line is visible to other local users and kept in the shell history; use AVISO_TOKEN, AVISO_USERNAME/AVISO_PASSWORD or the credentials file',
      {
        'event.name': 'cli.auth.on_command_line',
      },
    );
  }
}

async function run(command: Command, body: (ctx: CommandContext) => Promise<number | void>): Promise<void> {
  const flags = command.optsWithGlobals<GlobalFlags & { json?: boolean; verbose: number; color: 'auto' | 'always' | 'never' }>();
  const output = createOutput({
    json: flags.json === true,
    verbosity: flags.verbose,
    color: flags.color,
    env: process.env,
    version: VERSION,
  });
  const interrupt = installInterruptHandler(() => output.line('Stopping (press Ctrl+C again within 5 s to exit at once)...'));
  // The library unrefs its backoff and watchdog timers (they must not keep an embedding
  // process alive); the command itself must stay alive until its work ends, backoff included.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    const settings = resolveSettings(flags, process.env);
    warnAboutSettings(settings, output);
    const code = await body({ settings, output, env: process.env, signal: interrupt.signal, forceJson: flags.json === true });
    exitCode = typeof code === 'number' ? code : EXIT_OK;
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    // The server's request id lets an operator find the request in the server's logs.
    const requestId = (e as { requestId?: unknown }).requestId;
    output.error(typeof requestId === 'string' ? `${e.message} (request id ${requestId})` : e.message);
    if (e.stack) output.log.log('trace', e.stack);
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
