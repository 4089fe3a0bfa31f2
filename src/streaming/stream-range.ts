import type { NotificationBackend, StartCursor } from '../backend/backend.js';
import type { TopicPattern } from '../topic/topic-pattern.js';

/**
 * Where a watch or replay stream starts (docs/streaming.md "Where to start").
 *
 * `requested` is the `from_id` exactly as parsed (a u64, echoed as `from_sequence`); `sequence`
 * is the same value clamped to `Number.MAX_SAFE_INTEGER`, which is beyond every stored sequence
 * anyway. `atNs` is the `from_date` instant in nanoseconds since the Unix epoch (UTC).
 */
export type StartCursorRequest =
  { kind: 'live' } | { kind: 'sequence'; sequence: number; requested: bigint } | { kind: 'date'; atNs: bigint };

/**
 * Where a replay ends (docs/streaming.md "Where a replay ends (decision D25)"): `to_id` is an
 * inclusive sequence, `to_date` an inclusive instant, both read exactly like their `from_` twins.
 * `latest` (no end point) ends at H, as every replay did before. `requested` is the `to_id` as
 * parsed, `sequence` the same clamped to `Number.MAX_SAFE_INTEGER` (beyond every stored sequence).
 */
export type ReplayEndRequest =
  | { readonly kind: 'latest' }
  | { readonly kind: 'sequence'; readonly sequence: number; readonly requested: bigint }
  | { readonly kind: 'date'; readonly atNs: bigint };

export const LATEST: ReplayEndRequest = { kind: 'latest' };

/**
 * The last sequence a replay reads, resolved once at setup together with H (D25):
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
