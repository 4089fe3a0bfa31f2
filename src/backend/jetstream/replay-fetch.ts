import type { StreamInfo } from '@nats-io/jetstream';
import type { Batch, FetchRequest, HistoryLoss, ReplayCursor, ReplayRequest, StoredNotification } from '../backend.js';
import { readRfc3339 } from '../../time/instant-text.js';
import type { NatsClients } from './nats-link.js';
import { isMessageNotFound } from './nats-errors.js';
import type { PulledMessage } from './pull-no-wait.js';
import { ReplayConsumer, replayFilterSubject } from './replay-consumer.js';
import { PredecessorLosses, type KnownLosses } from './replay-losses.js';
import { firstSequenceStoredFrom, needsDateSearch } from './date-start.js';

/** Read-ahead per pull: up to this many messages… */
const READ_AHEAD_MESSAGES = 1_000;
/** …and, estimated from the sizes seen so far, about this many payload bytes held per replay. */
const READ_AHEAD_BYTES = 1_048_576;
/** Sequences probed below a date start's first notification for one still held (see `findDateBoundary`). */
const DATE_BOUNDARY_PROBES = 8;

/** No losses known: a cursor opened without them (a single `fetchBatch` of the contract tests' paging). */
const NO_KNOWN_LOSSES: KnownLosses = { losses: [], said: () => false };

/**
 * One replay's reads (docs/design/rules/backends.md §7.10): one named consumer from the start cursor on the coarse
 * subject, kept for the whole replay (creating a filtered consumer costs tens of milliseconds on a
 * large stream, so one per batch made replays crawl), read with `no_wait` pulls that return what is
 * stored now and never wait for new messages, and stopped at the first sequence above H. The
 * consumer's reported pending count is not used: NATS 2.9 can report it stale right after writes.
 */
export class JetStreamReplayCursor implements ReplayCursor {
  /** Every pull makes new message objects, seen only by this replay. */
  readonly unshared = true;
  private readonly consumer: ReplayConsumer;
  private nextSequence: number;
  private done = false;
  /**
   * Messages pulled but not yet handed out. Batches are pulled larger than `limit` (each pull is a
   * round trip to the server) and handed out `limit` at a time, so batching and backpressure stay
   * as the caller asks.
   */
  private ahead: PulledMessage[] = [];
  private aheadIndex = 0;
  /** Losses known at the start, said in the first batch (D42). */
  private initialLosses: HistoryLoss[];
  private readonly predecessors: PredecessorLosses;
  /** A date start's lowest sequence is known once its first notification was read. */
  private dateBoundaryPending: boolean;
  /** The last pull returned less than it asked for: nothing more was stored then. */
  private storeDrained = false;
  private pulledMessages = 0;
  private pulledBytes = 0;

  private constructor(
    private readonly clients: () => NatsClients,
    private readonly streamName: string,
    private readonly request: ReplayRequest,
    pullTimeoutMs: number,
    known: KnownLosses,
  ) {
    this.nextSequence = request.start.kind === 'sequence' ? Math.max(request.start.sequence, 1) : 1;
    this.consumer = new ReplayConsumer(clients, streamName, replayFilterSubject(request.pattern), pullTimeoutMs, this.nextSequence);
    this.initialLosses = known.losses;
    this.predecessors = new PredecessorLosses(this.nextSequence, known.said);
    this.dateBoundaryPending = request.start.kind === 'date';
  }

  /**
   * `known`: the losses of the range known before reading (replay-losses.ts); `info`: the stream's
   * info if the caller read it already.
   */
  static async open(
    clients: () => NatsClients,
    streamName: string,
    asked: ReplayRequest,
    pullTimeoutMs: number,
    known: KnownLosses = NO_KNOWN_LOSSES,
    info?: StreamInfo,
  ): Promise<JetStreamReplayCursor> {
    const request = fromEpochAtTheEarliest(asked);
    const cursor = new JetStreamReplayCursor(clients, streamName, request, pullTimeoutMs, known);
    const { start, upperBound } = request;
    const stream = start.kind === 'date' ? (info ?? (await clients().jsm.streams.info(streamName))) : undefined;
    const nothing =
      upperBound === 0 ||
      (start.kind === 'sequence' && start.sequence > upperBound) ||
      (start.kind === 'date' && startsAfterLastMessage(stream as StreamInfo, start.atNs));
    if (nothing) cursor.done = true;
    else if (start.kind === 'date' && needsDateSearch(stream as StreamInfo)) {
      const sequence = await firstSequenceStoredFrom(clients(), stream as StreamInfo, replayFilterSubject(request.pattern), start.atNs);
      await cursor.consumer.create({ kind: 'sequence', sequence });
    } else await cursor.consumer.create(start);
    return cursor;
  }

