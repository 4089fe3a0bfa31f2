import { randomBytes } from 'node:crypto';
import { TimeoutError, createInbox, type Msg } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  ReplayPolicy,
  type ConsumerConfig,
} from '@nats-io/jetstream';
import type { Batch, FetchRequest, ReplayCursor, ReplayRequest, StartCursor, StoredNotification } from '../backend.js';
import { readRfc3339 } from '../../time/instant-text.js';
import { formatRfc3339Nanos } from '../../time/time-format.js';
import { encodeToken } from '../../topic/percent-codec.js';
import { fromCoreMessage } from './message-mapping.js';
import type { NatsClients } from './nats-link.js';

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
  private ahead: StoredNotification[] = [];
  private aheadIndex = 0;
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
  ) {
    this.nextSequence = request.start.kind === 'sequence' ? Math.max(request.start.sequence, 1) : 1;
    this.consumerSequence = this.nextSequence;
  }

  static async open(
    clients: () => NatsClients,
    streamName: string,
    asked: ReplayRequest,
    pullTimeoutMs: number,
  ): Promise<JetStreamReplayCursor> {
    const request = fromEpochAtTheEarliest(asked);
    const cursor = new JetStreamReplayCursor(clients, streamName, request, pullTimeoutMs);
    const { start, upperBound } = request;
    const nothing =
      upperBound === 0 ||
      (start.kind === 'sequence' && start.sequence > upperBound) ||
      (start.kind === 'date' && (await startsAfterLastMessage(clients(), streamName, start.atNs)));
    if (nothing) cursor.done = true;
    else await cursor.createConsumer(start);
    return cursor;
  }

  async next(limit: number): Promise<Batch> {
    const { pattern, upperBound } = this.request;
    if (this.done) return { messages: [], nextSequence: Math.max(this.nextSequence, upperBound + 1), exhausted: true };
    if (this.ahead.length - this.aheadIndex < limit && !this.storeDrained) await this.readAhead(limit);
    const messages: StoredNotification[] = [];
    let lastExamined = this.nextSequence - 1;
    let beyondBound = false;
    const end = Math.min(this.ahead.length, this.aheadIndex + limit);
    for (; this.aheadIndex < end; this.aheadIndex++) {
      const message = this.ahead[this.aheadIndex] as StoredNotification;
      if (message.sequence > upperBound) {
        beyondBound = true;
        break;
      }
      lastExamined = message.sequence;
      if (pattern.matches(message.topic)) messages.push(message);
    }
    const emptied = this.aheadIndex >= this.ahead.length;
    const exhausted = beyondBound || (emptied && this.storeDrained) || lastExamined >= upperBound;
    this.nextSequence = lastExamined + 1;
    if (exhausted) this.close();
    return { messages, nextSequence: this.nextSequence, exhausted };
  }

  /** Tops up the read-ahead with one pull, sized by the bytes the messages so far needed. */
  private async readAhead(limit: number): Promise<void> {
    const averageBytes = this.pulledMessages === 0 ? undefined : this.pulledBytes / this.pulledMessages;
    const wanted =
      averageBytes === undefined
        ? limit
        : Math.max(limit, Math.min(READ_AHEAD_MESSAGES, Math.floor(READ_AHEAD_BYTES / Math.max(averageBytes, 1))));
    if (Date.now() - this.lastPullAt >= IDLE_CHECK_AFTER_MS) await this.recreateConsumerIfMissing();
    let pulled: StoredNotification[];
    try {
      pulled = await this.pull(wanted);
    } catch (error) {
      // The server may have removed the consumer (inactive threshold, an operator): go on from here.
      if (!isConsumerMissing(error) && !(error instanceof TimeoutError)) throw error;
      if (!(await this.recreateConsumerIfMissing())) throw error;
      pulled = await this.pull(wanted);
    }
    this.storeDrained = pulled.length < wanted;
    for (const message of pulled) this.pulledBytes += message.payload.length;
    this.pulledMessages += pulled.length;
    const last = pulled[pulled.length - 1];
    if (last) this.consumerSequence = last.sequence + 1;
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

  private async createConsumerOnce(start: StartCursor): Promise<void> {
    const { pattern } = this.request;
    // A one-token pattern is a bare-base topic, which `<b>.>` would not match (D19).
    const filter = pattern.tokens.length === 1 ? encodeToken(pattern.base) : pattern.coarseSubject;
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

  private pull(limit: number): Promise<StoredNotification[]> {
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
): Promise<Batch> {
  const cursor = await JetStreamReplayCursor.open(clients, streamName, request, pullTimeoutMs);
  try {
    return await cursor.next(request.limit);
  } finally {
    cursor.close();
  }
}

class PullFailed extends Error {
  constructor(
    consumer: string,
    readonly status: number,
    description: string,
  ) {
    super(`pull from replay consumer ${consumer} failed: ${status} ${description}`.trim());
    this.name = 'PullFailed';
  }
}

/** The server no longer knows the consumer: nobody answers the pull (503), or it was deleted (409). */
function isConsumerMissing(error: unknown): boolean {
  return error instanceof PullFailed && (error.status === 503 || error.status === 409);
}

/** Pulls up to `batch` stored messages and returns as soon as the server says there are no more. */
async function pullNoWait(
  clients: NatsClients,
  streamName: string,
  consumer: string,
  batch: number,
  timeoutMs: number,
): Promise<StoredNotification[]> {
  const { nc } = clients;
  const inbox = createInbox();
  const subscription = nc.subscribe(inbox, { timeout: timeoutMs });
  nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${streamName}.${consumer}`, JSON.stringify({ batch, no_wait: true }), {
    reply: inbox,
  });
  const messages: StoredNotification[] = [];
  try {
    for await (const message of subscription) {
      const status = statusOf(message);
      // 404 (no messages) and 408 (request ended) close the batch early; anything else is a failure.
      if (status === 404 || status === 408) break;
      if (status !== undefined) throw new PullFailed(consumer, status, message.headers?.description ?? '');
      messages.push(fromPulledMessage(message));
      if (messages.length >= batch) break;
    }
  } finally {
    subscription.unsubscribe();
  }
  return messages;
}

/** The status code of a JetStream status message (no body, a status line in the headers). */
function statusOf(message: Msg): number | undefined {
  const code = message.data.length === 0 ? message.headers?.code : undefined;
  return code !== undefined && code > 0 ? code : undefined;
}

function fromPulledMessage(message: Msg): StoredNotification {
  const { streamSequence, timestampNanos } = parseAckSubject(message.reply ?? '');
  return fromCoreMessage(message, streamSequence, timestampNanos);
}

/**
 * Delivery metadata from a JetStream reply subject: `$JS.ACK.<stream>.<consumer>.<delivered>.
 * <stream seq>.<consumer seq>.<time ns>.<pending>`, or the newer form with a domain and an
 * account hash after `ACK` and a random token at the end. Read by token positions rather than
 * `split`: this runs once per replayed message.
 */
export function parseAckSubject(reply: string): { streamSequence: number; timestampNanos: bigint } {
  // Where each token starts; tokens 5–9 are enough to tell the two forms apart (9, or 11 and more).
  const starts = [0];
  for (let dot = reply.indexOf('.'); dot >= 0 && starts.length < 12; dot = reply.indexOf('.', dot + 1)) {
    starts.push(dot + 1);
  }
  const count = starts.length;
  const token = (i: number): string =>
    reply.slice(starts[i] as number, i + 1 < count ? (starts[i + 1] as number) - 1 : reply.length);
  // 12 starts recorded means 12 tokens or more (the scan stopped there): the newer form either way.
  if (token(0) !== '$JS' || token(1) !== 'ACK' || (count !== 9 && count < 11)) {
    throw new Error(`not a JetStream delivery: '${reply}'`);
  }
  const offset = count === 9 ? 0 : 2;
  return {
    streamSequence: Number(token(5 + offset)),
    timestampNanos: BigInt(token(7 + offset)),
  };
}

/**
 * A date cursor after the newest message selects nothing. Checked here rather than left to the
 * server, which (2.9) misreads start times beyond the year 2262 and delivers everything.
 */
async function startsAfterLastMessage(clients: NatsClients, streamName: string, atNs: bigint): Promise<boolean> {
  const { state } = await clients.jsm.streams.info(streamName);
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
