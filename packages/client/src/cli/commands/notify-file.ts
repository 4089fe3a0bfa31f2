import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import type { NotifyFailed } from '../../index.js';
import { EXIT_OK, EXIT_RUNTIME, UsageError } from '../errors.js';
import { parseNotificationLines, type NotificationLine } from '../notification-lines.js';
import { createClient, type CommandContext } from './common.js';
import { printAccepted } from './simple.js';

/** What `aviso notify --file` was given besides the file; the single form's inputs are refused with it. */
export interface NotifyFileFlags {
  readonly parameters: readonly string[];
  readonly identifiers: readonly string[];
  readonly idempotencyKey?: string;
  readonly retry: boolean;
}

async function readInput(path: string): Promise<{ text: string; source: string }> {
  if (path === '-') return { text: await text(process.stdin), source: 'standard input' };
  try {
    return { text: await readFile(path, 'utf8'), source: path };
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

function checkFlags(flags: NotifyFileFlags): void {
  if (flags.parameters.length > 0 || flags.identifiers.length > 0) {
    throw new UsageError('--file takes every notification from the file: give no PARAMETERS or --identifier with it');
  }
  if (flags.idempotencyKey !== undefined) {
    throw new UsageError('--idempotency-key names one notification; with --file every batch is sent under a key of its own');
  }
}

function lineRange(first: number, last: number): string {
  return first === last ? `line ${first}` : `lines ${first} to ${last}`;
}

function details(failure: NotifyFailed): string {
  const parts = [failure.code, failure.requestId === undefined ? undefined : `request id ${failure.requestId}`].filter(
    (p): p is string => p !== undefined,
  );
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/**
 * One stderr line per refused notification, naming its input line and the server's message; a
 * run of notifications that failed together (their batch, or not sent after it) is one line
 * naming the range, so a failed batch of 1,000 does not repeat one message 1,000 times.
 */
export function failureReports(failures: readonly NotifyFailed[], lines: readonly NotificationLine[]): string[] {
  const reports: string[] = [];
  const lineOf = (failure: NotifyFailed): number => (lines[failure.index] as NotificationLine).line;
  let i = 0;
  while (i < failures.length) {
    const first = failures[i] as NotifyFailed;
    let end = i + 1;
    const together = (next: NotifyFailed | undefined, previous: NotifyFailed): boolean =>
      next !== undefined && next.reason === first.reason && next.message === first.message && next.index === previous.index + 1;
    if (first.reason !== 'refused') while (together(failures[end], failures[end - 1] as NotifyFailed)) end += 1;
    const last = failures[end - 1] as NotifyFailed;
    const maybeStored = first.reason === 'unanswered' ? `; the server may have stored ${first === last ? 'it' : 'them'}` : '';
    reports.push(`${lineRange(lineOf(first), lineOf(last))}: ${first.message}${details(first)}${maybeStored}`);
    i = end;
  }
  return reports;
}

/**
 * `aviso notify --file PATH|-`: the NDJSON notifications of a file or standard input, sent in
 * batches (docs/cli.md "Many notifications from a file"). Prints the single form's confirmation
 * for each stored notification, in input order; names every failed one on stderr and exits 1
 * when any failed.
 */
export async function notifyFileCommand(ctx: CommandContext, path: string, flags: NotifyFileFlags): Promise<number> {
  checkFlags(flags);
  const input = await readInput(path);
  const lines = parseNotificationLines(input.text, input.source);
  const client = createClient(ctx);
  const outcomes = await client.notifyMany(
    lines.map((l) => l.item),
    { signal: ctx.signal, retry: flags.retry },
  );
  const failures: NotifyFailed[] = [];
  for (const outcome of outcomes) {
    if (outcome.stored) await printAccepted(ctx, (lines[outcome.index] as NotificationLine).item.eventType, outcome);
    else failures.push(outcome);
  }
  if (failures.length === 0) return EXIT_OK;
  for (const report of failureReports(failures, lines)) ctx.output.error(report);
  ctx.output.error(`${failures.length} of ${outcomes.length} notifications failed`);
  return EXIT_RUNTIME;
}
