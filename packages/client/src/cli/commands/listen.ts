import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { JsonFileStore, MemoryStore, resumeKey, type StateStore, type WatchRequest } from '../../index.js';
import { UsageError } from '../errors.js';
import type { ListenerSpec } from '../listeners.js';
import { parseCursor, parseDuration, type Cursor } from '../values.js';
import { asIdentifier, createClient, resolveListeners, type CommandContext, type InlineFlags } from './common.js';
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

function listenerStart(listener: ListenerSpec): WatchRequest['from'] {
  if (listener.fromId !== undefined) return { fromId: listener.fromId };
  if (listener.fromDate !== undefined) return { fromDate: listener.fromDate };
  return undefined;
}

/**
 * The start of one listener: `--from` for every listener; else the stored cursor (the library
 * resumes from it when no start is given); else the file's `from_id`/`from_date` default.
 */
async function startOf(listener: ListenerSpec, override: Cursor | undefined, store: StateStore, baseUrl: string): Promise<WatchRequest['from']> {
  if (override) return startFromCursor(override);
  const fallback = listenerStart(listener);
  if (fallback === undefined) return undefined;
  const stored = await store.get(await resumeKey(baseUrl, listener.event, asIdentifier(listener.identifiers)));
  return stored === undefined ? fallback : undefined;
}

/** Returns the exit code: 0 when every listener ended cleanly (Ctrl+C included), 1 if any failed. */
export async function listenCommand(ctx: CommandContext, files: readonly string[], flags: ListenFlags): Promise<number> {
  const override = flags.from === undefined ? undefined : parseCursor(flags.from, '--from');
  const startupTimeoutMs = parseDuration(flags.startupTimeout, '--startup-timeout');
  const listeners = await resolveListeners(ctx, files, flags);
  if (listeners.length === 0) {
    throw new UsageError('no listeners: pass listener files, --event with --identifier, or add listeners: to the config file');
  }
  const client = createClient(ctx);
  let store: StateStore;
  if (flags.stateStore) {
    await mkdir(dirname(ctx.settings.stateFile.value), { recursive: true });
    store = new JsonFileStore(ctx.settings.stateFile.value);
  } else store = new MemoryStore();
  let failed = false;
  await Promise.all(
    listeners.map(async (listener) => {
      try {
        const from = await startOf(listener, override, store, client.baseUrlInput);
        await runListener(client, ctx, { listener, from, replayOnly: false, stateStore: store, startupTimeoutMs, banner: true });
      } catch (error) {
        // Reported at once; the other listeners keep running and the run exits 1 at the end.
        failed = true;
        ctx.output.error(`listener ${listener.name ?? 'unnamed'} [${listener.event}]: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
  );
  return failed ? 1 : 0;
}
