import { readFileSync } from 'node:fs';
import { AvisoClient, isSecureOrLoopback, type Identifier, type Notification } from '../../index.js';
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
  /** `--json` was given (not merely a piped stdout). */
  readonly forceJson: boolean;
}

/**
 * Reads a PEM file of CAs. A file without a certificate block would add nothing to the trust and
 * fail later with a message about the server, so it is refused here, naming the file.
 */
export function readCaBundle(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the CA bundle ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new UsageError(
      `CA bundle ${path} contains no certificate: expected at least one PEM block starting with -----BEGIN CERTIFICATE-----`,
    );
  }
  return pem;
}

/**
 * The client of a command that talks to the server. A credential that was found (environment,
 * files) is refused here for a remote plain-http address, before anything is sent; one named on
 * the command line goes there with a warning, as the user asked.
 */
export function createClient(ctx: CommandContext): AvisoClient {
  const { settings } = ctx;
  const ca = settings.caBundles.value.map(readCaBundle);
  const credential = settings.credential;
  const client = new AvisoClient({
    baseUrl: requireBaseUrl(settings),
    ...(credential ? { auth: credential.provider } : {}),
    ...(settings.timeoutMs.value === undefined ? {} : { timeoutMs: settings.timeoutMs.value }),
    ...(ca.length > 0 ? { ca } : {}),
    ...(settings.dangerAcceptInvalidCerts.value ? { dangerAcceptInvalidCerts: true } : {}),
    userAgent: 'aviso-ts-cli',
  });
  client.assertCredentialAllowed();
  if (credential && !isSecureOrLoopback(client.baseUrl)) {
    ctx.output.log.log('warn', 'sending the credential in the clear: the base URL is not https and not a loopback address', {
      'event.name': 'client.auth.plaintext',
      base_url: client.baseUrl.origin,
    });
  }
  return client;
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
  if (!hasSource)
    throw new UsageError("--event requires --identifiers JSON or --identifier key=value (use --identifiers '{}' for every notification)");
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

/** A listener's label in messages: its name, else its event type (as the aviso client labels it). */
export function listenerLabel(listener: ListenerSpec): string {
  return listener.name ?? listener.event;
}

/** `NAME [EVENT] (k=v, ...)`, filter fields sorted. */
export function describeListener(listener: ListenerSpec): string {
  const filter = Object.entries(listener.identifiers)
    .map(([k, v]) => `${k}=${describeValue(v)}`)
    .sort()
    .join(', ');
  return `${listenerLabel(listener)} [${listener.event}]${filter ? ` (${filter})` : ''}`;
}

export function asIdentifier(value: Readonly<Record<string, unknown>>): Identifier {
  return value as Identifier;
}
