import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { UsageError } from './errors.js';
import { parseDuration } from './values.js';

/**
 * Listener definitions, from listener files or the config's `listeners:` block, in the aviso
 * client's format. Every unknown key is rejected with its location, so a typo never silently
 * turns a trigger off.
 */

export interface TriggerCommon {
  readonly retries: number;
  readonly required: boolean;
}
export interface TimedCommon extends TriggerCommon {
  /** Per-attempt limit in ms; undefined means none (the command trigger's default). */
  readonly timeoutMs: number | undefined;
  readonly failFast: boolean;
}

export type TriggerSpec =
  | ({ readonly type: 'echo' } & TriggerCommon)
  | ({ readonly type: 'log'; readonly path: string } & TriggerCommon)
  | ({
      readonly type: 'command';
      readonly command: string;
      readonly env: Readonly<Record<string, string>>;
      readonly workingDir: string | undefined;
    } & TimedCommon)
  | ({
      readonly type: 'webhook';
      readonly url: string;
      readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      readonly headers: Readonly<Record<string, string>>;
      readonly bodyTemplate: string | undefined;
    } & TimedCommon)
  | ({ readonly type: 'post'; readonly url: string; readonly headers: Readonly<Record<string, string>> } & TimedCommon)
  | ({ readonly type: 'teams'; readonly url: string; readonly titleTemplate: string } & TimedCommon);

export interface ListenerSpec {
  /** Undefined when the file gives none: the echo leader then names no listener. */
  readonly name: string | undefined;
  readonly event: string;
  readonly identifiers: Readonly<Record<string, unknown>>;
  readonly triggers: readonly TriggerSpec[];
  readonly fromId: number | undefined;
  readonly fromDate: string | undefined;
}

const LISTENER_KEYS = ['name', 'event', 'identifiers', 'triggers', 'from_id', 'from_date'];
const COMMON_KEYS = ['type', 'retries', 'required'];
const TIMED_KEYS = [...COMMON_KEYS, 'timeout', 'fail_fast'];
const TRIGGER_KEYS: Record<TriggerSpec['type'], readonly string[]> = {
  echo: COMMON_KEYS,
  log: [...COMMON_KEYS, 'path'],
  command: [...TIMED_KEYS, 'command', 'env', 'working_dir'],
  webhook: [...TIMED_KEYS, 'url', 'method', 'headers', 'body_template'],
  post: [...TIMED_KEYS, 'url', 'headers'],
  teams: [...TIMED_KEYS, 'url', 'title_template'],
};
/** The aviso client's default card title. */
export const DEFAULT_TEAMS_TITLE = 'aviso {{ notification.event_type }} #{{ notification.sequence }}';
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const HTTP_TIMEOUT_MS = 30_000;

export type Obj = Record<string, unknown>;

export function isObject(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function fail(where: string, message: string): never {
  throw new UsageError(`${where}: ${message}`);
}

function checkKeys(value: Obj, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) fail(where, `unknown key "${key}" (allowed: ${allowed.join(', ')})`);
  }
}

function str(value: unknown, where: string, key: string): string {
  if (typeof value !== 'string' || value === '') fail(where, `"${key}" must be a non-empty string`);
  return value;
}

function optStr(value: unknown, where: string, key: string): string | undefined {
  return value === undefined ? undefined : str(value, where, key);
}

function bool(value: unknown, fallback: boolean, where: string, key: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') fail(where, `"${key}" must be true or false`);
  return value;
}

function stringMap(value: unknown, where: string, key: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value)) fail(where, `"${key}" must be a mapping of names to strings`);
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      fail(where, `"${key}.${name}" must be a string`);
    }
    out[name] = String(v);
  }
  return out;
}

