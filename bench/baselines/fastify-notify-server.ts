import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { ReadyMessage } from '../support/ready.js';
import { reply, runWorker } from '../support/worker-side.js';

/**
 * Baseline of `notify_memory`: a bare fastify 5 POST route in its own process that parses the JSON
 * body (fastify's JSON parser) and answers a small JSON like notify's. No logging, no validation,
 * no storage: the ceiling of a fastify route on this machine.
 */
runWorker(async () => {
  const app = Fastify({ logger: false });
  app.post('/api/v1/notification', async (request) => {
    const body = request.body as { event_type?: unknown };
    if (typeof body.event_type !== 'string') throw new Error('no event_type');
    return { processed_at: new Date().toISOString().slice(0, 19) + 'Z', request_id: randomUUID(), status: 'success' };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const ready: ReadyMessage = { type: 'ready', port: address.port };
  reply(ready);
});
