import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBackend } from '../support/backends.js';
import { requestOnNewConnection, type JsonResponse } from '../support/http.js';
import { TEST_SCHEMAS } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * D49 when a process dies: of two JetStream servers on one NATS, one is killed with SIGKILL (no
 * word to the other). The admin list asked of the survivor answers within the bound (1 s), names
 * the dead process as not answering and still lists the survivor's streams; a close of the dead
 * process's stream says which process did not answer. Once the presence window (6 s) has passed
 * without a word from it, the dead process is forgotten and the list answers at once again.
 */

const START_TIMEOUT_MS = 60_000;
const BOUND_MS = 1_000;
const PRESENCE_WINDOW_MS = 6_000;
/** HTTP and a machine shared with other work: room on top of the bound, far below a second bound. */
const SLACK_MS = 900;
const { mars } = TEST_SCHEMAS;

const processId = (server: RunningServer): string => `${hostname()}:${server.process.pid}`;

async function timedList(server: RunningServer): Promise<{ answer: JsonResponse; ms: number }> {
  const started = performance.now();
  const answer = await requestOnNewConnection(`${server.url}/api/v1/admin/streams`);
  return { answer, ms: performance.now() - started };
}

describe('a process killed while the others answer', { timeout: 120_000 }, () => {
  const backend = useBackend('jetstream');
  let survivor: RunningServer;
  let victim: RunningServer;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    const config = backend.config({
      application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000' },
      notification_schema: { mars },
    });
    [survivor, victim] = await Promise.all([
      startServer({ config, startTimeoutMs: START_TIMEOUT_MS }),
      startServer({ config, startTimeoutMs: START_TIMEOUT_MS }),
    ]);
  }, 2 * START_TIMEOUT_MS);

  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all([survivor, victim].filter(Boolean).map((server) => server.stop()));
  });

  it('is reported as not answering within the bound, the rest still listed, then forgotten', async () => {
    for (const server of [survivor, victim]) {
      const client = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'mars', identifier: { class: 'od' } });
      expect(client.status, client.errorBody).toBe(200);
      clients.push(client);
    }
    const [kept, lost] = clients.map((client) => client.headers.get('x-request-id')) as [string, string];
    // Both answer while both live (the list waits the whole bound while a process is young).
    const before = (await timedList(survivor)).answer;
    expect(before.status).toBe(200);
    expect((before.json.streams as { id: string }[]).map((stream) => stream.id).sort()).toEqual([kept, lost].sort());
    // Past the survivor's first presence window, so a list does not wait the bound for nothing.
    await new Promise((resolve) => setTimeout(resolve, PRESENCE_WINDOW_MS));
    const healthy = await timedList(survivor);
    expect(healthy.answer.json.processes).toEqual({
      answered: [processId(survivor), processId(victim)],
      not_answering: [],
      cluster_unreachable: false,
    });
    expect(healthy.ms).toBeLessThan(BOUND_MS);

    const dead = processId(victim);
    expect(await victim.stop('SIGKILL')).toBeNull();
    const { answer, ms } = await timedList(survivor);
    expect(answer.status).toBe(200);
    expect(answer.json.processes).toEqual({ answered: [processId(survivor)], not_answering: [dead], cluster_unreachable: false });
    expect((answer.json.streams as { id: string; process: string }[]).map(({ id, process }) => ({ id, process }))).toEqual([
      { id: kept, process: processId(survivor) },
    ]);
    expect(ms).toBeGreaterThanOrEqual(BOUND_MS - 50);
    expect(ms).toBeLessThan(BOUND_MS + SLACK_MS);

    const close = await requestOnNewConnection(`${survivor.url}/api/v1/admin/streams/${lost}`, { method: 'DELETE' });
    expect(close.status).toBe(404);
    expect(close.json).toMatchObject({ success: false, stream_id: lost, not_answering: [dead] });
    expect(close.json.message).toContain(dead);

    await new Promise((resolve) => setTimeout(resolve, PRESENCE_WINDOW_MS));
    const later = await timedList(survivor);
    expect(later.answer.json.processes).toEqual({ answered: [processId(survivor)], not_answering: [], cluster_unreachable: false });
    expect(later.ms).toBeLessThan(BOUND_MS);
  });
});
