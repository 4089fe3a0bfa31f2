import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { JsonFileStore, MemoryStore, type StateStore, type WatchRequest } from '../../index.js';
import { UsageError } from '../errors.js';
import type { ListenerSpec } from '../listeners.js';
import { parseCursor, parseDuration, type Cursor } from '../values.js';
import { createClient, describeListener, listenerLabel, resolveListeners, type CommandContext, type InlineFlags } from './common.js';
import { listenerFailureLines } from './listener-errors.js';
import { runListener } from './run-listener.js';

export interface ListenFlags extends InlineFlags {
  readonly from?: string;
  /** commander's negatable flag: false with --no-state-store. */
  readonly stateStore: boolean;
  readonly startupTimeout: string;
}

/** `--from N` means after N: the first sequence wanted is N + 1. A date is sent as it is. */
export function startFromCursor(cursor: Cursor): NonNullable<WatchRequest['from']> {
  return cursor.kind === 'sequence' ? { fromId: cursor.sequence + 1 } : { fromDate: cursor.date };
}

/**
 * Where one listener starts: `--from` for every listener, else the listener's own `from_id`
 * (after that sequence, like `--from`) or `from_date`. An explicit start beats the saved cursor,
 * which the state store still never moves backwards; without one, the library resumes after the
 * saved cursor, or starts live.
 */
export function listenerStart(listener: ListenerSpec, override: Cursor | undefined): WatchRequest['from'] {
  if (override) return startFromCursor(override);
  if (listener.fromId !== undefined) return { fromId: listener.fromId + 1 };
  if (listener.fromDate !== undefined) return { fromDate: listener.fromDate };
  return undefined;
}

/** The aviso client's warnings about listener files that are valid but probably not what was meant. */
function warnAboutListeners(ctx: CommandContext, listeners: readonly ListenerSpec[]): void {
  for (const l of listeners) {
    if (l.triggers.length === 0) {
      ctx.output.line(
        `warning: listener \`${listenerLabel(l)}\` has no triggers; notifications will be received but silently discarded. Add \`triggers: [{ type: echo }]\` (or another trigger type) to your listener YAML to see them.`,
      );
    }
  }
  const counts = new Map<string, number>();
  for (const l of listeners) counts.set(listenerLabel(l), (counts.get(listenerLabel(l)) ?? 0) + 1);
  for (const [name, count] of [...counts].filter(([, n]) => n > 1).sort()) {
    ctx.output.line(
      `warning: listener name \`${name}\` appears ${count} times; per-listener errors and log records will be indistinguishable. Give each listener a unique \`name:\` in the YAML to disambiguate.`,
    );
  }
}

async function openStore(ctx: CommandContext, persistent: boolean): Promise<StateStore> {
  if (!persistent) return new MemoryStore();
  await mkdir(dirname(ctx.settings.stateFile.value), { recursive: true });
  return new JsonFileStore(ctx.settings.stateFile.value);
}

/** Returns the exit code: 0 when every listener ended cleanly (Ctrl+C included), 1 if any failed. */
export async function listenCommand(ctx: CommandContext, files: readonly string[], flags: ListenFlags): Promise<number> {
  const override = flags.from === undefined ? undefined : parseCursor(flags.from, '--from');
  const startupTimeoutMs = parseDuration(flags.startupTimeout, '--startup-timeout');
  const listeners = await resolveListeners(ctx, files, flags);
  if (listeners.length === 0) {
    throw new UsageError('no listeners to run: pass listener YAML files, --event with --identifier, or add listeners: to the config file');
  }
  const client = createClient(ctx);
  const store = await openStore(ctx, flags.stateStore);
  warnAboutListeners(ctx, listeners);
  ctx.output.line(`Connecting for ${listeners.map(describeListener).join(', ')}...`);
  let failed = false;
  await Promise.all(
    listeners.map(async (listener) => {
      try {
        await runListener(client, ctx, {
          listener,
          from: listenerStart(listener, override),
          replayOnly: false,
          stateStore: store,
          // 0s turns the budget off, as in the aviso client.
          ...(startupTimeoutMs > 0 ? { startupTimeoutMs } : {}),
          banner: true,
        });
      } catch (error) {
        // Reported at once; the other listeners keep running and the run exits 1 at the end.
        failed = true;
        for (const line of listenerFailureLines(listenerLabel(listener), error)) ctx.output.line(line);
      }
    }),
  );
  ctx.output.line(
    failed ? 'Some listeners stopped with errors (see messages above). Exiting with non-zero status.' : 'All listeners stopped.',
  );
  return failed ? 1 : 0;
}
