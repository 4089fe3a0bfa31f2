import type { Batch, FetchRequest, HistoryLoss, ReplayCursor, ReplayRequest, StoredNotification } from '../backend.js';
import { RemovedEntry, type SequenceLog } from './sequence-log.js';

interface PendingLoss {
  first: number;
  last: number;
  count: number;
}

/**
 * One batch of a base's history for a pattern, with the losses of the pattern's topics in the
 * range it examined (D42): each run of recorded removals of those topics that no held
 * notification of them separates is one loss, with its exact count; and, once per cursor
 * (`reportForgotten`), the range of forgotten removals the request's start reaches, whose topics
 * are no longer known.
 */
export function scanHistory(log: SequenceLog, request: FetchRequest, reportForgotten: boolean): Batch {
  const { pattern, start, limit, upperBound } = request;
  const startSequence = start.kind === 'sequence' ? Math.max(start.sequence, 1) : undefined;
  const from = startSequence !== undefined ? log.indexOfSequence(startSequence) : log.indexOfTimestamp((start as { atNs: bigint }).atNs);
  const losses: HistoryLoss[] = [];
  if (reportForgotten) {
    const forgotten = forgottenLoss(log, request, startSequence);
    if (forgotten) losses.push(forgotten);
  }
  const messages: StoredNotification[] = [];
  let pending: PendingLoss | undefined;
  let exhausted = true;
  let lastExamined = startSequence !== undefined ? startSequence - 1 : 0;
  for (const entry of log.from(from)) {
    if (entry.sequence > upperBound) break;
    if (entry instanceof RemovedEntry) {
      lastExamined = entry.sequence;
      if (pattern.matches(entry.topic)) {
        if (pending) {
          pending.last = entry.sequence;
          pending.count++;
        } else {
          pending = { first: entry.sequence, last: entry.sequence, count: 1 };
        }
      }
      continue;
    }
    if (messages.length === limit) {
      exhausted = false;
      break;
    }
    lastExamined = entry.sequence;
    if (!pattern.matches(entry.topic)) continue;
    if (pending) {
      losses.push(pending);
      pending = undefined;
    }
    messages.push(entry);
  }
  // A batch cut short is read again from its last message on: a run after it is found then.
  if (exhausted && pending) losses.push(pending);
  const last = messages.at(-1);
  const nextSequence = exhausted ? Math.max(lastExamined, upperBound) + 1 : (last as StoredNotification).sequence + 1;
  return losses.length > 0 ? { messages, nextSequence, exhausted, losses } : { messages, nextSequence, exhausted };
}

/**
 * The forgotten removals a request reaches: from its start sequence up to `forgottenThrough`;
 * for a date start, when a forgotten removal was stored at or after the date, from the first
 * sequence, since where the date falls among them is no longer known.
 */
function forgottenLoss(log: SequenceLog, request: FetchRequest, startSequence: number | undefined): HistoryLoss | undefined {
  const through = Math.min(log.forgottenThrough, request.upperBound);
  if (through < 1) return undefined;
  if (startSequence !== undefined) {
    return startSequence <= through ? { first: startSequence, last: through, topicsUnknown: true } : undefined;
  }
  const atNs = (request.start as { atNs: bigint }).atNs;
  return atNs <= log.forgottenThroughNs ? { first: 1, last: through, topicsUnknown: true } : undefined;
}

/** A replay over a base's history: batches of `scanHistory`, the forgotten range reported once. */
export function historyCursor(log: () => SequenceLog, request: ReplayRequest): ReplayCursor {
  let start = request.start;
  let first = true;
  return {
    async next(limit) {
      const batch = scanHistory(log(), { pattern: request.pattern, start, limit, upperBound: request.upperBound }, first);
      first = false;
      start = { kind: 'sequence', sequence: batch.nextSequence };
      return batch;
    },
    close: () => undefined,
  };
}
