import { readFileSync } from 'node:fs';
import { BasicAuth, BearerAuth, AvisoClient, type AuthProvider, type Identifier, type Notification } from '../../index.js';
import { UsageError } from '../errors.js';
import type { ListenerSpec } from '../listeners.js';
import { isObject, loadListenerFiles } from '../listeners.js';
import type { Output } from '../output.js';
import { requireBaseUrl, type Settings } from '../settings.js';
import type { TriggerNotification } from '../triggers/types.js';
import { collectIdentifiers } from '../values.js';

/** What every command receives after the global flags were resolved. */
export interface CommandContext {
  readonly settings: Settings;
  readonly output: Output;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted by the first Ctrl+C (or SIGTERM). */
  readonly signal: AbortSignal;
}

function readCaBundle(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the CA bundle ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

export function createClient(ctx: CommandContext): AvisoClient {
  const ca = readCaBundle(ctx.settings.caBundle.value);
  const c = ctx.settings.credential.value;
  const auth: AuthProvider | undefined =
    c.kind === 'bearer' ? new BearerAuth(c.token) : c.kind === 'basic' ? new BasicAuth(c.username, c.password) : undefined;
  return new AvisoClient({
    baseUrl: requireBaseUrl(ctx.settings),
    ...(auth ? { auth } : {}),
    ...(ctx.settings.timeoutMs.value === undefined ? {} : { timeoutMs: ctx.settings.timeoutMs.value }),
    ...(ca === undefined ? {} : { ca }),
    userAgent: 'aviso-ts-cli',
  });
}

export interface InlineFlags {
  readonly event?: string;
  readonly identifiers?: string;
  readonly identifier?: readonly string[];
}

/** `--event` with `--identifiers JSON` or repeated `--identifier`: one ad-hoc echo listener. */
export function inlineListener(flags: InlineFlags): ListenerSpec | undefined {
  const repeated = flags.identifier ?? [];
  const hasSource = flags.identifiers !== undefined || repeated.length > 0;
  if (flags.event === undefined) {
    if (hasSource) throw new UsageError('--identifier/--identifiers requires --event');
    return undefined;
  }
  if (flags.identifiers !== undefined && repeated.length > 0) {
    throw new UsageError('choose either --identifiers or repeated --identifier, not both');
  }
  if (!hasSource) throw new UsageError("--event requires --identifiers JSON or --identifier key=value (use --identifiers '{}' for every notification)");
  let identifiers: Record<string, unknown>;
  if (flags.identifiers !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(flags.identifiers);
    } catch {
      throw new UsageError('--identifiers is not valid JSON');
    }
    if (!isObject(parsed)) throw new UsageError('--identifiers must be a JSON object');
    identifiers = parsed;
  } else identifiers = collectIdentifiers(repeated);
  return {
    name: 'ad-hoc',
    event: flags.event,
    identifiers,
    triggers: [{ type: 'echo', retries: 0, required: true }],
    fromId: undefined,
    fromDate: undefined,
  };
}

/** Inline flags, else the positional files (replacing, not merging with, the config's), else the config's. */
export async function resolveListeners(ctx: CommandContext, files: readonly string[], flags: InlineFlags): Promise<ListenerSpec[]> {
  const inline = inlineListener(flags);
  if (inline) return [inline];
  if (files.length > 0) return loadListenerFiles(files);
  return [...ctx.settings.listeners];
}

export function triggerNotification(n: Notification): TriggerNotification {
  return {
    view: { event_type: n.eventType, sequence: n.sequence, identifier: n.identifier, payload: n.payload ?? null },
    cloudEvent: n.cloudEvent,
  };
}

function describeValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `Listening for NAME [EVENT] (k=v, ...)`: the banner printed once an opening is confirmed. */
export function listeningBanner(listener: ListenerSpec): string {
  const filter = Object.entries(listener.identifiers)
    .map(([k, v]) => `${k}=${describeValue(v)}`)
    .join(', ');
  return `Listening for ${listener.name ?? 'unnamed'} [${listener.event}]${filter ? ` (${filter})` : ''}. Press Ctrl+C to stop.`;
}

export function asIdentifier(value: Readonly<Record<string, unknown>>): Identifier {
  return value as Identifier;
}
