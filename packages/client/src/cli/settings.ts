import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { credentialsFilePath, resolveCredential, type Credential, type CredentialFlags } from './credentials.js';
import { UsageError } from './errors.js';
import { isObject, parseListenerList, type ListenerSpec, type Obj } from './listeners.js';
import { parseDuration } from './values.js';

/**
 * The resolved settings of one invocation. Every field is layered on its own: flag, then
 * environment, then config file, then default — except the credential, which comes whole from
 * the first place that holds one (credentials.ts).
 */

export type Source = 'flag' | 'env' | 'file' | 'default';

export interface Sourced<T> {
  readonly value: T;
  readonly source: Source;
}

export interface Settings {
  readonly configFile: Sourced<string>;
  readonly stateFile: Sourced<string>;
  readonly baseUrl: Sourced<string | undefined>;
  readonly credential: Credential | undefined;
  readonly timeoutMs: Sourced<number | undefined>;
  readonly heartbeatIntervalMs: Sourced<number | undefined>;
  /** PEM files of extra CAs, absolute: trusted for https in addition to the default roots. */
  readonly caBundles: Sourced<readonly string[]>;
  readonly dangerAcceptInvalidCerts: Sourced<boolean>;
  readonly listeners: readonly ListenerSpec[];
}

export interface GlobalFlags extends CredentialFlags {
  readonly config?: string;
  readonly stateFile?: string;
  readonly baseUrl?: string;
  readonly caBundle?: readonly string[];
  readonly dangerAcceptInvalidCerts?: boolean;
}

const CONFIG_KEYS = ['base_url', 'auth', 'timeout', 'heartbeat_interval', 'state_file', 'tls', 'listeners'];
const TLS_KEYS = ['ca_bundle', 'danger_accept_invalid_certs'];

function checkKeys(value: unknown, allowed: readonly string[], where: string): Obj {
  if (!isObject(value)) throw new UsageError(`${where} must be a mapping`);
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new UsageError(`${where}: unknown key "${key}" (allowed: ${allowed.join(', ')})`);
  }
  return value;
}

function optString(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new UsageError(`${where} must be a string`);
  return value;
}

export function defaultConfigDir(env: NodeJS.ProcessEnv): string {
  return join(env.HOME ?? homedir(), '.config', 'aviso');
}

interface ConfigFile {
  readonly baseUrl?: string;
  readonly auth?: unknown;
  readonly timeout?: string;
  readonly heartbeatInterval?: string;
  readonly stateFile?: string;
  /** Present when the file has a `tls:` block: the block decides, even when its list is empty. */
  readonly caBundles?: readonly string[];
  readonly dangerAcceptInvalidCerts?: boolean;
  readonly listeners: readonly ListenerSpec[];
}

/** A list of paths; one string is taken as a list of one. Relative paths are the file's neighbours. */
function caBundleList(value: unknown, path: string): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || !list.every((p): p is string => typeof p === 'string' && p !== '')) {
    throw new UsageError(`${path}: tls.ca_bundle must be a list of paths`);
  }
  return list.map((p) => (isAbsolute(p) ? p : resolve(dirname(path), p)));
}

/** Reads the config file. A file that does not exist is an empty configuration, named or not (as in the aviso client). */
export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { listeners: [] };
    throw new UsageError(`cannot read config file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let doc: unknown;
  try {
    doc = parse(text) ?? {};
  } catch (error) {
    throw new UsageError(`config file ${path} is not valid YAML: ${(error as Error).message}`);
  }
  const root = checkKeys(doc, CONFIG_KEYS, `config file ${path}`);
  const hasTls = root.tls !== undefined && root.tls !== null;
  const tls = hasTls ? checkKeys(root.tls, TLS_KEYS, `${path}: tls`) : {};
  const danger = tls.danger_accept_invalid_certs;
  if (danger !== undefined && typeof danger !== 'boolean')
    throw new UsageError(`${path}: tls.danger_accept_invalid_certs must be true or false`);
  return {
    baseUrl: optString(root.base_url, `${path}: base_url`),
    auth: root.auth,
    timeout: optString(root.timeout, `${path}: timeout`),
    heartbeatInterval: optString(root.heartbeat_interval, `${path}: heartbeat_interval`),
    stateFile: optString(root.state_file, `${path}: state_file`),
    ...(hasTls ? { caBundles: caBundleList(tls.ca_bundle, path), dangerAcceptInvalidCerts: danger === true } : {}),
    listeners: root.listeners === undefined || root.listeners === null ? [] : parseListenerList(root.listeners, path),
  };
}

function pick<T>(flag: T | undefined, env: T | undefined, config: T | undefined, fallback: T): Sourced<T> {
  if (flag !== undefined) return { value: flag, source: 'flag' };
  if (env !== undefined && env !== '') return { value: env, source: 'env' };
  if (config !== undefined) return { value: config, source: 'file' };
  return { value: fallback, source: 'default' };
}

export function resolveSettings(flags: GlobalFlags, env: NodeJS.ProcessEnv): Settings {
  const dir = defaultConfigDir(env);
  const configFile = pick(
    flags.config === undefined ? undefined : resolve(flags.config),
    env.AVISO_CLIENT_CONFIG_FILE,
    undefined,
    join(dir, 'config.yaml'),
  );
  const file = readConfigFile(configFile.value);
  const toMs = (text: string | undefined, what: string): number | undefined => (text === undefined ? undefined : parseDuration(text, what));
  const flagBundles = flags.caBundle?.length ? flags.caBundle.map((p) => resolve(p)) : undefined;
  return {
    configFile,
    stateFile: pick(flags.stateFile, env.AVISO_STATE_FILE, file.stateFile, join(dir, 'state.json')),
    baseUrl: pick<string | undefined>(flags.baseUrl, env.AVISO_BASE_URL, file.baseUrl, undefined),
    credential: resolveCredential({
      flags,
      env,
      configAuth: file.auth,
      configPath: configFile.value,
      credentialsPath: credentialsFilePath(env, dir),
    }),
    timeoutMs: pick<number | undefined>(undefined, undefined, toMs(file.timeout, 'timeout'), undefined),
    heartbeatIntervalMs: pick<number | undefined>(undefined, undefined, toMs(file.heartbeatInterval, 'heartbeat_interval'), undefined),
    caBundles: pick<readonly string[]>(flagBundles, undefined, file.caBundles, []),
    dangerAcceptInvalidCerts: pick<boolean>(
      flags.dangerAcceptInvalidCerts === true ? true : undefined,
      undefined,
      file.dangerAcceptInvalidCerts,
      false,
    ),
    listeners: file.listeners,
  };
}

export function requireBaseUrl(settings: Settings): string {
  const url = settings.baseUrl.value;
  if (!url)
    throw new UsageError('no server URL (base_url is required): pass --base-url, set AVISO_BASE_URL, or set base_url in the config file');
  return url;
}
