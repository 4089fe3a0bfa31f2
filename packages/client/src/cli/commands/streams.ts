import type { StreamList, StreamListFilter } from '../../index.js';
import { UsageError } from '../errors.js';
import { cell, streamTable } from '../stream-table.js';
import { createClient, type CommandContext } from './common.js';

/** The server's bounds of `limit` (docs/api.md "GET /api/v1/admin/streams"), checked before anything is sent. */
const MAX_LIMIT = 1000;

export interface StreamsFlags {
  readonly eventType?: string;
  readonly user?: string;
  readonly limit?: string;
}

export function parseLimit(raw: string): number {
  const limit = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}, not "${raw}"`);
  return limit;
}

/** The listing as the API sends it, so `--json` output is the documented body (docs/api.md). */
function wireJson(list: StreamList): Record<string, unknown> {
  return {
    streams: list.streams.map((s) => ({
      id: s.id,
      process: s.process,
      route: s.route,
      method: s.method,
      event_type: s.eventType,
      filter: s.filter,
      topic_pattern: s.topicPattern,
      user: s.user,
      client_address: s.clientAddress,
      opened_at: s.openedAt,
      phase: s.phase,
      last_sequence: s.lastSequence,
      delivered: s.delivered,
      buffered_bytes: s.bufferedBytes,
      lag_ms: s.lagMs,
    })),
    total: list.total,
    truncated: list.truncated,
    counts: list.counts,
    processes: {
      answered: list.processes.answered,
      not_answering: list.processes.notAnswering,
      cluster_unreachable: list.processes.clusterUnreachable,
    },
    request_id: list.requestId,
  };
}

/**
 * `aviso admin streams [--event-type T] [--user U] [--limit N]`: the deployment's open streams, a
 * table on a terminal and one JSON object otherwise. Processes that did not answer are named on
 * stderr in both forms, since their streams are missing from the list.
 */
export async function streamsCommand(ctx: CommandContext, flags: StreamsFlags): Promise<void> {
  const filter: StreamListFilter = {
    ...(flags.eventType === undefined ? {} : { eventType: flags.eventType }),
    ...(flags.user === undefined ? {} : { user: flags.user }),
    ...(flags.limit === undefined ? {} : { limit: parseLimit(flags.limit) }),
  };
  const list = await createClient(ctx).admin.listStreams(filter);
  const silent = list.processes.notAnswering;
  if (silent.length > 0) {
    ctx.output.line(
      `Warning: ${silent.length} process${silent.length === 1 ? '' : 'es'} did not answer, their streams are not listed: ${silent.map(cell).join(', ')}`,
    );
  }
  if (list.processes.clusterUnreachable) {
    ctx.output.line(
      `Warning: the server could not ask the other processes of its deployment; only the streams of ${list.processes.answered.map(cell).join(', ')} are listed`,
    );
  }
  await ctx.output.write(ctx.output.human ? streamTable(list) : `${JSON.stringify(wireJson(list))}\n`);
}

/**
 * `aviso admin close-stream ID --yes`: ends one open stream wherever it runs. Without `--yes` it
 * exits 2 and sends nothing, as the other admin commands do: a closed stream's client reconnects,
 * but the operator should mean it.
 */
export async function closeStreamCommand(ctx: CommandContext, id: string, yes: boolean): Promise<void> {
  if (!yes) throw new UsageError("aviso admin close-stream ends a client's stream (it reconnects from its cursor): pass --yes to confirm");
  if (id.trim() === '') throw new UsageError('the stream id is empty: use the ID column of `aviso admin streams`');
  const closed = await createClient(ctx).admin.closeStream(id);
  await ctx.output.result(
    { success: closed.success, message: closed.message, stream_id: closed.streamId, process: closed.process, request_id: closed.requestId },
    `${closed.message}: ${cell(closed.streamId)} on ${cell(closed.process)}`,
  );
}
