import { DeliverPolicy, type Consumer, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsClients } from './nats-link.js';

/** How long one pull of a live consumer waits for messages. */
const LIVE_PULL_EXPIRES_MS = 10_000;

/** A live feed's consumer on the server and the pull loop reading it. */
export interface FollowedConsumer {
  readonly consumer: Consumer;
  readonly messages: ConsumerMessages;
}

/** An ordered consumer on the whole stream from `startSequence`, already pulling. */
export async function openConsumer(clients: NatsClients, streamName: string, startSequence: number): Promise<FollowedConsumer> {
  const consumer = await clients.js.consumers.get(streamName, {
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: startSequence,
  });
  // Shorter pulls than the 30 s default let a feed notice a restarted server within seconds.
  return { consumer, messages: await consumer.consume({ expires: LIVE_PULL_EXPIRES_MS }) };
}

/**
 * Stops the pull loop and deletes the consumer: closing alone leaves an ordered consumer on the
 * server until its 5-minute inactivity threshold, one per feed that stopped. A delete that fails
 * (NATS away) is left to that threshold.
 */
export function release({ consumer, messages }: FollowedConsumer): void {
  void messages
    .close()
    .catch(() => undefined)
    .then(() => consumer.delete())
    .catch(() => undefined);
}
