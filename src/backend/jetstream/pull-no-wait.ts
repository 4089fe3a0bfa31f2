import { createInbox, type Msg } from '@nats-io/transport-node';
import type { StoredNotification } from '../backend.js';
import { fromCoreMessage, topicPredecessorOf } from './message-mapping.js';
import type { NatsClients } from './nats-link.js';

/**
 * The raw pull of a replay consumer: a `no_wait` batch request answered with what is stored now,
 * each message with its stream sequence and storage time read from its reply subject.
 */

/** A pulled notification and its topic's predecessor when it was stored (replay-losses.ts). */
export interface PulledMessage {
  readonly notification: StoredNotification;
  readonly predecessor: number | undefined;
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
export function isConsumerMissing(error: unknown): boolean {
  return error instanceof PullFailed && (error.status === 503 || error.status === 409);
}

/** Pulls up to `batch` stored messages and returns as soon as the server says there are no more. */
export async function pullNoWait(
  clients: NatsClients,
  streamName: string,
  consumer: string,
  batch: number,
  timeoutMs: number,
): Promise<PulledMessage[]> {
  const { nc } = clients;
  const inbox = createInbox();
  const subscription = nc.subscribe(inbox, { timeout: timeoutMs });
  nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${streamName}.${consumer}`, JSON.stringify({ batch, no_wait: true }), {
    reply: inbox,
  });
  const messages: PulledMessage[] = [];
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

function fromPulledMessage(message: Msg): PulledMessage {
  const { streamSequence, timestampNanos } = parseAckSubject(message.reply ?? '');
  return { notification: fromCoreMessage(message, streamSequence, timestampNanos), predecessor: topicPredecessorOf(message) };
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
  const token = (i: number): string => reply.slice(starts[i], i + 1 < count ? (starts[i + 1] as number) - 1 : reply.length);
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
