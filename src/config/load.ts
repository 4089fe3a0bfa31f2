import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigLoadError, EnvValue, isMapping, setOwn, show, type Mapping } from './config-document.js';
import { conformConfig } from './conform.js';
import type { AppConfig } from './model.js';

export { ConfigLoadError } from './config-document.js';

/**
 * The first stage of startup (docs/design/rules/operations.md §1.1–§1.3): find the files, merge them, apply the
 * `AVISOSERVER_*` environment, then check every value against the TypeBox model while coercing
 * it where the section is lenient and filling defaults.
 */

export interface LoadConfigOptions {
  /** Environment to read `AVISOSERVER_*`, `NATS_TOKEN` and `HOME` from; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Directory that `./config/config.yaml` and a relative `AVISOSERVER_CONFIG_FILE` resolve against. */
  cwd?: string;
  /** Home directory of the third cascade file; default `$HOME`, else `os.homedir()`. */
  home?: string;
  /** Second cascade file; default `/etc/aviso_server/config.yaml`. Exists so tests never read the real /etc. */
  systemFile?: string;
}

export interface LoadedConfig {
  config: AppConfig;
  /** Absolute paths of the files that were read, in merge order. */
  files: string[];
}

const CONFIG_FILE_VARIABLE = 'AVISOSERVER_CONFIG_FILE';
const ENV_PREFIX = 'AVISOSERVER_';
const SYSTEM_CONFIG_FILE = '/etc/aviso_server/config.yaml';

export function loadConfig(options: LoadConfigOptions = {}): AppConfig {
  return loadConfigWithSources(options).config;
}

/** Same as `loadConfig`, also telling which files were read (for the startup log). */
export function loadConfigWithSources(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const home = options.home ?? env.HOME ?? os.homedir();
  const files = configFiles(env, cwd, home, options.systemFile ?? SYSTEM_CONFIG_FILE);

  let document: Mapping = {};
  for (const file of files) document = merge(document, readConfigFile(file));
  applyEnvOverrides(document, env);

  const config = conformConfig(document);
  // docs/design/rules/backends.md §7.1: the config token wins; NATS_TOKEN fills in when the file has none.
  // A blank NATS_TOKEN (compose exports unset variables as empty) is treated as unset.
  const natsToken = env.NATS_TOKEN;
  if (config.notification_backend.jetstream.token === undefined && natsToken !== undefined && natsToken !== '') {
    config.notification_backend.jetstream.token = natsToken;
  }
  return { config, files };
}

function isRegularFile(file: string): boolean {
  return fs.statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
}

/** D16 cascade, or the single file named by AVISOSERVER_CONFIG_FILE (A1). */
function configFiles(env: Record<string, string | undefined>, cwd: string, home: string, systemFile: string): string[] {
  const named = env[CONFIG_FILE_VARIABLE];
  if (named !== undefined) {
    const trimmed = named.trim();
    if (trimmed === '') throw new ConfigLoadError(`${CONFIG_FILE_VARIABLE} is set but empty`);
    const file = path.resolve(cwd, trimmed);
    if (!isRegularFile(file)) {
      throw new ConfigLoadError(`${CONFIG_FILE_VARIABLE}: '${trimmed}' is not an existing regular file`);
    }
    return [file];
  }
  return [path.resolve(cwd, 'config', 'config.yaml'), systemFile, path.join(home, '.aviso_server', 'config.yaml')].filter(isRegularFile);
}

function readConfigFile(file: string): Mapping {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigLoadError(`${file}: cannot read the file: ${error instanceof Error ? error.message : String(error)}`);
  }
  let content: unknown;
  if (file.toLowerCase().endsWith('.json')) {
    try {
      content = JSON.parse(text) as unknown;
    } catch (error) {
      throw new ConfigLoadError(`${file}: invalid JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
  } else {
    const document = parseDocument(text);
    const first = document.errors[0];
    if (first !== undefined) {
      // yaml's message is "<reason> at line L, column C:" followed by a code frame; keep line one.
      const reason = (first.message.split('\n')[0] ?? first.message).replace(/:$/, '');
      throw new ConfigLoadError(`${file}: YAML syntax error: ${reason}`);
    }
    try {
      content = document.toJS() as unknown;
    } catch (error) {
      throw new ConfigLoadError(`${file}: invalid YAML: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (content === null || content === undefined) return {}; // an empty file contributes nothing
  if (!isMapping(content)) throw new ConfigLoadError(`${file}: the top level must be a mapping, got ${show(content)}`);
  return content;
}

/** Mappings merge key by key, recursively; anything else in `later` replaces, lists included. */
function merge(earlier: unknown, later: unknown): Mapping {
  if (!isMapping(earlier) || !isMapping(later)) throw new Error('merge expects two mappings');
  const result: Mapping = {};
  for (const [key, value] of Object.entries(earlier)) setOwn(result, key, value);
  for (const [key, value] of Object.entries(later)) {
    const before = result[key];
    setOwn(result, key, isMapping(before) && isMapping(value) && Object.hasOwn(result, key) ? merge(before, value) : value);
  }
  return result;
}

/**
 * Environment overrides: `AVISOSERVER_<SEGMENT>[__<SEGMENT>…]`, prefix case-insensitive, the rest lower-cased.
 * Shorter paths are applied first so `AVISOSERVER_AUTH__ENABLED` still lands when a broader
 * variable replaced the section. A name with an empty segment (`AVISOSERVER_AUTH__`) addresses
 * nothing and is ignored.
 */
function applyEnvOverrides(document: Mapping, env: Record<string, string | undefined>): void {
  const overrides: { variable: string; segments: string[]; value: string }[] = [];
  for (const [variable, value] of Object.entries(env)) {
    if (value === undefined || variable.length <= ENV_PREFIX.length) continue;
    if (variable.slice(0, ENV_PREFIX.length).toUpperCase() !== ENV_PREFIX) continue;
    const rest = variable.slice(ENV_PREFIX.length).toLowerCase();
    if (rest === 'config_file') continue; // names the file, not a key
    const segments = rest.split('__');
    if (segments.some((segment) => segment === '')) continue;
    overrides.push({ variable, segments, value });
  }
  overrides.sort((a, b) => a.segments.length - b.segments.length || (a.variable < b.variable ? -1 : 1));
  for (const { variable, segments, value } of overrides) {
    let node = document;
    for (const segment of segments.slice(0, -1)) {
      const next = Object.hasOwn(node, segment) ? node[segment] : undefined;
      if (isMapping(next)) {
        node = next;
      } else {
        const created: Mapping = {};
        setOwn(node, segment, created);
        node = created;
      }
    }
    setOwn(node, segments[segments.length - 1] ?? '', new EnvValue(value, variable));
  }
}
