import type { NotifyResult } from '../../index.js';
import { UsageError } from '../errors.js';
import { parseNotifyParameters } from '../values.js';
import { asIdentifier, createClient, type CommandContext } from './common.js';

/**
 * The server's `processed_at` for a person: no fractional seconds, a space for the `T`, ` UTC`
 * for `Z` or `+00:00`; another offset stays as it is, and anything unexpected is shown unchanged.
 */
export function humaniseTimestamp(raw: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})?$/.exec(raw);
  if (!m) return raw;
  const zone = m[3] === undefined ? '' : m[3] === 'Z' || m[3] === '+00:00' ? ' UTC' : m[3];
  return `${m[1]} ${m[2]}${zone}`;
}

export interface NotifyFlags {
  readonly idempotencyKey?: string;
  readonly retry: boolean;
}

/**
 * `aviso notify event=TYPE k=v ... [data=JSON] [--identifier k=v | k:=JSON ...] [--idempotency-key K] [--retry]`.
 * The output is the Rust client's (`printAccepted`).
 */
export async function notifyCommand(
  ctx: CommandContext,
  parameters: readonly string[],
  identifiers: readonly string[],
  flags: NotifyFlags = { retry: false },
): Promise<void> {
  const request = parseNotifyParameters(parameters, identifiers);
  const client = createClient(ctx);
  const result = await client.notify({
    ...request,
    identifier: asIdentifier(request.identifier),
    signal: ctx.signal,
    ...(flags.idempotencyKey === undefined ? {} : { idempotencyKey: flags.idempotencyKey }),
    retry: flags.retry,
  });
  await printAccepted(ctx, request.eventType, result);
}

/**
 * The confirmation of one stored notification: on a terminal the aviso client's line, else one
 * JSON object. A replayed answer (only a server with idempotent notify sends one) adds `replayed`
 * so the person knows nothing new was stored.
 */
export async function printAccepted(ctx: CommandContext, eventType: string, result: NotifyResult): Promise<void> {
  const replayed = result.replayed === true;
  await ctx.output.result(
    {
      event_type: eventType,
      status: result.status,
      request_id: result.requestId,
      processed_at: result.processedAt,
      ...(replayed ? { replayed: true } : {}),
    },
    `notification accepted: event_type=${eventType}, status=${result.status}, request_id=${result.requestId}, processed_at=${humaniseTimestamp(result.processedAt)}${replayed ? ', replayed (an earlier attempt stored it)' : ''}`,
  );
}

/** `aviso schema list`: the server's `event_types`, each with its public schema when piped. */
export async function schemaListCommand(ctx: CommandContext): Promise<void> {
  const answer = (await createClient(ctx).schema()) as { event_types?: unknown; schema?: Record<string, unknown> };
  const schemas = answer.schema ?? {};
  const names = (Array.isArray(answer.event_types) ? answer.event_types.map(String) : Object.keys(schemas)).sort();
  if (ctx.output.human) {
    await ctx.output.write(`Event types (${names.length}):\n${names.map((n) => `  - ${n}\n`).join('')}`);
    return;
  }
  for (const name of names) await ctx.output.write(`${JSON.stringify({ event_type: name, schema: schemas[name] ?? null })}\n`);
}

export async function schemaGetCommand(ctx: CommandContext, eventType: string): Promise<void> {
  const schema = await createClient(ctx).schema(eventType);
  await ctx.output.write(ctx.output.human ? `${JSON.stringify(schema, null, 2)}\n` : `${JSON.stringify(schema)}\n`);
}

export type AdminAction = { kind: 'wipe-stream'; eventType: string } | { kind: 'wipe-all' } | { kind: 'delete'; id: string };

export async function adminCommand(ctx: CommandContext, action: AdminAction, yes: boolean): Promise<void> {
  if (!yes) throw new UsageError(`aviso admin ${action.kind} deletes notifications: pass --yes to confirm`);
  if (action.kind === 'delete' && !/^[^@]+@\d+$/.test(action.id)) {
    throw new UsageError(`"${action.id}" is not a notification id: use <event_type>@<sequence>, for example mars@42`);
  }
  const admin = createClient(ctx).admin;
  const result =
    action.kind === 'wipe-stream'
      ? await admin.wipeStream(action.eventType)
      : action.kind === 'wipe-all'
        ? await admin.wipeAll()
        : await admin.deleteNotification(action.id);
  await ctx.output.result(
    {
      success: result.success,
      message: result.message,
      request_id: result.requestId,
      ...(result.notificationId ? { notification_id: result.notificationId } : {}),
    },
    result.message,
  );
}
