import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { UsageError } from './errors.js';
import { isObject, parseListenerList, type ListenerSpec, type Obj } from './listeners.js';
import { parseDuration } from './values.js';

/**
 * The resolved settings of one invocation. Every field is layered on its own: flag, then
 * environment, then config file, then default — except the credential, which comes whole
 * from the highest layer that gives any (a flag token must not pair with a file password).
 */

export type Source = 'flag' | 'env' | 'config' | 'default';

export interface Sourced<T> {
  readonly value: T;
  readonly source: Source;
}

export type Credential =
  | { readonly kind: 'none' }
  | { readonly kind: 'bearer'; readonly token: string }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string };

export interface Settings {
  readonly configFile: Sourced<string>;
  readonly stateFile: Sourced<string>;
  readonly baseUrl: Sourced<string | undefined>;
  readonly credential: Sourced<Credential>;
  readonly timeoutMs: Sourced<number | undefined>;
  readonly heartbeatIntervalMs: Sourced<number | undefined>;
  /** PEM file of the CAs to trust for an https server, in place of Node's defaults. */
  readonly caBundle: Sourced<string | undefined>;
  readonly listeners: readonly ListenerSpec[];
}

export interface GlobalFlags {
  readonly config?: string;
  readonly stateFile?: string;
  readonly baseUrl?: string;
  readonly token?: string;
  readonly username?: string;
  readonly password?: string;
  readonly caBundle?: string;
}

const CONFIG_KEYS = ['base_url', 'auth', 'timeout', 'heartbeat_interval', 'state_file', 'tls', 'listeners'];
const AUTH_KEYS = ['bearer_token', 'basic'];
const BASIC_KEYS = ['username', 'password'];
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
  readonly token?: string;
  readonly username?: string;
  readonly password?: string;
  readonly timeout?: string;
  readonly heartbeatInterval?: string;
  readonly stateFile?: string;
  readonly caBundle?: string;
  readonly listeners: readonly ListenerSpec[];
}

/** Reads the config file; a missing file is fine only when nobody asked for it by name. */
export function readConfigFile(path: string, explicit: boolean): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !explicit) return { listeners: [] };
    throw new UsageError(`cannot read config file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let doc: unknown;
  try {
    doc = parse(text) ?? {};
  } catch (error) {
    throw new UsageError(`config file ${path} is not valid YAML: ${(error as Error).message}`);
  }
  const root = checkKeys(doc, CONFIG_KEYS, `config file ${path}`);
  const auth = root.auth === undefined ? {} : checkKeys(root.auth, AUTH_KEYS, `${path}: auth`);
  const basic = auth.basic === undefined ? {} : checkKeys(auth.basic, BASIC_KEYS, `${path}: auth.basic`);
  const tls = root.tls === undefined || root.tls === null ? {} : checkKeys(root.tls, TLS_KEYS, `${path}: tls`);
  // Accepted only when off: turning verification off is never done silently, and not at all here.
  if (tls.danger_accept_invalid_certs !== undefined && tls.danger_accept_invalid_certs !== false) {
    throw new UsageError(`${path}: tls.danger_accept_invalid_certs is not supported: trust the server's CA with tls.ca_bundle instead`);
  }
  return {
    baseUrl: optString(root.base_url, `${path}: base_url`),
    token: optString(auth.bearer_token, `${path}: auth.bearer_token`),
    username: optString(basic.username, `${path}: auth.basic.username`),
    password: optString(basic.password, `${path}: auth.basic.password`),
    timeout: optString(root.timeout, `${path}: timeout`),
    heartbeatInterval: optString(root.heartbeat_interval, `${path}: heartbeat_interval`),
    stateFile: optString(root.state_file, `${path}: state_file`),
    caBundle: optString(tls.ca_bundle, `${path}: tls.ca_bundle`),
    listeners: root.listeners === undefined || root.listeners === null ? [] : parseListenerList(root.listeners, path),
  };
}

