import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { toHeaders } from '../../src/backend/jetstream/message-mapping.js';
import type { ReadyMessage } from '../support/ready.js';
import type { StoredLayout } from '../support/stored-layout.js';
import { reply, runWorker, workerOptions } from '../support/worker-side.js';

/**
 * Baseline of `notify_jetstream`, in its own process: what a user would write by hand — a bare
 * fastify 5 POST route that parses the JSON body (fastify's JSON parser), publishes the message
 * aviso stores for that request (same subject, payload and headers, a fresh `Nats-Msg-Id`) to the
 * same stream, awaits the acknowledgement and answers a small JSON like notify's. No logging,
 * validation or canonicalisation: the message is the one aviso's own code computed for the body.
 */
export interface FastifyPublishOptions {
  readonly natsUrl: string;
  readonly message: StoredLayout;
}

runWorker(async () => {
  const options = workerOptions<FastifyPublishOptions>();
  const nc = await connect({ servers: options.natsUrl });
  const js = jetstream(nc);
  const { subject, payload, headers } = options.message;
  const app = Fastify({ logger: false });
  app.post('/api/v1/notification', async (request) => {
    const body = request.body as { event_type?: unknown };
    if (typeof body.event_type !== 'string') throw new Error('no event_type');
    const h = toHeaders(headers);
    const ack = await js.publish(subject, payload, { msgID: randomUUID(), timeout: 5_000, ...(h ? { headers: h } : {}) });
    return { processed_at: new Date().toISOString().slice(0, 19) + 'Z', request_id: randomUUID(), sequence: ack.seq, status: 'success' };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const ready: ReadyMessage = { type: 'ready', port: address.port };
  reply(ready);
});
