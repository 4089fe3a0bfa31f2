import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsServerProcess } from '../../../../test/support/nats-server.js';
import { serverConfig } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { startShippedServer } from '../../../../test/support/shipped-server.js';
import { AvisoClient } from '../../src/index.js';
import { notifyAndWatch } from '../../examples/notify-and-watch.js';
import { replayWithGaps } from '../../examples/replay-with-gaps.js';

/**
 * docs/client.md's examples, the very files, against the real server: the first on the shipped
 * configuration (what `npm start` serves), in memory and on JetStream with getting-started's two
 * variables (whose streams keep only the latest notification per topic).
 */
let server: RunningServer;
let nats: NatsServerProcess;
let onJetStream: RunningServer;
/** Keeps one notification per topic, so publishing a topic again loses history. */
let forgetful: RunningServer;
beforeAll(async () => {
  nats = await startNatsServer();
  [server, onJetStream, forgetful] = await Promise.all([
    startShippedServer(),
    startShippedServer({ natsUrl: nats.url }),
    startServer({ config: serverConfig({ notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: 1 } } }) }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), onJetStream?.stop(), forgetful?.stop()]);
  await nats?.stop();
});

const example = (file: string): string => {
  const text = readFileSync(join(import.meta.dirname, '../../examples', file), 'utf8');
  return text.slice(text.indexOf('import '));
};

describe('the docs examples', () => {
  it('are in docs/client.md verbatim (from their first import on)', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../../docs/client.md'), 'utf8');
    expect(doc).toContain(example('notify-and-watch.ts'));
    expect(doc).toContain(example('replay-with-gaps.ts'));
  });

  it.each([
    ['in memory', () => server],
    ['on JetStream', () => onJetStream],
  ])('watches live and receives the three notifications it publishes, %s', async (_backend, running) => {
    const seen = await notifyAndWatch(running().url, 3);
    expect(seen.map((n) => [n.sequence, n.payload])).toEqual([
      [1, { location: 's3://bucket/forecast-0.grib' }],
      [2, { location: 's3://bucket/forecast-1.grib' }],
      [3, { location: 's3://bucket/forecast-2.grib' }],
    ]);
    expect(seen.map((n) => n.identifier.step)).toEqual(['0', '1', '2']);
    expect(seen[0]!.identifier).toMatchObject({ destination: 'A', class: 'od', expver: '0001', time: '1200' });
  });

  it('replays past lost history, saying where it was lost', async () => {
    const client = new AvisoClient({ baseUrl: forgetful.url });
    const identifier = { destination: 'G', class: 'od' };
    for (let i = 0; i < 3; i++) await client.notify({ eventType: 'dissemination', identifier, payload: { i } });
    await client.close();
    expect(await replayWithGaps(forgetful.url, 'dissemination', identifier)).toEqual({
      sequences: [3],
      warnings: ['gap: 2 notifications of this request in sequences 1 to 2 are no longer stored'],
      afterGap: [3],
    });
  });
});
