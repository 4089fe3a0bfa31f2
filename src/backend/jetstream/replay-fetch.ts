import { randomBytes } from 'node:crypto';
import { TimeoutError } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  ReplayPolicy,
  type ConsumerConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import type { Batch, FetchRequest, HistoryLoss, ReplayCursor, ReplayRequest, StartCursor, StoredNotification } from '../backend.js';
import { readRfc3339 } from '../../time/instant-text.js';
import { formatRfc3339Nanos } from '../../time/time-format.js';
import { encodeToken } from '../../topic/percent-codec.js';
import type { NatsClients } from './nats-link.js';
import { isMessageNotFound } from './nats-errors.js';
import { isConsumerMissing, pullNoWait, type PulledMessage } from './pull-no-wait.js';
import { PredecessorLosses, type KnownLosses } from './replay-losses.js';
import { firstSequenceStoredFrom, needsDateSearch } from './date-start.js';

/** A replay consumer left behind by a crash disappears after this long (docs/design/rules/backends.md §7.12). */
const INACTIVE_THRESHOLD_MS = 30_000;
/**
 * A replay idle for this long (its client reading slowly) may have lost its consumer to the
 * inactive threshold; it checks before pulling, since NATS 2.9 ignores a pull for a missing consumer.
 */
const IDLE_CHECK_AFTER_MS = INACTIVE_THRESHOLD_MS / 2;
/** Tries at creating a replay consumer whose creation went unanswered (see `createConsumer`). */
const CONSUMER_CREATE_ATTEMPTS = 4;
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
  private consumer: string | undefined;
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
  /** Where the consumer stands: one past the last sequence pulled. */
  private consumerSequence: number;
  private pulledMessages = 0;
  private pulledBytes = 0;
  private lastPullAt = 0;

  private constructor(
    private readonly clients: () => NatsClients,
    private readonly streamName: string,
    private readonly request: ReplayRequest,
    /** How long a pull may go unanswered: the JetStream API timeout (`timeout_seconds`). */
    private readonly pullTimeoutMs: number,
    known: KnownLosses,
  ) {
    this.nextSequence = request.start.kind === 'sequence' ? Math.max(request.start.sequence, 1) : 1;
    this.consumerSequence = this.nextSequence;
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
      const sequence = await firstSequenceStoredFrom(clients(), stream as StreamInfo, cursor.filterSubject(), start.atNs);
      await cursor.createConsumer({ kind: 'sequence', sequence });
    } else await cursor.createConsumer(start);
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
    if (Date.now() - this.lastPullAt >= IDLE_CHECK_AFTER_MS) await this.recreateConsumerIfMissing();
    let pulled: PulledMessage[];
    try {
      pulled = await this.pull(wanted);
    } catch (error) {
      // The server may have removed the consumer (inactive threshold, an operator): go on from here.
      if (!isConsumerMissing(error) && !(error instanceof TimeoutError)) throw error;
      if (!(await this.recreateConsumerIfMissing())) throw error;
      pulled = await this.pull(wanted);
    }
    this.storeDrained = pulled.length < wanted;
    for (const { notification } of pulled) this.pulledBytes += notification.payload.length;
    this.pulledMessages += pulled.length;
    const last = pulled[pulled.length - 1];
    if (last) this.consumerSequence = last.notification.sequence + 1;
    this.ahead = this.ahead.slice(this.aheadIndex).concat(pulled);
    this.aheadIndex = 0;
  }

  close(): void {
    this.done = true;
    this.ahead = [];
    this.aheadIndex = 0;
    const consumer = this.consumer;
    this.consumer = undefined;
    if (!consumer) return;
    try {
      void this.clients().jsm.consumers.delete(this.streamName, consumer).catch(() => undefined);
    } catch {
      // No connection: the consumer's inactive threshold removes it.
    }
  }

  /**
   * Creates the replay's consumer, trying again under a new name when the server does not answer.
   * NATS 2.9 places a one-replica consumer on any peer of the stream, offline ones included, so
   * after a cluster node was lost one creation in three can time out; another try lands elsewhere.
   */
  private async createConsumer(start: StartCursor): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.createConsumerOnce(start);
        return;
      } catch (error) {
        if (!(error instanceof TimeoutError) || attempt >= CONSUMER_CREATE_ATTEMPTS) throw error;
      }
    }
  }

  /** The consumer's subject filter: a one-token pattern is a bare-base topic, which `<b>.>` would not match (D19). */
  filterSubject(): string {
    const { pattern } = this.request;
    return pattern.tokens.length === 1 ? encodeToken(pattern.base) : pattern.coarseSubject;
  }

  private async createConsumerOnce(start: StartCursor): Promise<void> {
    const filter = this.filterSubject();
    const name = `replay_consumer_${Date.now()}_${randomBytes(16).toString('hex')}`;
    const config: Partial<ConsumerConfig> = {
      name,
      description: `Replay consumer for pattern: ${filter}`,
      filter_subject: filter,
      ack_policy: AckPolicy.None,
      replay_policy: ReplayPolicy.Instant,
      inactive_threshold: INACTIVE_THRESHOLD_MS * 1_000_000,
      mem_storage: true,
      // One replica, on the stream leader: it leads at once. On a replicated stream a consumer would
      // otherwise inherit the stream's replica count and, right after a node was lost, stay without a
      // leader for seconds while its first pull went unanswered (the replay then failed on a timeout).
      num_replicas: 1,
      ...(start.kind === 'date'
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: formatRfc3339Nanos(start.atNs) }
        : start.sequence > 0
          ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.sequence }
          : { deliver_policy: DeliverPolicy.All }),
    };
    await this.clients().jsm.consumers.add(this.streamName, config);
    this.consumer = name;
    this.lastPullAt = Date.now();
  }

  /** True when the consumer was gone and a new one now starts where the old one stood. */
  private async recreateConsumerIfMissing(): Promise<boolean> {
    try {
      await this.clients().jsm.consumers.info(this.streamName, this.consumer as string);
      return false;
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound)) throw error;
    }
    await this.createConsumer({ kind: 'sequence', sequence: this.consumerSequence });
    return true;
  }

  private pull(limit: number): Promise<PulledMessage[]> {
    this.lastPullAt = Date.now();
    return pullNoWait(this.clients(), this.streamName, this.consumer as string, limit, this.pullTimeoutMs);
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
