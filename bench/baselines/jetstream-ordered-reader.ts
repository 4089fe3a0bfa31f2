import { connect } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import { epochMs } from '../support/stats.js';
import { reply, runWorker, workerOptions } from '../support/worker-side.js';

/**
 * Baseline of `replay`, in its own process: a raw JetStream ordered consumer (`consume()`) reading
 * every message of the stream from the first, decoding payload and identifier header as a client
 * would. Timed from creating the consumer to the last message (the connection is made before).
 */
export interface OrderedReaderOptions {
  readonly natsUrl: string;
  readonly stream: string;
  readonly expected: number;
}

export interface OrderedReaderResult {
  readonly type: 'result';
  readonly events: number;
  readonly elapsedMs: number;
  readonly payloadBytes: number;
}

runWorker(async () => {
  const options = workerOptions<OrderedReaderOptions>();
  const nc = await connect({ servers: options.natsUrl });
  const js = jetstream(nc);
  const started = epochMs();
  const consumer = await js.consumers.get(options.stream, { deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume();
  let events = 0;
  let payloadBytes = 0;
  for await (const message of messages) {
    payloadBytes += message.string().length + (message.headers?.get('aviso_identifier').length ?? 0);
    if (++events >= options.expected) break;
  }
  const elapsedMs = epochMs() - started;
  await messages.close().catch(() => undefined);
  await nc.close();
  const result: OrderedReaderResult = { type: 'result', events, elapsedMs, payloadBytes };
  reply(result);
});
