import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { AvisoClient } from '../../src/index.js';
import { notifyAndWatch } from '../../examples/notify-and-watch.js';
import { replayWithGaps } from '../../examples/replay-with-gaps.js';

/** docs/client.md's examples, the very files, against the real in-memory server. */
let server: RunningServer;
/** Keeps one notification per topic, so publishing a topic again loses history. */
let forgetful: RunningServer;
beforeAll(async () => {
  [server, forgetful] = await Promise.all([
    startServer({ config: serverConfig() }),
    startServer({ config: serverConfig({ notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: 1 } } }) }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), forgetful?.stop()]);
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

  it('publishes three notifications and watches them back from sequence 1', async () => {
    const seen = await notifyAndWatch(server.url, 3);
    expect(seen.map((n) => [n.sequence, n.payload])).toEqual([
      [1, { x: 0 }],
      [2, { x: 1 }],
      [3, { x: 2 }],
    ]);
    expect(seen[0]!.identifier).toEqual({ destination: 'A', class: 'od' });
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