function pick<T>(flag: T | undefined, env: T | undefined, config: T | undefined, fallback: T): Sourced<T> {
  if (flag !== undefined) return { value: flag, source: 'flag' };
  if (env !== undefined && env !== '') return { value: env, source: 'env' };
  if (config !== undefined) return { value: config, source: 'config' };
  return { value: fallback, source: 'default' };
}

function credentialOf(token: string | undefined, username: string | undefined, password: string | undefined, layer: string): Credential | undefined {
  if (token === undefined && username === undefined && password === undefined) return undefined;
  if (token !== undefined && (username !== undefined || password !== undefined)) {
    throw new UsageError(`${layer}: a token and a username/password are mutually exclusive`);
  }
  if (token !== undefined) return { kind: 'bearer', token };
  if (username === undefined || password === undefined) throw new UsageError(`${layer}: a username needs a password and a password a username`);
  return { kind: 'basic', username, password };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

export function resolveSettings(flags: GlobalFlags, env: NodeJS.ProcessEnv): Settings {
  const dir = defaultConfigDir(env);
  const configFile = pick(flags.config, env.AVISO_CLIENT_CONFIG_FILE, undefined, join(dir, 'config.yaml'));
  const file = readConfigFile(configFile.value, configFile.source !== 'default');
  const fromFlags = credentialOf(flags.token, flags.username, flags.password, 'flags');
  const fromEnv = credentialOf(nonEmpty(env.AVISO_TOKEN), nonEmpty(env.AVISO_USERNAME), nonEmpty(env.AVISO_PASSWORD), 'environment');
  const fromConfig = credentialOf(file.token, file.username, file.password, `config file ${configFile.value}`);
  const toMs = (text: string | undefined, what: string): number | undefined => (text === undefined ? undefined : parseDuration(text, what));
  return {
    configFile,
    stateFile: pick(flags.stateFile, env.AVISO_STATE_FILE, file.stateFile, join(dir, 'state.json')),
    baseUrl: pick<string | undefined>(flags.baseUrl, env.AVISO_BASE_URL, file.baseUrl, undefined),
    credential: pick<Credential>(fromFlags, fromEnv, fromConfig, { kind: 'none' }),
    timeoutMs: pick<number | undefined>(undefined, undefined, toMs(file.timeout, 'timeout'), undefined),
    heartbeatIntervalMs: pick<number | undefined>(undefined, undefined, toMs(file.heartbeatInterval, 'heartbeat_interval'), undefined),
    caBundle: pick<string | undefined>(flags.caBundle, undefined, file.caBundle, undefined),
    listeners: file.listeners,
  };
}

export function requireBaseUrl(settings: Settings): string {
  const url = settings.baseUrl.value;
  if (!url) throw new UsageError('no server URL: pass --base-url, set AVISO_BASE_URL, or set base_url in the config file');
  return url;
}

const MASK = '***';

/** `aviso config dump`: every resolved field with where it came from. */
export function dumpSettings(settings: Settings, redact: boolean): Record<string, Sourced<unknown>> {
  const c = settings.credential.value;
  const secret = (value: string): string => (redact ? MASK : value);
  const auth =
    c.kind === 'bearer' ? { bearer_token: secret(c.token) } : c.kind === 'basic' ? { basic: { username: c.username, password: secret(c.password) } } : null;
  const ms = (v: number | undefined): string | null => (v === undefined ? null : `${v}ms`);
  return {
    config_file: settings.configFile,
    base_url: { value: settings.baseUrl.value ?? null, source: settings.baseUrl.source },
    auth: { value: auth, source: settings.credential.source },
    state_file: settings.stateFile,
    timeout: { value: ms(settings.timeoutMs.value), source: settings.timeoutMs.source },
    heartbeat_interval: { value: ms(settings.heartbeatIntervalMs.value), source: settings.heartbeatIntervalMs.source },
    ca_bundle: { value: settings.caBundle.value ?? null, source: settings.caBundle.source },
    listeners: { value: settings.listeners.map((l) => `${l.name ?? 'unnamed'} [${l.event}]`), source: 'config' },
  };
}
