import type { HistoryLoss, ReplayCursor, StoredNotification } from '../backend/backend.js';
import type { NotificationPredicate } from '../filter/watch-filter.js';
import { CloudEventRenderError, type CloudEventRenderer, type FrameStyle } from './cloudevent.js';
import type { SseConnection } from './sse-connection.js';

/** What the batches need of their stream session; every answer `false` means the stream ended. */
export interface ReplayBatchHost {
  isClosed(): boolean;
  /** Queues rendered replay frames together (few writes, sse-connection.ts); `lastSequence` is the last frame's. */
  sendFrames(frames: readonly Buffer[], lastSequence: number): boolean;
  /** Emits the non-fatal error frame for a notification that cannot be rendered; the replay goes on and the notification uses no quota. */
  sendRenderFailure(notification: StoredNotification, error: CloudEventRenderError): boolean;
  /** Ends the stream with `notification_replay_limit_reached`, then `end_of_stream`: no `replay_completed`, no live phase. */
  closeAtLimit(): void;
  /** Says a history gap: history of the request that the store no longer holds. */
  sendGap(gap: HistoryLoss): boolean;
  /** A backend failure: the `error` frame, then `end_of_stream`; no `replay_completed`, no live phase. */
  fail(error: unknown): void;
  /** Waits between batches; ends early when the stream does. */
  sleep(ms: number): Promise<void>;
}

export interface ReplayBatchOptions {
  readonly connection: SseConnection;
  readonly renderer: CloudEventRenderer;
  readonly predicate: NotificationPredicate;
  /** Q, the most notifications one replay delivers: the schema's `max_historical_notifications`, else the global one. */
  readonly quota: number;
  readonly style: FrameStyle;
  readonly batchSize: number;
  readonly batchDelayMs: number;
  readonly maxBufferedEvents: number;
  readonly maxBufferedBytes: number;
}

/**
 * How many of the next frames fit under the replay's share of both bounds; at least one, which a
 * stream holding nothing always takes.
 */
function room(frames: readonly Buffer[], connection: SseConnection, queueLimit: number, byteLimit: number): number {
  const frameRoom = Math.max(1, queueLimit - connection.queuedFrames);
  let bytes = connection.heldBytes;
  let count = 0;
  for (const frame of frames) {
    if (count >= frameRoom || (count > 0 && bytes + frame.length > byteLimit)) break;
    bytes += frame.length;
    count++;
  }
  return count;
}

/**
 * The history in batches, at most Q notifications: once Q are delivered the scan goes on for one
 * more deliverable notification, which proves the history was cut and ends the stream with the
 * limit frame instead of `replay_completed`. True when history was exhausted, false when the
 * stream ended on the way (limit, failure, client gone).
 */
