import type { NotificationBackend, StartCursor } from '../backend/backend.js';
import type { TopicPattern } from '../topic/topic-pattern.js';
import {
  StartCursorError,
  clampSequence,
  formatRfc3339Utc,
  parseDateField,
  parseSequenceField,
  type StartCursorRequest,
} from './start-cursor.js';

/**
 * Where a replay ends (reference-0.13.md §1, D25): `to_id` is an inclusive sequence, `to_date` an
 * inclusive instant, both read exactly like their `from_` twins. `latest` (no end point) ends at H,
 * as every replay did before. `requested` is the `to_id` as parsed, `sequence` the same clamped to
 * `Number.MAX_SAFE_INTEGER` (beyond every stored sequence).
 */
export type ReplayEndRequest =
  | { readonly kind: 'latest' }
  | { readonly kind: 'sequence'; readonly sequence: number; readonly requested: bigint }
  | { readonly kind: 'date'; readonly atNs: bigint };

export const LATEST: ReplayEndRequest = { kind: 'latest' };

const BOTH_ENDS =
  'Cannot specify both to_id and to_date. Please provide only one replay end parameter. Use to_id for a sequence-based end or to_date for a time-based end.';

/** The refusal of an end point by `/watch` and `/notification`. */
export function endPointNotSupported(path: '/watch' | '/notification'): string {
  return `to_id and to_date are only supported for the replay endpoint, not ${path}`;
}

export function hasEndPoint(body: { readonly to_id?: string; readonly to_date?: string }): boolean {
  return body.to_id !== undefined || body.to_date !== undefined;
}

/**
 * The reference's `validate_end_at`, run once the start cursor is valid: both fields parsed
 * (`to_id` first), then refused together, then an end of the start's own kind compared with it.
 * An end of the other kind is never compared: it may well select nothing, which is not an error.
 */
export function resolveEndPoint(
  start: StartCursorRequest,
  toId: string | undefined,
  toDate: string | undefined,
): ReplayEndRequest {
  const requested = toId === undefined ? undefined : parseSequenceField('to_id', toId);
  const atNs = toDate === undefined ? undefined : parseDateField('to_date', toDate);
  if (requested !== undefined && atNs !== undefined) throw new StartCursorError(BOTH_ENDS);
  if (requested !== undefined) {
    if (start.kind === 'sequence' && requested < start.requested) {
      throw new StartCursorError(`to_id (${requested}) must not be lower than from_id (${start.requested})`);
    }
    return { kind: 'sequence', sequence: clampSequence(requested), requested };
  }
  if (atNs !== undefined) {
    if (start.kind === 'date' && atNs < start.atNs) {
      throw new StartCursorError(
        `to_date (${formatRfc3339Utc(atNs)}) must not be earlier than from_date (${formatRfc3339Utc(start.atNs)})`,
      );
    }
    return { kind: 'date', atNs };
  }
  return LATEST;
}

/**
 * The last sequence a replay reads, resolved once at setup together with H (streaming.md §10):
 * H without an end point; `min(H, to_id)`; for `to_date`, one below the first topic-matching
 * notification stored strictly after it, or H when there is none up to H.
 *
 * The first notification after `to_date` is found through the backend contract with a date start
 * cursor, so each backend seeks by time as its replays do (JetStream: a consumer with
 * `opt_start_time`) instead of reading the stream from its start.
 */
export async function resolveReplayEnd(
  backend: NotificationBackend,
  pattern: TopicPattern,
  end: ReplayEndRequest,
  historyBound: number,
): Promise<number> {
  if (end.kind === 'latest') return historyBound;
  if (end.kind === 'sequence') return Math.min(historyBound, end.sequence);
  if (historyBound === 0) return 0;
  const after = firstInstantAfter(end.atNs);
  const cursor = await backend.openReplay({ pattern, start: after, upperBound: historyBound });
  try {
    for (;;) {
      const batch = await cursor.next(1);
      const first = batch.messages[0];
      if (first) return Math.min(historyBound, first.sequence - 1);
      if (batch.exhausted) return historyBound;
    }
  } finally {
    cursor.close();
  }
}

/**
 * "Strictly after `to_date`" as an inclusive start cursor. Storage times are never before the
 * epoch, so an end before it means "from the first notification": a sequence cursor, which keeps
 * dates far outside the nanosecond range (the year 1500) away from the backends.
 */
function firstInstantAfter(atNs: bigint): StartCursor {
  const after = atNs + 1n;
  return after <= 0n ? { kind: 'sequence', sequence: 0 } : { kind: 'date', atNs: after };
}
