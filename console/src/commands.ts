import type { Operation, RequestBody } from './request-body.js';

/**
 * The `curl` and `aviso` commands equivalent to what the console sends (docs/console.md). Pure:
 * no DOM. The token is never written out: the commands read it from `$AVISO_TOKEN`, the
 * variable the `aviso` CLI reads too (docs/cli.md), so a screenshot or a copied command does not
 * leak it.
 */

export interface CommandTarget {
  /** The server's origin, e.g. `http://localhost:8000`. */
  readonly baseUrl: string;
  readonly operation: Operation;
  readonly body: RequestBody;
  /** Whether the console sends `Authorization: Bearer …`. */
  readonly withToken: boolean;
}

const TOKEN_HEADER = '"Authorization: Bearer $AVISO_TOKEN"';
const TOKEN_FLAG = '--token "$AVISO_TOKEN"';

const PATHS: Record<Operation, string> = {
  notify: '/api/v1/notification',
  watch: '/api/v1/watch',
  replay: '/api/v1/replay',
};

/** POSIX shell quoting: bare when only safe characters, else single quotes (`'` as `'\''`). */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export function apiUrl(baseUrl: string, operation: Operation): string {
  return `${baseUrl.replace(/\/+$/, '')}${PATHS[operation]}`;
}

/** `curl` sending exactly the console's request; `-N` for streams, so frames print as they come. */
export function curlCommand(target: CommandTarget): string {
  const words = ['curl'];
  if (target.operation !== 'notify') words.push('-N');
  words.push('-X', 'POST', shellQuote(apiUrl(target.baseUrl, target.operation)));
  words.push('-H', shellQuote('Content-Type: application/json'));
  if (target.withToken) words.push('-H', TOKEN_HEADER);
  words.push('-d', shellQuote(JSON.stringify(target.body)));
  return words.join(' ');
}

/**
 * The `aviso` command of docs/cli.md doing the same: `notify` with `event=`, one `--identifier`
 * per field and `data=`; `listen` / `replay` with `--event` and `--identifiers`. The CLI's
 * `--from N` starts *after* N, so `from_id` n is `--from n-1` (`from_id` 0 and 1 both read
 * from the first notification, `--from 0`); `--until` is inclusive like `to_id` / `to_date`.
 */
export function avisoCommand(target: CommandTarget): string {
  const words = ['aviso', '--base-url', shellQuote(target.baseUrl.replace(/\/+$/, ''))];
  if (target.withToken) words.push(TOKEN_FLAG);
  const body = target.body;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- event_type is a string in any body the server accepts; for another, the command only has to show something
  const eventType = String(body.event_type ?? '');
  const identifier = (body.identifier ?? {}) as Record<string, unknown>;
  if (target.operation === 'notify') {
    words.push('notify', shellQuote(`event=${eventType}`));
    for (const [key, value] of Object.entries(identifier)) {
      words.push('--identifier', shellQuote(typeof value === 'string' ? `${key}=${value}` : `${key}:=${JSON.stringify(value)}`));
    }
    if (body.payload !== undefined) words.push(shellQuote(`data=${JSON.stringify(body.payload)}`));
    return words.join(' ');
  }
  words.push(target.operation === 'watch' ? 'listen' : 'replay');
  words.push('--event', shellQuote(eventType), '--identifiers', shellQuote(JSON.stringify(identifier)));
  const from = fromFlag(body);
  if (from !== undefined) words.push('--from', shellQuote(from));
  const until = typeof body.to_id === 'string' ? body.to_id : typeof body.to_date === 'string' ? body.to_date : undefined;
  if (target.operation === 'replay' && until !== undefined) words.push('--until', shellQuote(until));
  return words.join(' ');
}

function fromFlag(body: RequestBody): string | undefined {
  if (typeof body.from_date === 'string') return body.from_date;
  if (typeof body.from_id !== 'string') return undefined;
  // A sequence the CLI can count back from; anything else is passed on for the CLI to refuse.
  if (!/^\d+$/.test(body.from_id)) return body.from_id;
  const first = BigInt(body.from_id);
  return (first > 0n ? first - 1n : 0n).toString();
}
