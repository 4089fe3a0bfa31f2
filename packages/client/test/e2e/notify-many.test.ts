import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../../../../test/support/backends.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { AvisoClient } from '../../src/index.js';
import { cliEnv, ndjson, runCli } from '../cli/support.js';

/**
 * `notifyMany` and `aviso notify --file` against the real server's batch endpoint (docs/api.md
 * "Batch notify"), on both backends: stored in order with the sequences a replay gives back, a
 * refused item named, and a server with a lower item limit served by halving the batch.
 */
const EVENT = 'dissemination';

describe.each(BACKEND_KINDS)('batch notify from the client against the %s backend', (kind) => {
  const backend = useBackend(kind);
  let server: RunningServer;
  let home: string;
  beforeAll(async () => {
    server = await startServer({ config: backend.config({ notification_endpoint: { max_batch_items: 4 } }) });
    home = mkdtempSync(join(tmpdir(), 'aviso-notify-many-'));
  });
  afterAll(async () => {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('notifyMany stores in order across batches the server limits, and names the refused one', async () => {
    const client = new AvisoClient({ baseUrl: server.url });
    const destination = `many-${kind}`;
    const items = Array.from({ length: 9 }, (_, i) => ({ eventType: EVENT, identifier: { destination, class: 'od' }, payload: { i } }));
    // The fourth misses a required field: refused on its own, the others stored.
    items[3] = { eventType: EVENT, identifier: { destination } as { destination: string; class: string }, payload: { i: 3 } };
    // More than the server's 4 items per batch: the client halves after its 413.
    const outcomes = await client.notifyMany(items, { maxBatchItems: 8 });
    expect(outcomes.map((outcome) => outcome.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(outcomes.map((outcome) => outcome.stored)).toEqual([true, true, true, false, true, true, true, true, true]);
    const refused = outcomes[3];
    expect(refused).toMatchObject({
      stored: false,
      reason: 'refused',
      code: 'INVALID_NOTIFICATION_REQUEST',
      message: "Required field 'class' missing for notify operation",
    });

    const replayed: unknown[] = [];
    for await (const notification of client.watch({
      eventType: EVENT,
      identifier: { destination, class: 'od' },
      from: { fromId: 1 },
      to: { toId: 1_000_000 },
    })) {
      replayed.push((notification.payload as { i: number }).i);
    }
    expect(replayed).toEqual([0, 1, 2, 4, 5, 6, 7, 8]);
  });

  it('aviso notify --file prints a confirmation per stored line and names the refused line', async () => {
    const destination = `file-${kind}`;
    const line = (i: number, identifier: Record<string, string> = { destination, class: 'od' }): string =>
      JSON.stringify({ event_type: EVENT, identifier, payload: { i } });
    const path = join(home, `${kind}.ndjson`);
    writeFileSync(path, `${[line(0), line(1), line(2, { destination }), line(3)].join('\n')}\n`);
    const result = await runCli(['notify', '--file', path], cliEnv(home, { AVISO_BASE_URL: server.url }));
    expect(result.code).toBe(1);
    const printed = ndjson(result.stdout);
    expect(printed).toHaveLength(3);
    for (const confirmation of printed) expect(confirmation).toMatchObject({ event_type: EVENT, status: 'success' });
    expect(result.stderr).toContain("line 3: Required field 'class' missing for notify operation");
  });
});
