import { compareCodePoints } from '../json/canonical-json.js';
import type { AppConfig } from './model.js';

/**
 * What a configuration reload changes (docs/design/rules/browser.md §5), computed from two loaded configurations:
 * which event types were added, removed or changed, and which settings differ but only take
 * effect at the next restart.
 */

/** Event type names, each list byte-wise sorted as the schema API lists them. */
export interface SchemaChanges {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

/**
 * The settings a reload applies. Everything else in the configuration is read once at startup
 * (the listening socket, the backend and its connection, the logger, the metrics server, the
 * fastify limits, the stream settings, the authenticator's mode and secrets, the ECPDS checker…),
 * so a difference there is reported by `restartOnlySettings` instead.
 *
 * The certificate files of `application.tls` are read again at every reload (their names may
 * change too); `application.tls` appearing or disappearing is a restart-only change.
 */
const LIVE_SETTINGS: readonly string[] = [
  'notification_schema',
  'notification_schema_strict',
  'auth.admin_roles',
  'application.tls.cert_file',
  'application.tls.key_file',
  'application.tls.ca_file',
];

export function schemaChanges(before: AppConfig['notification_schema'], after: AppConfig['notification_schema']): SchemaChanges {
  const old = before ?? {};
  const next = after ?? {};
  const added: string[] = [];
  const removed: string[] = [];
  const changed: string[] = [];
  for (const name of Object.keys(next)) {
    if (!Object.hasOwn(old, name)) added.push(name);
    else if (stableText(old[name]) !== stableText(next[name])) changed.push(name);
  }
  for (const name of Object.keys(old)) if (!Object.hasOwn(next, name)) removed.push(name);
  return { added: added.sort(compareCodePoints), removed: removed.sort(compareCodePoints), changed: changed.sort(compareCodePoints) };
}

export function hasSchemaChanges(changes: SchemaChanges): boolean {
  return changes.added.length + changes.removed.length + changes.changed.length > 0;
}

/**
 * Dotted names of the settings that differ between the running configuration and the reloaded
 * one outside `LIVE_SETTINGS`, sorted. Objects are compared key by key (the order keys were written
 * in does not matter), anything else (lists included) as a whole; a section present on one side
 * only is named once.
 */
export function restartOnlySettings(running: AppConfig, next: AppConfig): string[] {
  const names: string[] = [];
  collectDifferences(running, next, '', names);
  return names.sort(compareCodePoints);
}

/**
 * `running` with the settings a reload applies taken from `reloaded`: what processes started
 * long ago and since reloaded run, for a worker that starts now beside them (D36). A live setting
 * inside a section that `running` or `reloaded` lacks (`application.tls` turned on or off) stays
 * as it runs, as on a reload.
 */
export function withLiveSettings(running: AppConfig, reloaded: AppConfig): AppConfig {
  const result = structuredClone(running) as unknown as Record<string, unknown>;
  for (const name of LIVE_SETTINGS) {
    const path = name.split('.');
    const key = path.pop() as string;
    const target = sectionAt(result, path);
    const source = sectionAt(reloaded, path);
    if (!target || !source) continue;
    if (Object.hasOwn(source, key)) target[key] = structuredClone(source[key]);
    else delete target[key];
  }
  return result as unknown as AppConfig;
}

function sectionAt(root: Record<string, unknown>, path: readonly string[]): Record<string, unknown> | undefined {
  let node: unknown = root;
  for (const key of path) node = isPlainObject(node) ? node[key] : undefined;
  return isPlainObject(node) ? node : undefined;
}

function isLive(name: string): boolean {
  return LIVE_SETTINGS.some((live) => name === live || name.startsWith(`${live}.`));
}

function collectDifferences(before: unknown, after: unknown, path: string, out: string[]): void {
  if (isLive(path)) return;
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of keys) collectDifferences(before[key], after[key], path === '' ? key : `${path}.${key}`, out);
    return;
  }
  if (stableText(before) !== stableText(after)) out.push(path);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether two settings are equal whatever order their keys were written in. */
export function sameSetting(a: unknown, b: unknown): boolean {
  return stableText(a) === stableText(b);
}

/** JSON text with object keys sorted, so that two equal configurations compare equal. */
function stableText(value: unknown): string {
  return (
    JSON.stringify(value, (_key, inner: unknown) =>
      isPlainObject(inner)
        ? Object.fromEntries(
            Object.keys(inner)
              .sort()
              .map((key) => [key, inner[key]]),
          )
        : inner,
    ) ?? 'undefined'
  );
}
