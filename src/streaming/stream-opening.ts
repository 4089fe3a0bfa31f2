import type { Logger } from 'pino';
import type { NotificationBackend } from '../backend/backend.js';
import { formatFromDateEcho } from '../time/time-format.js';
import { connectionEstablished, replayStarted, sequenceReset, type Frame, type StreamIdentity } from './frames.js';
import type { ReplayStart } from './replay-phase.js';
import type { StreamRequest, StreamSettings } from './stream-request.js';

/** A start beyond the stream's end (D41): the sequence the client asked for and the stream's last one. */
export interface SequenceReset {
  readonly requested: bigint;
  readonly lastSequence: number;
}

/** Where a stream whose numbering was reset under its client starts again (D41). */
export const FROM_FIRST_SEQUENCE: ReplayStart = { kind: 'sequence', sequence: 1, requested: 1n };

/**
 * A start beyond the stream's last sequence + 1 means its numbering was reset under the client
 * (D41). A watch's H is what its live feed delivered last, which can trail the store, so the
 * store's own last sequence decides.
 */
export async function findSequenceReset(
  backend: NotificationBackend,
  request: StreamRequest,
  historyBound: number,
): Promise<SequenceReset | undefined> {
  const { cursor, endpoint, selection } = request;
  if (cursor.kind !== 'sequence' || cursor.requested <= BigInt(historyBound) + 1n) return undefined;
  const last = endpoint === 'watch' ? await backend.captureHistoryBound(selection.pattern) : historyBound;
  if (cursor.requested <= BigInt(last) + 1n) return undefined;
  return { requested: cursor.requested, lastSequence: last };
}

/**
 * The frame a stream opens with: `connection_established` for a watch from now on, otherwise
 * `replay_started` with what the request asked for echoed and the replay's resolved end.
 */
export function openingFrame(
  request: StreamRequest,
  identity: StreamIdentity,
  nowMs: number,
  settings: StreamSettings,
  replayEnd: number,
): Frame {
  const { cursor, end } = request;
  if (cursor.kind === 'live') return connectionEstablished(identity, nowMs, settings.connectionMaxDurationSec, request.schemaVersion);
  return replayStarted(identity, nowMs, {
    batchSize: settings.replayBatchSize,
    fromSequence: cursor.kind === 'sequence' ? cursor.requested : null,
    fromDate: cursor.kind === 'date' ? formatFromDateEcho(cursor.atNs) : null,
    endSequence: end.kind === 'latest' ? null : replayEnd,
    toDate: end.kind === 'date' ? formatFromDateEcho(end.atNs) : null,
    schemaVersion: request.schemaVersion,
  });
}

/** A numbering reset (D41), logged and counted: the frame that tells the client. */
export function announceSequenceReset(
  logger: Logger,
  request: StreamRequest,
  identity: StreamIdentity,
  nowMs: number,
  reset: SequenceReset,
): Frame {
  logger.warn(
    {
      event_name: 'stream.cursor.beyond_end',
      endpoint: request.endpoint,
      topic: identity.topic,
      requested_sequence: reset.requested.toString(),
      last_sequence: reset.lastSequence,
    },
    'Stream start beyond the last sequence: the numbering was reset, replaying from the first sequence',
  );
  request.telemetry.sequenceReset();
  return sequenceReset(identity, nowMs, reset);
}