export async function deliverHistory(history: ReplayCursor, options: ReplayBatchOptions, host: ReplayBatchHost): Promise<boolean> {
  const { connection, renderer, predicate, quota, style } = options;
  const replayQueueLimit = Math.max(1, Math.floor(options.maxBufferedEvents / 2));
  const replayByteLimit = Math.max(1, Math.floor(options.maxBufferedBytes / 2));
  const unshared = history.unshared === true;
  /** The frame of a notification the request selects, `undefined` if it does not, or why it cannot be rendered. */
  const select = (notification: StoredNotification): Buffer | CloudEventRenderError | undefined => {
    if (!predicate(notification)) return undefined;
    try {
      return unshared ? renderer.unsharedFrameBytes(notification, 'replay', style) : renderer.frameBytes(notification, 'replay', style);
    } catch (error) {
      if (!(error instanceof CloudEventRenderError)) throw error;
      return error;
    }
  };
  let delivered = 0;
  const gaps = new PendingGaps();
  for (;;) {
    let batch;
    try {
      batch = await history.next(options.batchSize);
    } catch (error) {
      host.fail(error);
      return false;
    }
    if (host.isClosed()) return false;

    gaps.add(batch.losses);
    // A batch's frames go to the connection together, written in few writes (sse-connection.ts).
    const frames: Buffer[] = [];
    /** The notification sequence of each frame of `frames`, for the admin list's `last_sequence`. */
    const sequences: number[] = [];
    const flush = async (): Promise<boolean> => {
      while (frames.length > 0) {
        // Replay leaves half of each bound free (frames and bytes), so heartbeats and the frames a
        // batch adds never push a merely busy stream over into a slow-consumer close.
        if (connection.queuedFrames >= replayQueueLimit || connection.heldBytes >= replayByteLimit) {
          await connection.below(replayQueueLimit, replayByteLimit);
        }
        if (host.isClosed()) return false;
        const count = room(frames, connection, replayQueueLimit, replayByteLimit);
        const sent = sequences.splice(0, count);
        if (!host.sendFrames(frames.splice(0, count), sent[sent.length - 1] as number)) return false;
      }
      return true;
    };
    for (const notification of batch.messages) {
      // Messages read for this stream alone are matched and rendered without caching (cloudevent.ts).
      const bytes = unshared ? renderer.unshared(select, notification) : select(notification);
      if (bytes === undefined) continue;
      if (bytes instanceof CloudEventRenderError) {
        if (!(await flush())) return false;
        host.sendRenderFailure(notification, bytes);
        continue;
      }
      if (delivered === quota) {
        // The lookahead found one more deliverable notification: the history was cut, and it is not sent.
        if (!(await flush())) return false;
        const before = gaps.takeAll();
        if (before && !host.sendGap(before)) return false;
        host.closeAtLimit();
        return false;
      }
      // A gap is said before the first notification after it.
      const gap = gaps.takeBelow(notification.sequence);
      if (gap) {
        if (!(await flush())) return false;
        if (!host.sendGap(gap)) return false;
      }
      frames.push(bytes);
      sequences.push(notification.sequence);
      delivered++;
    }
    if (!(await flush())) return false;
    if (batch.exhausted) {
      const last = gaps.takeAll();
      return !last || host.sendGap(last);
    }
    // The next batch is fetched only once this one reached the socket: a slow client slows the reads, not memory.
    await connection.drained();
    if (host.isClosed()) return false;
    if (options.batchDelayMs > 0) await host.sleep(options.batchDelayMs);
    if (host.isClosed()) return false;
  }
}

/**
 * Losses read but not yet said. Those below the next delivered notification are said together,
 * as one gap, just before it: notifications the request's filter skipped do not split a gap.
 */
class PendingGaps {
  private losses: HistoryLoss[] = [];

  add(losses: readonly HistoryLoss[] | undefined): void {
    if (losses && losses.length > 0) this.losses.push(...losses);
  }

  /** The losses wholly below `sequence`, merged; the rest wait. */
  takeBelow(sequence: number): HistoryLoss | undefined {
    if (this.losses.length === 0) return undefined;
    const below = this.losses.filter((loss) => loss.last < sequence);
    if (below.length === 0) return undefined;
    this.losses = this.losses.filter((loss) => loss.last >= sequence);
    return mergeLosses(below);
  }

  takeAll(): HistoryLoss | undefined {
    const all = this.losses;
    this.losses = [];
    return all.length === 0 ? undefined : mergeLosses(all);
  }
}

/** One loss covering them all; its count only when every part's was known. */
function mergeLosses(losses: readonly HistoryLoss[]): HistoryLoss {
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  let count: number | undefined = 0;
  let topicsUnknown = false;
  for (const loss of losses) {
    first = Math.min(first, loss.first);
    last = Math.max(last, loss.last);
    count = count === undefined || loss.count === undefined ? undefined : count + loss.count;
    if (loss.topicsUnknown) topicsUnknown = true;
  }
  return { first, last, ...(count === undefined ? {} : { count }), ...(topicsUnknown ? { topicsUnknown: true as const } : {}) };
}
