import { UsageError } from '../errors.js';
import { parseCursor } from '../values.js';
import { createClient, listenerLabel, resolveListeners, type CommandContext, type InlineFlags } from './common.js';
import { startFromCursor } from './listen.js';
import { runListener } from './run-listener.js';

export interface ReplayFlags extends InlineFlags {
  readonly from: string;
  readonly until?: string;
  readonly listener?: string;
}

/**
 * `aviso replay --from X [--until Y]`: stateless, through the listener's triggers, ending when
 * the replay ends. `--from N` starts after N; `--until` is inclusive; both take a sequence or a date.
 */
export async function replayCommand(ctx: CommandContext, files: readonly string[], flags: ReplayFlags): Promise<void> {
  const from = startFromCursor(parseCursor(flags.from, '--from'));
  const until = flags.until === undefined ? undefined : parseCursor(flags.until, '--until');
  const all = await resolveListeners(ctx, files, flags);
  const inline = flags.event !== undefined;
  const candidates = !inline && flags.listener !== undefined ? all.filter((l) => l.name === flags.listener) : all;
  if (candidates.length === 0) {
    throw new UsageError(
      flags.listener !== undefined && !inline
        ? `no listener named "${flags.listener}"`
        : 'no listeners: pass a listener file or --event with --identifier',
    );
  }
  if (candidates.length > 1) {
    throw new UsageError(
      `${candidates.length} listeners resolved: choose one with --listener NAME (${candidates.map(listenerLabel).join(', ')})`,
    );
  }
  const listener = candidates[0]!;
  const to = until === undefined ? undefined : until.kind === 'sequence' ? { toId: until.sequence } : { toDate: until.date };
  await runListener(createClient(ctx), ctx, { listener, from, ...(to ? { to } : {}), replayOnly: true, banner: false });
}
