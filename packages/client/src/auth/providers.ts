import { parse as parseYaml } from 'yaml';
import { AuthError } from '../errors.js';
import type { AuthProvider } from './provider.js';

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function basicHeader(username: string, password: string): string {
  return `Basic ${base64(`${username}:${password}`)}`;
}

/** `Authorization: Bearer <token>`; the token may come from a function called on refresh. */
export class BearerAuth implements AuthProvider {
  readonly kind = 'bearer';
  readonly discovered = false;
  private token: string | undefined;
  constructor(private readonly tokenSource: string | (() => string | Promise<string>)) {
    if (typeof tokenSource === 'string') this.token = tokenSource;
  }
  async authorization(): Promise<string> {
    this.token ??= await (this.tokenSource as () => string | Promise<string>)();
    return `Bearer ${this.token}`;
  }
  async refresh(): Promise<void> {
    // A fixed token cannot change: the retry after a 401 sends it once more, as the aviso client does.
    if (typeof this.tokenSource !== 'string') this.token = await this.tokenSource();
  }
}

/** `Authorization: Basic <base64(user:password)>`. */
export class BasicAuth implements AuthProvider {
  readonly kind = 'basic';
  readonly discovered = false;
  constructor(
    private readonly username: string,
    private readonly password: string,
  ) {}
  authorization(): Promise<string> {
    return Promise.resolve(basicHeader(this.username, this.password));
  }
  refresh(): Promise<void> {
    return Promise.resolve();
  }
}

/** `AVISO_TOKEN` (bearer), else `AVISO_USERNAME` + `AVISO_PASSWORD` (basic); re-read on refresh. */
export class EnvironmentAuth implements AuthProvider {
  readonly kind = 'environment';
  readonly discovered = true;
  readonly source = 'environment';
  private header: string | undefined;
  constructor(private readonly env: Readonly<Record<string, string | undefined>> = globalThis.process?.env ?? {}) {
    this.header = this.read();
  }
  /** Whether the environment holds a credential at all. */
  get present(): boolean {
    return this.header !== undefined;
  }
  private read(): string | undefined {
    const token = this.env.AVISO_TOKEN;
    if (token) return `Bearer ${token}`;
    const username = this.env.AVISO_USERNAME;
    const password = this.env.AVISO_PASSWORD;
    if (username && password !== undefined) return basicHeader(username, password);
    return undefined;
  }
  authorization(): Promise<string | undefined> {
    return Promise.resolve(this.header);
  }
  refresh(): Promise<void> {
    this.header = this.read();
    return Promise.resolve();
  }
}

/**
 * A YAML credentials file with exactly one of `bearer: {token}` or `basic: {username, password}`
 * (the aviso client's `ConfigFile` shape); unknown keys are rejected. Re-read on refresh.
 */
export class CredentialsFileAuth implements AuthProvider {
  readonly kind = 'credentials-file';
  readonly discovered = true;
  readonly source: string;
  private header: Promise<string> | undefined;
  constructor(readonly path: string) {
    this.source = `credentials file ${path}`;
  }
  authorization(): Promise<string> {
    this.header ??= this.load();
    return this.header;
  }
  async refresh(): Promise<void> {
    this.header = this.load();
    await this.header.catch(() => undefined);
  }
  private async load(): Promise<string> {
    const { readFile } = await import('node:fs/promises');
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      throw new AuthError(`cannot read credentials file ${this.path}: ${(error as Error).message}`, undefined, { cause: error });
    }
    return parseCredentialsFile(text, this.path);
  }
}

export function parseCredentialsFile(text: string, path: string): string {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new AuthError(`credentials file ${path} is not valid YAML`, undefined, { cause: error });
  }
  const fail = (why: string): never => {
    throw new AuthError(`credentials file ${path}: ${why}`);
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail('expected a mapping with bearer: or basic:');
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const unknown = keys.filter((key) => key !== 'bearer' && key !== 'basic');
  if (unknown.length > 0) return fail(`unknown key ${unknown[0]}`);
  if (keys.length !== 1) return fail('exactly one of bearer: and basic: is required');
  const block = record[keys[0]!] as Record<string, unknown> | null;
  if (block === null || typeof block !== 'object') return fail(`${keys[0]} must be a mapping`);
  const allowed = keys[0] === 'bearer' ? ['token'] : ['username', 'password'];
  for (const key of Object.keys(block)) if (!allowed.includes(key)) fail(`unknown key ${keys[0]}.${key}`);
  for (const key of allowed) if (typeof block[key] !== 'string' || block[key] === '') fail(`${keys[0]}.${key} must be a non-empty string`);
  return keys[0] === 'bearer' ? `Bearer ${block.token as string}` : basicHeader(block.username as string, block.password as string);
}

/**
 * A provider whose credential was found rather than given (a config file's `auth:` block, say):
 * it answers as `inner` does, but counts as discovered, so it is never sent in the clear to a
 * remote host, and names `source` when it is refused.
 */
export class DiscoveredAuth implements AuthProvider {
  readonly discovered = true;
  readonly kind: string;
  constructor(
    private readonly inner: AuthProvider,
    readonly source: string,
  ) {
    this.kind = inner.kind;
  }
  authorization(): Promise<string | undefined> {
    return this.inner.authorization();
  }
  refresh(): Promise<void> {
    return this.inner.refresh();
  }
}

/**
 * Tries members in order; the first one that yields a header wins, and refresh targets that
 * member only. Discovered when any member is.
 */
export class ChainAuth implements AuthProvider {
  readonly kind = 'chain';
  private winner: AuthProvider | undefined;
  constructor(private readonly members: readonly AuthProvider[]) {}
  /** The winning member's flag once one has answered; before that, whether any member is discovered. */
  get discovered(): boolean {
    return this.winner?.discovered ?? this.members.some((member) => member.discovered);
  }
  get source(): string | undefined {
    return (this.winner ?? this.members.find((member) => member.discovered))?.source;
  }
  /** The member whose header goes out (after the first `authorization()`). */
  get active(): AuthProvider | undefined {
    return this.winner;
  }
  async authorization(): Promise<string | undefined> {
    let lastError: unknown;
    for (const member of this.members) {
      try {
        const header = await member.authorization();
        if (header !== undefined) {
          this.winner = member;
          return header;
        }
      } catch (error) {
        lastError = error;
      }
    }
    this.winner = undefined;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the last member's failure, rethrown as that member threw it
    if (lastError !== undefined) throw lastError;
    return undefined;
  }
  async refresh(): Promise<void> {
    await this.winner?.refresh();
  }
}
