import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  BasicAuth,
  BearerAuth,
  CredentialsFileAuth,
  DiscoveredAuth,
  EnvironmentAuth,
  parseCredentialsFile,
  type AuthProvider,
} from '../index.js';
import { UsageError } from './errors.js';
import { isObject } from './listeners.js';

/**
 * Where the command's credential comes from, in the aviso client's order: the flags, the
 * environment, the config file's `auth:` block, the credentials file; the first that holds one
 * wins, and the places after it are not read at all (a stale entry there cannot fail a command
 * that does not use it). Only the credentials file is read again after a 401: it is what tools
 * that rotate a token rewrite.
 */

export type CredentialSource = 'flag' | 'environment' | 'config file' | 'credentials file';

export interface Credential {
  readonly kind: 'bearer' | 'basic';
  readonly source: CredentialSource;
  /** The file it was read from, for the two file sources. */
  readonly path?: string;
  /** The user of a basic credential (shown by `config dump`; the secret never is). */
  readonly username?: string;
  readonly provider: AuthProvider;
}

export interface CredentialFlags {
  readonly token?: string;
  readonly username?: string;
  readonly password?: string;
}

const AUTH_KEYS = ['bearer_token', 'basic'];
const BASIC_KEYS = ['username', 'password'];

/** `~/.config/aviso/credentials.yaml`, or the path in `AVISO_CREDENTIALS_FILE`. */
export function credentialsFilePath(env: NodeJS.ProcessEnv, configDir: string): string {
  return env.AVISO_CREDENTIALS_FILE ? env.AVISO_CREDENTIALS_FILE : join(configDir, 'credentials.yaml');
}

function fromFlags(flags: CredentialFlags): Credential | undefined {
  const { token, username, password } = flags;
  if (token !== undefined) {
    if (username !== undefined || password !== undefined) throw new UsageError('--token cannot be used with --username/--password');
    if (token === '') throw new UsageError('--token is empty');
    return { kind: 'bearer', source: 'flag', provider: new BearerAuth(token) };
  }
  if (username === undefined && password === undefined) return undefined;
  if (username === undefined || password === undefined) throw new UsageError('--username and --password go together');
  if (username === '') throw new UsageError('--username is empty');
  return { kind: 'basic', source: 'flag', username, provider: new BasicAuth(username, password) };
}

/**
 * `AVISO_TOKEN` beats `AVISO_USERNAME`/`AVISO_PASSWORD`. An empty token or user name counts as
 * unset; an empty password next to a user name is a real (empty) password. A user name without a
 * password, or a password without a user name, is refused rather than silently skipped.
 */
function fromEnvironment(env: NodeJS.ProcessEnv): Credential | undefined {
  const token = env.AVISO_TOKEN;
  const username = env.AVISO_USERNAME;
  const password = env.AVISO_PASSWORD;
  if (token) return { kind: 'bearer', source: 'environment', provider: new EnvironmentAuth(env) };
  if (username && password !== undefined) return { kind: 'basic', source: 'environment', username, provider: new EnvironmentAuth(env) };
  if (username || password) {
    throw new UsageError(
      'env auth is misconfigured: set AVISO_TOKEN, or both AVISO_USERNAME and AVISO_PASSWORD, or unset them to fall back to the config file and the credentials file',
    );
  }
  return undefined;
}

function fromConfigBlock(auth: unknown, path: string): Credential | undefined {
  if (auth === undefined || auth === null) return undefined;
  if (!isObject(auth)) throw new UsageError(`${path}: auth must be a mapping`);
  for (const key of Object.keys(auth)) {
    if (!AUTH_KEYS.includes(key)) throw new UsageError(`${path}: auth: unknown key "${key}" (allowed: ${AUTH_KEYS.join(', ')})`);
  }
  const token = auth.bearer_token;
  const basic = auth.basic;
  if (token !== undefined && token !== null && basic !== undefined && basic !== null) {
    throw new UsageError(`config file ${path} sets both auth.bearer_token and auth.basic; keep one`);
  }
  const source = `config file ${path}`;
  if (token !== undefined && token !== null) {
    if (typeof token !== 'string' || token === '') throw new UsageError(`${path}: auth.bearer_token must be a non-empty string`);
    return { kind: 'bearer', source: 'config file', path, provider: new DiscoveredAuth(new BearerAuth(token), source) };
  }
  if (basic === undefined || basic === null) return undefined;
  if (!isObject(basic)) throw new UsageError(`${path}: auth.basic must be a mapping with username and password`);
  for (const key of Object.keys(basic)) {
    if (!BASIC_KEYS.includes(key)) throw new UsageError(`${path}: auth.basic: unknown key "${key}" (allowed: ${BASIC_KEYS.join(', ')})`);
  }
  const { username, password } = basic;
  if (typeof username !== 'string' || username === '' || typeof password !== 'string') {
    throw new UsageError(`${path}: auth.basic needs a username and a password`);
  }
  return { kind: 'basic', source: 'config file', path, username, provider: new DiscoveredAuth(new BasicAuth(username, password), source) };
}

/** A missing credentials file is fine; one that exists must be readable and well formed. */
function fromCredentialsFile(path: string): Credential | undefined {
  try {
    statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read credentials file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let header: string;
  try {
    header = parseCredentialsFile(readFileSync(path, 'utf8'), path);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const kind = header.startsWith('Bearer ') ? 'bearer' : 'basic';
  return { kind, source: 'credentials file', path, provider: new CredentialsFileAuth(path) };
}

export interface CredentialInputs {
  readonly flags: CredentialFlags;
  readonly env: NodeJS.ProcessEnv;
  /** The config file's `auth:` value, as parsed (read only when nothing above it has a credential). */
  readonly configAuth: unknown;
  readonly configPath: string;
  readonly credentialsPath: string;
}

export function resolveCredential(inputs: CredentialInputs): Credential | undefined {
  return (
    fromFlags(inputs.flags) ??
    fromEnvironment(inputs.env) ??
    fromConfigBlock(inputs.configAuth, inputs.configPath) ??
    fromCredentialsFile(inputs.credentialsPath)
  );
}
