import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { notifyAndWatch } from '../../examples/notify-and-watch.js';

/** docs/client.md's example, the very file, against the real in-memory server. */
let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ config: serverConfig() });
});
afterAll(async () => {
  await server.stop();
});

describe('the docs example', () => {
  it('publishes three notifications and watches them back from sequence 1', async () => {
    const seen = await notifyAndWatch(server.url, 3);
    expect(seen.map((n) => [n.sequence, n.payload])).toEqual([
      [1, { x: 0 }],
      [2, { x: 1 }],
      [3, { x: 2 }],
    ]);
    expect(seen[0]!.identifier).toEqual({ destination: 'A', class: 'od' });
  });
});
