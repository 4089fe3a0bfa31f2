import { Command, Option } from 'commander';
import { configDumpCommand } from './commands/config-dump.js';
import { adminCommand, notifyCommand, schemaGetCommand, schemaListCommand } from './commands/simple.js';
import type { CommandContext } from './commands/common.js';
import { listenCommand, type ListenFlags } from './commands/listen.js';
import { notifyFileCommand } from './commands/notify-file.js';
import { replayCommand, type ReplayFlags } from './commands/replay.js';
import { closeStreamCommand, streamsCommand, type StreamsFlags } from './commands/streams.js';
import { completionScript, SHELLS } from './completions.js';

/**
 * The `aviso` command tree, flag for flag the aviso client's (docs/design/rules/client.md §5). Each action
 * receives a ready CommandContext from `run` and returns its exit code.
 */
export type Run = (command: Command, body: (ctx: CommandContext) => Promise<number | void>) => Promise<void>;

const collect = (value: string, previous: string[]): string[] => [...previous, value];
const increase = (_: string, previous: number): number => previous + 1;

export function buildProgram(version: string, run: Run): Command {
  const program = new Command('aviso')
    .description('Publish, listen to and replay aviso notifications')
    .version(version, '-V, --version')
    .option('-c, --config <PATH>', 'config file (default ~/.config/aviso/config.yaml, env AVISO_CLIENT_CONFIG_FILE)')
    .option('--state-file <PATH>', 'state file (default ~/.config/aviso/state.json, env AVISO_STATE_FILE)')
    .option('--base-url <URL>', 'server URL (env AVISO_BASE_URL)')
    .option('--token <TOKEN>', 'bearer token (env AVISO_TOKEN)')
    .option('--username <USERNAME>', 'basic auth user name, with --password (env AVISO_USERNAME)')
    .option('--password <PASSWORD>', 'basic auth password, with --username (env AVISO_PASSWORD)')
    .option(
      '--ca-bundle <PATH>',
      'PEM file of CAs to trust in addition to the default roots; repeatable (config tls.ca_bundle)',
      collect,
      [],
    )
    .option('--danger-accept-invalid-certs', 'accept any server certificate: INSECURE, for development only (warns on every run)')
    .option('--json', 'JSON output even on a terminal')
    .addOption(
      new Option('--color <MODE>', 'ANSI colors in human output: auto (a terminal and no NO_COLOR), always, never')
        .choices(['auto', 'always', 'never'])
        .default('never'),
    )
    .option('-v, --verbose', 'more diagnostics on stderr (-v, -vv)', increase, 0)
    .showHelpAfterError();
  program.exitOverride();

  program
    .command('notify')
    .description('publish one notification: event=TYPE key=value ... [data=JSON]; or many, one JSON object per line: --file PATH|-')
    .argument('[PARAMETERS...]', 'comma-separated key=value lists; event= is required, data= is the JSON payload, key:=JSON a typed value')
    .option('--identifier <KEY=VALUE>', 'one identifier: key=value (string) or key:=JSON (typed); repeatable', collect, [])
    .option('--file <PATH>', 'publish the notifications of this NDJSON file (- for standard input) in batches, instead of PARAMETERS')
    .option('--idempotency-key <KEY>', 'the Idempotency-Key to send (1 to 255 visible ASCII characters; default: a fresh UUID)')
    .option(
      '--retry',
      'retry a cut or timed-out request, a 5xx or a 409 with the same key, even before the server has shown it deduplicates',
    )
    .action((parameters: string[], opts: { identifier: string[]; file?: string; idempotencyKey?: string; retry?: boolean }, cmd: Command) =>
      run(cmd, (ctx) => {
        const key = opts.idempotencyKey === undefined ? {} : { idempotencyKey: opts.idempotencyKey };
        if (opts.file !== undefined) {
          return notifyFileCommand(ctx, opts.file, { parameters, identifiers: opts.identifier, ...key, retry: opts.retry === true });
        }
        return notifyCommand(ctx, parameters, opts.identifier, { ...key, retry: opts.retry === true });
      }),
    );

  const inline = (cmd: Command): Command =>
    cmd
      .option('--event <TYPE>', 'ad-hoc listener: the event type (with --identifiers or --identifier)')
      .option('--identifiers <JSON>', 'ad-hoc listener: the filter as one JSON object')
      .option('--identifier <KEY=VALUE>', 'ad-hoc listener: one filter field, key=value or key:=JSON; repeatable', collect, []);

  inline(
    program
      .command('listen')
      .description('run listeners until Ctrl+C')
      .argument('[LISTENER_FILES...]', "listener YAML files (replace the config file's listeners:)")
      .option('--from <VALUE>', 'start after this sequence, or at this date, for every listener')
      .option('--no-state-store', 'keep cursors in memory only for this run')
      .option(
        '--startup-timeout <DURATION>',
        'give up when no stream is confirmed open within this time across retries; 0s to disable',
        '30s',
      ),
  ).action((files: string[], opts: ListenFlags, cmd: Command) => run(cmd, (ctx) => listenCommand(ctx, files, opts)));

  inline(
    program
      .command('replay')
      .description("replay stored notifications through a listener's triggers, then exit")
      .argument('[LISTENER_FILES...]', 'listener YAML files')
      .requiredOption('--from <VALUE>', 'start after this sequence, or at this date')
      .option('--until <VALUE>', 'end at this sequence or date (inclusive)')
      .option('--listener <NAME>', 'the listener to replay when several resolve'),
  ).action((files: string[], opts: ReplayFlags, cmd: Command) => run(cmd, (ctx) => replayCommand(ctx, files, opts)));

  const schema = program.command('schema').description("inspect the server's schemas");
  schema
    .command('list')
    .description('list event types')
    .action((_: unknown, cmd: Command) => run(cmd, (ctx) => schemaListCommand(ctx)));
  schema
    .command('get')
    .description('print one schema')
    .argument('<EVENT_TYPE>')
    .action((eventType: string, _: unknown, cmd: Command) => run(cmd, (ctx) => schemaGetCommand(ctx, eventType)));

  const admin = program.command('admin').description('open streams, and destructive operations (need --yes)');
  admin
    .command('streams')
    .description('list the open streams of the deployment: a table on a terminal, JSON otherwise')
    .option('--event-type <TYPE>', 'only the streams of this event type')
    .option('--user <USER>', 'only the streams of this authenticated user')
    .option('--limit <N>', "at most N streams, oldest first (1 to 1000; the server's default 100)")
    .action((opts: StreamsFlags, cmd: Command) => run(cmd, (ctx) => streamsCommand(ctx, opts)));
  admin
    .command('close-stream')
    .description('end one open stream (its client reconnects from its cursor)')
    .argument('<STREAM_ID>', 'the ID column of `aviso admin streams`: the request id of the stream')
    .option('--yes', 'confirm')
    .action((id: string, opts: { yes?: boolean }, cmd: Command) => run(cmd, (ctx) => closeStreamCommand(ctx, id, opts.yes === true)));
  admin
    .command('wipe-stream')
    .description('delete every notification of one event type')
    .argument('<EVENT_TYPE>')
    .option('--yes', 'confirm')
    .action((eventType: string, opts: { yes?: boolean }, cmd: Command) =>
      run(cmd, (ctx) => adminCommand(ctx, { kind: 'wipe-stream', eventType }, opts.yes === true)),
    );
  admin
    .command('wipe-all')
    .description('delete every notification of every stream')
    .option('--yes', 'confirm')
    .action((opts: { yes?: boolean }, cmd: Command) => run(cmd, (ctx) => adminCommand(ctx, { kind: 'wipe-all' }, opts.yes === true)));
  admin
    .command('delete')
    .description('delete one notification, TYPE@SEQUENCE')
    .argument('<NOTIFICATION_ID>')
    .option('--yes', 'confirm')
    .action((id: string, opts: { yes?: boolean }, cmd: Command) =>
      run(cmd, (ctx) => adminCommand(ctx, { kind: 'delete', id }, opts.yes === true)),
    );

  program
    .command('config')
    .description('inspect the resolved configuration')
    .command('dump')
    .description('print every resolved setting and where it came from')
    .option('--redact', 'mask tokens and passwords')
    .action((opts: { redact?: boolean }, cmd: Command) => run(cmd, (ctx) => configDumpCommand(ctx, opts.redact === true)));

  program
    .command('completions')
    .description('print a shell completion script')
    .argument('<SHELL>', SHELLS.join(', '))
    .action((shell: string, _: unknown, cmd: Command) =>
      run(cmd, async (ctx) => {
        await ctx.output.write(completionScript(program, shell));
      }),
    );
  return program;
}
