import { UsageError } from './errors.js';

/**
 * Small value syntaxes shared by flags and files: humantime durations, `--from`/`--until`
 * cursors, and `key=value` / `key:=JSON` identifier arguments.
 */

const UNIT_MS: Record<string, number> = {
  ms: 1,
  msec: 1,
  millis: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** humantime syntax (`30s`, `2m`, `1h30m`, `500ms`) as milliseconds. */
export function parseDuration(text: string, what: string): number {
  const trimmed = text.trim();
  const part = /(\d+(?:\.\d+)?)\s*([a-z]+)/gy;
  let total = 0;
  let matched = 0;
  for (let m = part.exec(trimmed); m; m = part.exec(trimmed)) {
    const unit = UNIT_MS[m[2] as string];
    if (unit === undefined) throw new UsageError(`${what}: unknown duration unit "${m[2]}" in "${text}"`);
    total += Number(m[1]) * unit;
    matched = part.lastIndex;
    while (trimmed[part.lastIndex] === ' ') part.lastIndex += 1;
  }
  if (matched === 0 || matched !== trimmed.length) {
    throw new UsageError(`${what}: "${text}" is not a duration (examples: 30s, 2m, 1h30m, 500ms)`);
  }
  return Math.round(total);
}

export type Cursor = { readonly kind: 'sequence'; readonly sequence: number } | { readonly kind: 'date'; readonly date: string };

const DATE_FORMS: readonly RegExp[] = [
  /^(\d{4}-\d{2}-\d{2})$/,
  /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2})$/,
  /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/,
  /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})$/,
  /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})Z$/,
  /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}\.\d{1,9})Z$/,
];

/**
 * A `--from`/`--until` value: pure digits are always a sequence (never a date), the dashed
 * forms are UTC dates, normalised to the RFC 3339 form every aviso server accepts.
 */
export function parseCursor(text: string, flag: string): Cursor {
  const value = text.trim();
  if (/^\d+$/.test(value)) {
    const sequence = Number(value);
    if (!Number.isSafeInteger(sequence)) throw new UsageError(`${flag}: sequence ${value} is too large`);
    return { kind: 'sequence', sequence };
  }
  for (const form of DATE_FORMS) {
    const m = form.exec(value);
    if (!m) continue;
    const time = m[2] === undefined ? '00:00:00' : m[2].length === 5 ? `${m[2]}:00` : m[2];
    const iso = `${m[1]}T${time}Z`;
    if (Number.isNaN(Date.parse(iso))) break;
    return { kind: 'date', date: iso };
  }
  throw new UsageError(
    `${flag}: "${text}" is neither a sequence id nor a date (use 42, 2026-05-01, "2026-05-01 14:30", 2026-05-01T14:30:00Z)`,
  );
}

/** One `--identifier` argument: `key=value` is an exact string, `key:=JSON` a typed value. */
export function parseIdentifierArg(arg: string): [string, unknown] {
  const eq = arg.indexOf('=');
  if (eq < 0) throw new UsageError(`--identifier "${arg}": expected key=value or key:=JSON`);
  const typed = eq > 0 && arg[eq - 1] === ':';
  const key = arg.slice(0, typed ? eq - 1 : eq).trim();
  if (!key) throw new UsageError(`--identifier "${arg}": the key is empty`);
  const raw = arg.slice(eq + 1);
  if (!typed) return [key, raw];
  try {
    return [key, JSON.parse(raw) as unknown];
  } catch {
    throw new UsageError(`--identifier ${key}: "${raw}" is not valid JSON`);
  }
}

/** Merges repeated `--identifier` arguments; a key given twice is a usage error. */
export function collectIdentifiers(args: readonly string[], into: Record<string, unknown> = {}): Record<string, unknown> {
  const result = { ...into };
  for (const arg of args) {
    const [key, value] = parseIdentifierArg(arg);
    if (Object.hasOwn(result, key)) throw new UsageError(`identifier "${key}" is given more than once`);
    result[key] = value;
  }
  return result;
}

/** Splits on commas outside double quotes and JSON brackets, so `data={"a":1,"b":2}` stays whole. */
function splitParameters(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  let depth = 0;
  let quoted = false;
  for (const c of text) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '{' || c === '[')) depth += 1;
    else if (!quoted && (c === '}' || c === ']')) depth -= 1;
    if (c === ',' && depth === 0 && !quoted) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

export interface NotifyParameters {
  readonly eventType: string;
  readonly identifier: Record<string, unknown>;
  readonly payload?: unknown;
}

function unquote(value: string): string | undefined {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : undefined;
}

/**
 * `aviso notify` positional parameters: each argument is a comma-separated `key=value` list;
 * `event=` names the type, `data=` is the JSON payload, `key:=JSON` a typed identifier, a bare
 * value starting with `[` or `{` is JSON, and double quotes keep a value as text.
 */
export function parseNotifyParameters(args: readonly string[], extraIdentifiers: readonly string[]): NotifyParameters {
  let eventType: string | undefined;
  let payload: unknown;
  let hasPayload = false;
  const identifier: Record<string, unknown> = {};
  for (const part of args.flatMap(splitParameters)) {
    const [key, rawValue] = parseIdentifierArg(part);
    const typed = part.slice(0, part.indexOf('=')).trimEnd().endsWith(':');
    if (key === 'event' && !typed) {
      if (eventType !== undefined) throw new UsageError('event= is given more than once');
      eventType = String(rawValue);
      continue;
    }
    if (key === 'data' && !typed) {
      if (hasPayload) throw new UsageError('data= is given more than once');
      try {
        payload = JSON.parse(String(rawValue)) as unknown;
      } catch {
        throw new UsageError('data= is not valid JSON');
      }
      hasPayload = true;
      continue;
    }
    if (Object.hasOwn(identifier, key)) throw new UsageError(`identifier "${key}" is given more than once`);
    identifier[key] = typed ? rawValue : bareValue(key, String(rawValue));
  }
  if (!eventType) throw new UsageError('event=<TYPE> is required (for example: aviso notify event=mars class=od)');
  for (const arg of extraIdentifiers) {
    const key = parseIdentifierArg(arg)[0];
    if (key === 'event' || key === 'data') {
      throw new UsageError(`--identifier ${key}=... is not allowed: pass ${key}= in the parameters`);
    }
  }
  const merged = collectIdentifiers(extraIdentifiers, identifier);
  return hasPayload ? { eventType, identifier: merged, payload } : { eventType, identifier: merged };
}

function bareValue(key: string, value: string): unknown {
  const text = unquote(value);
  if (text !== undefined) return text;
  if (value.startsWith('[') || value.startsWith('{')) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      throw new UsageError(`identifier ${key}: "${value}" looks like JSON but does not parse`);
    }
  }
  return value;
}
