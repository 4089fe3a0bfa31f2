import { afterEach, describe, expect, it } from 'vitest';
import { AvisoClientRulesWatch, HistoryGap } from '../support/aviso-client-rules.js';
import { RestartingServer } from '../support/restarting-server.js';

/**
 * Issue 30's recipe for a client that follows the aviso client's cursor rules
 * (test/support/aviso-client-rules.ts) on an unfiltered watch, where its GapGuard is strict:
 * across a restart of the in-memory server by SIGTERM and by SIGKILL, with notifications sent
 * before and after it reconnects, every notification arrives once and the watch never ends with
 * a history gap, because the numbering carries on (D40).
 */
const servers: RestartingServer[] = [];
const watches: AvisoClientRulesWatch[] = [];
afterEach(async () => {
  for (const watch of watches.splice(0)) await watch.stop();
  for (const server of servers.splice(0)) await server.stop();
});

async function serve(inMemory: Record<string, unknown> = {}): Promise<RestartingServer> {
  const server = await RestartingServer.start(inMemory);
  servers.push(server);
  return server;
}

function watch(server: RestartingServer, fromId: number): AvisoClientRulesWatch {
  const rules = new AvisoClientRulesWatch(server.url, { eventType: 'job', identifier: {}, fromId });
  watches.push(rules);
  return rules;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("a client with the aviso client's cursor rules across an in-memory restart (issue 30)", () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`${signal}: every notification once, in order, and no history gap on an unfiltered watch`, async () => {
      const server = await serve();
      await server.publish(3);
      const client = watch(server, 1);
      await client.waitForDelivered(3);
      await server.restart(signal, () => server.publish(2));
      await client.waitForDelivered(5);
      await server.publish(2);
      await client.waitForDelivered(7);
      expect(client.failure).toBeUndefined();
      expect(client.delivered).toEqual(range(1, 7));
      // It reconnected from the last delivered + 1, and only from there.
      expect(client.requestedFrom[0]).toBe('1');
      expect(new Set(client.requestedFrom.slice(1))).toEqual(new Set(['4']));
    }, 90_000);
  }

  it('its GapGuard is strict: history lost under an unfiltered watch ends it with a history gap', async () => {
    const server = await serve({ max_history_per_topic: 1 });
    // Two of one topic: the per-topic limit removes the first.
    await server.publish(1, 'a');
    await server.publishAgain();
    const client = watch(server, 1);
    await expect(client.waitForDelivered(1)).rejects.toThrow(new HistoryGap(1, 2));
  }, 60_000);
});