function parseTrigger(raw: unknown, where: string): TriggerSpec {
  if (!isObject(raw)) fail(where, 'a trigger must be a mapping with a "type"');
  const type = raw.type;
  if (typeof type !== 'string' || !Object.hasOwn(TRIGGER_KEYS, type)) {
    fail(where, `"type" must be one of ${Object.keys(TRIGGER_KEYS).join(', ')}`);
  }
  const kind = type as TriggerSpec['type'];
  checkKeys(raw, TRIGGER_KEYS[kind], `${where} (${kind})`);
  const retries = raw.retries ?? 0;
  if (typeof retries !== 'number' || !Number.isInteger(retries) || retries < 0) {
    fail(where, '"retries" must be a non-negative integer');
  }
  const common = { retries, required: bool(raw.required, true, where, 'required') };
  if (kind === 'echo') return { type: kind, ...common };
  if (kind === 'log') return { type: kind, ...common, path: str(raw.path, where, 'path') };
  const timed = (defaultTimeout: number | undefined): TimedCommon => ({
    ...common,
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a YAML number or string; parseDuration refuses any other text and quotes it
    timeoutMs: raw.timeout === undefined ? defaultTimeout : parseDuration(String(raw.timeout), `${where}: "timeout"`),
    failFast: bool(raw.fail_fast, true, where, 'fail_fast'),
  });
  if (kind === 'command') {
    return {
      type: kind,
      ...timed(undefined),
      command: str(raw.command, where, 'command'),
      env: stringMap(raw.env, where, 'env'),
      workingDir: optStr(raw.working_dir, where, 'working_dir'),
    };
  }
  const url = str(raw.url, where, 'url');
  if (kind === 'teams')
    return {
      type: kind,
      ...timed(HTTP_TIMEOUT_MS),
      url,
      titleTemplate: optStr(raw.title_template, where, 'title_template') ?? DEFAULT_TEAMS_TITLE,
    };
  const headers = stringMap(raw.headers, where, 'headers');
  if (kind === 'post') return { type: kind, ...timed(HTTP_TIMEOUT_MS), url, headers };
  const method = raw.method ?? 'POST';
  if (!METHODS.includes(method as (typeof METHODS)[number])) fail(where, `"method" must be one of ${METHODS.join(', ')}`);
  return {
    type: kind,
    ...timed(HTTP_TIMEOUT_MS),
    url,
    method: method as (typeof METHODS)[number],
    headers,
    bodyTemplate: optStr(raw.body_template, where, 'body_template'),
  };
}

export function parseListener(raw: unknown, where: string): ListenerSpec {
  if (!isObject(raw)) fail(where, 'a listener must be a mapping');
  checkKeys(raw, LISTENER_KEYS, where);
  const event = str(raw.event, where, 'event');
  const identifiers = raw.identifiers ?? {};
  if (!isObject(identifiers)) fail(where, '"identifiers" must be a mapping');
  const triggers = raw.triggers ?? [];
  if (!Array.isArray(triggers)) fail(where, '"triggers" must be a list');
  if (raw.from_id !== undefined && raw.from_date !== undefined) fail(where, '"from_id" and "from_date" are mutually exclusive');
  const fromId = raw.from_id;
  if (fromId !== undefined && (typeof fromId !== 'number' || !Number.isSafeInteger(fromId) || fromId < 0)) {
    fail(where, '"from_id" must be a non-negative integer');
  }
  // YAML turns an unquoted timestamp into a Date; the field is sent verbatim, so keep text.
  const fromDate = raw.from_date instanceof Date ? raw.from_date.toISOString() : optStr(raw.from_date, where, 'from_date');
  return {
    name: optStr(raw.name, where, 'name'),
    event,
    identifiers,
    triggers: triggers.map((t, i) => parseTrigger(t, `${where}, trigger ${i + 1}`)),
    fromId,
    fromDate,
  };
}

/** The `listeners:` list of a parsed document (a listener file or the config file). */
export function parseListenerList(value: unknown, where: string): ListenerSpec[] {
  if (!Array.isArray(value)) fail(where, '"listeners" must be a list');
  return value.map((l, i) => parseListener(l, `${where}, listener ${i + 1}`));
}

/** A listener file: exactly one top-level key, `listeners:`. */
export function parseListenerFile(text: string, file: string): ListenerSpec[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    fail(file, `not valid YAML: ${(error as Error).message}`);
  }
  if (!isObject(doc)) fail(file, 'expected a mapping with a "listeners:" list');
  checkKeys(doc, ['listeners'], file);
  if (doc.listeners === undefined) fail(file, 'missing "listeners:"');
  return parseListenerList(doc.listeners, file);
}

export async function loadListenerFiles(files: readonly string[]): Promise<ListenerSpec[]> {
  const all: ListenerSpec[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read listener file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    all.push(...parseListenerFile(text, file));
  }
  return all;
}
