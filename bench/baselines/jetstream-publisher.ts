import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { toHeaders } from '../../src/backend/jetstream/message-mapping.js';
import type { StoredLayout } from '../support/stored-layout.js';
import { epochMs } from '../support/stats.js';
import { onCommand, reply, runWorker, workerOptions } from '../support/worker-side.js';

/**
 * Baseline of `notify_jetstream`, in its own process: raw `js.publish` of the message aviso stores
 * for the same notify request (subject, payload, headers, and a fresh `Nats-Msg-Id` per message as
 * aviso sends), keeping `inFlight` publishes waiting for their acknowledgement at all times, for as
 * long as each `run` command says.
 */
export interface JetStreamPublisherOptions {
  readonly natsUrl: string;
  readonly message: StoredLayout;
  readonly inFlight: number;
}

/** One measured run, after an optional warm-up; answered with `result`. */
export interface JetStreamPublishCommand {
  readonly type: 'run';
  readonly warmupSeconds: number;
  readonly durationSeconds: number;
}

export interface JetStreamPublisherResult {
  readonly type: 'result';
  readonly messagesPerSecond: number;
  readonly acknowledged: number;
  readonly failed: number;
  readonly durationSeconds: number;
}

async function publishFor(
  js: JetStreamClient,
  options: JetStreamPublisherOptions,
  seconds: number,
): Promise<{ acknowledged: number; failed: number; elapsedMs: number }> {
  const { subject, payload, headers } = options.message;
  const started = epochMs();
  const end = started + seconds * 1000;
  let acknowledged = 0;
  let failed = 0;
  const lane = async (): Promise<void> => {
    while (epochMs() < end) {
      try {
        const h = toHeaders(headers);
        await js.publish(subject, payload, { msgID: randomUUID(), timeout: 5_000, ...(h ? { headers: h } : {}) });
        acknowledged++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.inFlight }, lane));
  return { acknowledged, failed, elapsedMs: epochMs() - started };
}

runWorker(async () => {
  const options = workerOptions<JetStreamPublisherOptions>();
  const nc = await connect({ servers: options.natsUrl });
  const js = jetstream(nc);
  onCommand<JetStreamPublishCommand>(async (command) => {
    if (command.type !== 'run') return;
    if (command.warmupSeconds > 0) await publishFor(js, options, command.warmupSeconds);
    const { acknowledged, failed, elapsedMs } = await publishFor(js, options, command.durationSeconds);
    const result: JetStreamPublisherResult = {
      type: 'result',
      messagesPerSecond: acknowledged / (elapsedMs / 1000),
      acknowledged,
      failed,
      durationSeconds: elapsedMs / 1000,
    };
    reply(result);
  });
  reply({ type: 'ready' });
});
