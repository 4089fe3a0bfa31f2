import type { ReplayCursor, StartCursor } from '../backend/backend.js';
import type { HistoryLoss } from '../backend/backend.js';
import {
  historyGap,
  replayCompleted,
  replayLimitReached,
  streamProcessingFailed,
  type CloseReason,
  type Frame,
  type StreamIdentity,
} from './frames.js';
import { deliverHistory, type ReplayBatchHost, type ReplayBatchOptions } from './replay-batches.js';
import type { StartCursorRequest } from './stream-range.js';
import type { StreamOutput } from './stream-output.js';
import type { StreamDependencies } from './stream-dependencies.js';
import type { StreamRequest } from './stream-request.js';

/** A replay's start: a sequence or a date. */
export type ReplayStart = Exclude<StartCursorRequest, { kind: 'live' }>;

/** What the replay phase needs of its stream session. */
export interface ReplayPhaseContext extends StreamDependencies {
  readonly request: StreamRequest;
  readonly identity: StreamIdentity;
  readonly output: StreamOutput;
  /** The last sequence the replay reads: H, or the resolved end point (D25). */
  readonly replayEnd: number;
  isClosed(): boolean;
  close(reason: CloseReason, finalFrames: readonly Frame[]): void;
  /** The history is delivered: a watch goes on with its live phase. */
  enterLive(): void;
}

/**
 * A replay phase: history up to its end in batches, with the lookahead that proves a truncation
 * and the bound H (docs/streaming.md "History limits"); then a replay completes, a watch goes live.
 */
export async function runReplay(context: ReplayPhaseContext, cursor: ReplayStart): Promise<void> {
  const { request, output, identity, clock } = context;
  const start: StartCursor = cursor.kind === 'sequence' ? { kind: 'sequence', sequence: cursor.sequence } : cursor;
  let history: ReplayCursor;
  try {
    history = await context.backend.openReplay({
      pattern: request.selection.pattern,
      start,
      upperBound: context.replayEnd,
    });
  } catch (error) {
    failReplay(context, error);
    return;
  }
  try {
    if (!(await deliverHistory(history, replayOptions(context), replayHost(context)))) return;
  } finally {
    history.close();
  }
  if (request.endpoint === 'replay') {
    // A GET replay's reconnect then names its end and is answered 204 (streaming.md, "Browsers").
    if (!output.markPosition(completedReplayPosition(cursor, context.replayEnd))) return;
    context.close('end_of_stream', [replayCompleted(identity, clock.now())]);
    return;
  }
  if (!output.send(replayCompleted(identity, clock.now()))) return;
  context.enterLive();
}

/**
 * Everything a completed replay was asked for up to here was delivered: its end, or just below
 * its `from_id` when that lies past the end.
 */
function completedReplayPosition(cursor: ReplayStart, replayEnd: number): bigint {
  const end = BigInt(replayEnd);
  return cursor.kind === 'sequence' && cursor.requested - 1n > end ? cursor.requested - 1n : end;
}

function replayOptions(context: ReplayPhaseContext): ReplayBatchOptions {
  const { renderer, settings, request, output } = context;
  return {
    connection: output.connection,
    renderer,
    predicate: request.predicate,
    quota: request.quota,
    style: output.style,
    batchSize: settings.replayBatchSize,
    batchDelayMs: settings.replayBatchDelayMs,
    maxBufferedEvents: settings.maxBufferedEvents,
    maxBufferedBytes: settings.maxBufferedBytes,
  };
}

function replayHost(context: ReplayPhaseContext): ReplayBatchHost {
  const { output, identity, clock, request } = context;
  return {
    isClosed: () => context.isClosed(),
    sendFrames: (frames, lastSequence) => output.sendReplayFrames(frames, lastSequence),
    sendRenderFailure: (notification, error) => output.sendRenderFailure(notification, error),
    closeAtLimit: () => context.close('end_of_stream', [replayLimitReached(identity, clock.now(), request.quota)]),
    sendGap: (loss) => sendGap(context, loss),
    fail: (error) => failReplay(context, error),
    sleep: (ms) => sleep(context, ms),
  };
}

/** D42: the gap frame, a log line and a count. */
function sendGap(context: ReplayPhaseContext, loss: HistoryLoss): boolean {
  const { output, identity, clock, request, logger } = context;
  const scope = loss.topicsUnknown ? 'stream' : 'request';
  logger.info(
    {
      event_name: 'stream.history.gap',
      endpoint: request.endpoint,
      topic: identity.topic,
      first_sequence: loss.first,
      last_sequence: loss.last,
      lost: loss.count ?? null,
      scope,
    },
    'History gap in the replayed range',
  );
  request.telemetry.historyGap(scope);
  return output.send(
    historyGap(identity, clock.now(), {
      first: loss.first,
      last: loss.last,
      scope,
      ...(loss.count === undefined ? {} : { count: loss.count }),
    }),
  );
}

/** A backend failure during replay: the `error` frame, then `end_of_stream` (D23). */
function failReplay(context: ReplayPhaseContext, error: unknown): void {
  if (context.isClosed()) return;
  const message = error instanceof Error ? error.message : String(error);
  context.logger.error({ event_name: 'stream.replay.fetch.failed', error: message }, 'Replay batch failed');
  context.close('end_of_stream', [streamProcessingFailed(context.identity, message)]);
}

/** Waits between replay batches; ends early when the stream does. */
function sleep(context: ReplayPhaseContext, ms: number): Promise<void> {
  const { connection } = context.output;
  return new Promise((resolve) => {
    const wake = (): void => {
      timer.cancel();
      forget();
      resolve();
    };
    const timer = context.clock.setTimeout(wake, ms);
    const forget = connection.onOver(wake);
  });
}