  async next(limit: number): Promise<Batch> {
    const { pattern, upperBound } = this.request;
    if (this.done) {
      const losses = this.dueLosses(true);
      return withLosses({ messages: [], nextSequence: Math.max(this.nextSequence, upperBound + 1), exhausted: true }, losses);
    }
    if (this.ahead.length - this.aheadIndex < limit && !this.storeDrained) await this.readAhead(limit);
    if (this.dateBoundaryPending && this.aheadIndex < this.ahead.length) await this.findDateBoundary();
    const messages: StoredNotification[] = [];
    const losses: HistoryLoss[] = [];
    let lastExamined = this.nextSequence - 1;
    let beyondBound = false;
    const end = Math.min(this.ahead.length, this.aheadIndex + limit);
    for (; this.aheadIndex < end; this.aheadIndex++) {
      const { notification, predecessor } = this.ahead[this.aheadIndex] as PulledMessage;
      if (notification.sequence > upperBound) {
        beyondBound = true;
        break;
      }
      lastExamined = notification.sequence;
      if (!pattern.matches(notification.topic)) continue;
      const loss = this.predecessors.observe(notification.sequence, predecessor);
      if (loss) losses.push(loss);
      messages.push(notification);
    }
    const emptied = this.aheadIndex >= this.ahead.length;
    const exhausted = beyondBound || (emptied && this.storeDrained) || lastExamined >= upperBound;
    this.nextSequence = lastExamined + 1;
    if (exhausted) this.close();
    return withLosses({ messages, nextSequence: this.nextSequence, exhausted }, [...this.dueLosses(exhausted), ...losses]);
  }

  /** The losses known at the start that lie in the range examined so far (all of them once exhausted). */
  private dueLosses(exhausted: boolean): HistoryLoss[] {
    const due = exhausted ? this.initialLosses : this.initialLosses.filter((loss) => loss.last < this.nextSequence);
    this.initialLosses = exhausted ? [] : this.initialLosses.filter((loss) => loss.last >= this.nextSequence);
    return due;
  }

  /**
   * A date start's range begins after the newest notification held below its first one (every
   * held one below it was stored before the date). Sequences removed in between may have been
   * stored after the date: they count as in the range. A few sequences are probed; when none is
   * held, the whole stream below counts, which may name a loss that was not the range's, never miss one.
   */
  private async findDateBoundary(): Promise<void> {
    this.dateBoundaryPending = false;
    const first = (this.ahead[this.aheadIndex] as PulledMessage).notification.sequence;
    const { jsm } = this.clients();
    for (let sequence = first - 1; sequence >= Math.max(1, first - DATE_BOUNDARY_PROBES); sequence--) {
      let held = false;
      try {
        held = (await jsm.streams.getMessage(this.streamName, { seq: sequence })) !== null;
      } catch (error) {
        if (!isMessageNotFound(error)) throw error;
      }
      if (held) {
        this.predecessors.startAt(sequence + 1);
        return;
      }
    }
    this.predecessors.startAt(1);
  }

  /** Tops up the read-ahead with one pull, sized by the bytes the messages so far needed. */
  private async readAhead(limit: number): Promise<void> {
    const averageBytes = this.pulledMessages === 0 ? undefined : this.pulledBytes / this.pulledMessages;
    const wanted =
      averageBytes === undefined
        ? limit
        : Math.max(limit, Math.min(READ_AHEAD_MESSAGES, Math.floor(READ_AHEAD_BYTES / Math.max(averageBytes, 1))));
    const pulled = await this.consumer.pull(wanted);
    this.storeDrained = pulled.length < wanted;
    for (const { notification } of pulled) this.pulledBytes += notification.payload.length;
    this.pulledMessages += pulled.length;
    this.ahead = this.ahead.slice(this.aheadIndex).concat(pulled);
    this.aheadIndex = 0;
  }

  close(): void {
    this.done = true;
    this.ahead = [];
    this.aheadIndex = 0;
    this.consumer.delete();
  }
}

/** One batch on its own: a cursor opened, read once and closed (the contract's `fetchBatch`). */
export async function fetchJetStreamBatch(
  clients: () => NatsClients,
  streamName: string,
  request: FetchRequest,
  pullTimeoutMs: number,
  known?: KnownLosses,
  info?: StreamInfo,
): Promise<Batch> {
  const cursor = await JetStreamReplayCursor.open(clients, streamName, request, pullTimeoutMs, known, info);
  try {
    return await cursor.next(request.limit);
  } finally {
    cursor.close();
  }
}

/**
 * A date cursor after the newest message selects nothing. Checked here rather than left to the
 * server, which (2.9) misreads start times beyond the year 2262 and delivers everything.
 */
function startsAfterLastMessage({ state }: StreamInfo, atNs: bigint): boolean {
  if (state.messages === 0) return true;
  const lastNs = readRfc3339(state.last_ts);
  if (lastNs === undefined) throw new Error(`JetStream reported a last message time that is not RFC 3339: '${state.last_ts}'`);
  return atNs > lastNs;
}

/**
 * No message is stored before the epoch, so a date start at or before it is the whole stream; it is
 * sent as "deliver all" because nats-server (2.9) delivers nothing for a start time that far back
 * (`from_date` in the year 1500 would otherwise replay an empty history).
 */
function fromEpochAtTheEarliest<T extends ReplayRequest>(request: T): T {
  if (request.start.kind !== 'date' || request.start.atNs > 0n) return request;
  return { ...request, start: { kind: 'sequence', sequence: 0 } };
}

function withLosses(batch: Batch, losses: readonly HistoryLoss[]): Batch {
  return losses.length > 0 ? { ...batch, losses } : batch;
}
