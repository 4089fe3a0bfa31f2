import { randomBytes } from 'node:crypto';
import { createInbox, type Msg } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, ReplayPolicy, type ConsumerConfig } from '@nats-io/jetstream';
import type { Batch, FetchRequest, StoredNotification } from '../backend.js';
import { encodeToken } from '../../topic/percent-codec.js';
import { toStoredNotification } from './message-mapping.js';
import type { NatsClients } from './nats-link.js';

/** A replay consumer left behind by a crash disappears after this long (backends.md §7.12). */
const INACTIVE_THRESHOLD_NS = 30_000_000_000;
/** Bound on one no-wait pull; the server answers at once, this only guards a lost reply. */
const PULL_TIMEOUT_MS = 10_000;

/**
 * One replay batch (backends.md §7.10): a short-lived consumer from the cursor on the coarse subject
 * and one `no_wait` pull, which returns what is stored now and never waits for new messages. The
 * consumer's reported pending count is not used: NATS 2.9 can report it stale right after writes.
 */
export async function fetchJetStreamBatch(clients: NatsClients, streamName: string, request: FetchRequest): Promise<Batch> {
  const { pattern, start, limit, upperBound } = request;
  const firstSequence = start.kind === 'sequence' ? Math.max(start.sequence, 1) : 1;
  const empty: Batch = { messages: [], nextSequence: Math.max(firstSequence, upperBound + 1), exhausted: true };
  if (upperBound === 0 || (start.kind === 'sequence' && start.sequence > upperBound)) return empty;
  if (start.kind === 'date' && (await startsAfterLastMessage(clients, streamName, start.atNs))) return empty;

  // A one-token pattern is a bare-base topic, which `<b>.>` would not match (D19).
  const filter = pattern.tokens.length === 1 ? encodeToken(pattern.base) : pattern.coarseSubject;
  const name = `replay_consumer_${Date.now()}_${randomBytes(16).toString('hex')}`;
  const config: Partial<ConsumerConfig> = {
    name,
    description: `Replay consumer for pattern: ${filter}`,
    filter_subject: filter,
    ack_policy: AckPolicy.None,
    replay_policy: ReplayPolicy.Instant,
    inactive_threshold: INACTIVE_THRESHOLD_NS,
    mem_storage: true,
    ...(start.kind === 'date'
      ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: rfc3339Nanos(start.atNs) }
      : start.sequence > 0
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.sequence }
        : { deliver_policy: DeliverPolicy.All }),
  };
  await clients.jsm.consumers.add(streamName, config);
  try {
    const pulled = await pullNoWait(clients, streamName, name, limit);
    const messages: StoredNotification[] = [];
    let lastExamined = firstSequence - 1;
    let beyondBound = false;
    for (const message of pulled) {
      if (message.sequence > upperBound) {
        beyondBound = true;
        break;
      }
      lastExamined = message.sequence;
      if (pattern.matches(message.topic)) messages.push(message);
    }
    // Fewer than asked for means the consumer had nothing more stored.
    const exhausted = beyondBound || pulled.length < limit || lastExamined >= upperBound;
    return { messages, nextSequence: Math.max(lastExamined + 1, firstSequence), exhausted };
  } finally {
    void clients.jsm.consumers.delete(streamName, name).catch(() => undefined);
  }
}

/** Pulls up to `batch` stored messages and returns as soon as the server says there are no more. */
async function pullNoWait(clients: NatsClients, streamName: string, consumer: string, batch: number): Promise<StoredNotification[]> {
  const { nc } = clients;
  const inbox = createInbox();
  const subscription = nc.subscribe(inbox, { timeout: PULL_TIMEOUT_MS });
  nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${streamName}.${consumer}`, JSON.stringify({ batch, no_wait: true }), {
    reply: inbox,
  });
  const messages: StoredNotification[] = [];
  try {
    for await (const message of subscription) {
      // A status message (404 no messages, 408 request ended) closes the batch early.
      if (isStatus(message)) break;
      messages.push(fromPulledMessage(message));
      if (messages.length >= batch) break;
    }
  } finally {
    subscription.unsubscribe();
  }
  return messages;
}

function isStatus(message: Msg): boolean {
  return message.data.length === 0 && message.headers !== undefined && message.headers.code > 0;
}

function fromPulledMessage(message: Msg): StoredNotification {
  const { streamSequence, timestampNanos } = parseAckSubject(message.reply ?? '');
  return toStoredNotification({
    seq: streamSequence,
    subject: message.subject,
    data: message.data,
    headers: message.headers,
    timestampNanos,
  });
}

/**
 * Delivery metadata from a JetStream reply subject: `$JS.ACK.<stream>.<consumer>.<delivered>.
 * <stream seq>.<consumer seq>.<time ns>.<pending>`, or the newer form with a domain and an
 * account hash after `ACK` and a random token at the end.
 */
export function parseAckSubject(reply: string): { streamSequence: number; timestampNanos: bigint } {
  const tokens = reply.split('.');
  if (tokens[0] !== '$JS' || tokens[1] !== 'ACK' || (tokens.length !== 9 && tokens.length < 11)) {
    throw new Error(`not a JetStream delivery: '${reply}'`);
  }
  const offset = tokens.length === 9 ? 0 : 2;
  return {
    streamSequence: Number(tokens[5 + offset]),
    timestampNanos: BigInt(tokens[7 + offset] as string),
  };
}

/**
 * A date cursor after the newest message selects nothing. Checked here rather than left to the
 * server, which (2.9) misreads start times beyond the year 2262 and delivers everything.
 */
async function startsAfterLastMessage(clients: NatsClients, streamName: string, atNs: bigint): Promise<boolean> {
  const { state } = await clients.jsm.streams.info(streamName);
  if (state.messages === 0) return true;
  return atNs > parseRfc3339Nanos(state.last_ts);
}

/** Nanoseconds since the epoch of an RFC 3339 UTC timestamp with up to 9 fraction digits. */
export function parseRfc3339Nanos(text: string): bigint {
  const match = /^(.*?)(?:\.(\d+))?Z$/.exec(text);
  const whole = BigInt(Date.parse(`${match?.[1] ?? text}Z`)) * 1_000_000n;
  const fraction = BigInt((match?.[2] ?? '').padEnd(9, '0').slice(0, 9) || '0');
  return whole + fraction;
}

/** RFC 3339 with nanoseconds, as `opt_start_time` takes it. */
export function rfc3339Nanos(epochNs: bigint): string {
  const seconds = epochNs / 1_000_000_000n - (epochNs % 1_000_000_000n < 0n ? 1n : 0n);
  const nanos = epochNs - seconds * 1_000_000_000n;
  const whole = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return `${whole}.${nanos.toString().padStart(9, '0')}Z`;
}
