import { stringify } from 'yaml';
import type { Settings, Sourced } from '../settings.js';
import type { CommandContext } from './common.js';

/**
 * `aviso config dump [--redact]`: every resolved setting with the layer it came from, in the
 * aviso client's shape: YAML with `# from: flag|env|file|default` comments, on a terminal and in a
 * pipe alike (it is an inspection command, not a stream), or one JSON object with `--json`. A
 * secret is never printed; `--redact` also says so (`<set; redacted>`).
 */

function ms(value: number | undefined): string | null {
  if (value === undefined) return null;
  return value % 1000 === 0 ? `${value / 1000}s` : `${value}ms`;
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return '<unset>';
  return stringify(value).trimEnd();
}

function line(key: string, sourced: Sourced<unknown>, indent = ''): string {
  return `${indent}${key}: ${scalar(sourced.value)} # from: ${sourced.source}\n`;
}

interface DumpedAuth {
  readonly provider: string;
  readonly kind: string | null;
  readonly source: string | null;
  readonly path: string | null;
  readonly username: string | null;
}

function auth(settings: Settings, redact: boolean): DumpedAuth {
  const c = settings.credential;
  return {
    provider: c === undefined ? '<unset>' : redact ? '<set; redacted>' : '<set>',
    kind: c?.kind ?? null,
    source: c?.source ?? null,
    path: c?.path ?? null,
    username: c?.username ?? null,
  };
}

export function dumpYaml(settings: Settings, redact: boolean): string {
  let out = '# resolved configuration (per-field source tags shown)\n';
  out += line('config_path', settings.configFile);
  out += line('state_file', settings.stateFile);
  out += line('base_url', settings.baseUrl);
  if (settings.timeoutMs.value !== undefined) out += line('timeout', { ...settings.timeoutMs, value: ms(settings.timeoutMs.value) });
  if (settings.heartbeatIntervalMs.value !== undefined) {
    out += line('heartbeat_interval', { ...settings.heartbeatIntervalMs, value: ms(settings.heartbeatIntervalMs.value) });
  }
  out += 'tls:\n';
  const bundles = settings.caBundles;
  if (bundles.value.length === 0) out += `  ca_bundle: [] # from: ${bundles.source}\n`;
  else out += `  ca_bundle: # from: ${bundles.source}\n${bundles.value.map((p) => `    - ${scalar(p)}\n`).join('')}`;
  out += line('danger_accept_invalid_certs', settings.dangerAcceptInvalidCerts, '  ');
  const a = auth(settings, redact);
  out += `auth:\n  provider: ${a.provider}\n`;
  if (a.kind !== null) out += `  kind: ${a.kind}\n  source: ${a.source}${a.path === null ? '' : ` ${a.path}`}\n`;
  if (a.username !== null) out += `  username: ${scalar(a.username)}\n`;
  out += `listeners_count: ${settings.listeners.length}\n`;
  if (settings.listeners.length > 0) {
    out += 'listeners:\n';
    for (const l of settings.listeners) {
      out += `  - name: ${scalar(l.name ?? '<unnamed>')}\n    event: ${scalar(l.event)}\n    identifiers: ${Object.keys(l.identifiers).length}\n`;
      if (l.fromId !== undefined) out += `    from_id: ${l.fromId}\n`;
      if (l.fromDate !== undefined) out += `    from_date: ${scalar(l.fromDate)}\n`;
      out += `    triggers_count: ${l.triggers.length}\n`;
    }
  }
  return out;
}

export function dumpJson(settings: Settings, redact: boolean): Record<string, unknown> {
  const sourced = (s: Sourced<unknown>): { value: unknown; source: string } => ({ value: s.value ?? null, source: s.source });
  return {
    config_path: sourced(settings.configFile),
    state_file: sourced(settings.stateFile),
    base_url: settings.baseUrl.value === undefined ? null : sourced(settings.baseUrl),
    timeout: settings.timeoutMs.value === undefined ? null : { value: ms(settings.timeoutMs.value), source: settings.timeoutMs.source },
    heartbeat_interval:
      settings.heartbeatIntervalMs.value === undefined
        ? null
        : { value: ms(settings.heartbeatIntervalMs.value), source: settings.heartbeatIntervalMs.source },
    tls: { ca_bundle: sourced(settings.caBundles), danger_accept_invalid_certs: sourced(settings.dangerAcceptInvalidCerts) },
    auth: { ...auth(settings, redact), provider_set: settings.credential !== undefined, redacted: redact },
    listeners_count: settings.listeners.length,
  };
}

export async function configDumpCommand(ctx: CommandContext, redact: boolean): Promise<void> {
  await ctx.output.write(ctx.forceJson ? `${JSON.stringify(dumpJson(ctx.settings, redact))}\n` : dumpYaml(ctx.settings, redact));
}
