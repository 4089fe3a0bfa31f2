import { describe, expect, it } from 'vitest';
import { postJson } from '../support/http.js';
import { findFreePort } from '../support/ports.js';
import { serverConfig } from '../support/schemas.js';
import { runServerToExit } from '../support/server-process.js';
import { withoutHeartbeats } from '../support/sse-client.js';
import { trackProcesses } from '../support/tracked-processes.js';

/**
 * `notification_backend.in_memory.max_total_size` in the real server process (docs/backends.md,
 * "Memory budget"): past a small budget, replay shows only the newest notifications, the metrics
 * count the evictions and the bytes held, and a budget some notify would not fit in never starts.
 */

const { start, open } = trackProcesses();

/** The smallest budget `max_body_bytes: 4096` allows: 4 × 4096 + 8 KiB. */
const BUDGET = 24 * 1024;
const PUBLISHED = 40;

function budgetConfig(metricsPort: number): Record<string, unknown> {
  return serverConfig({
    application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', max_body_bytes: 4096 },
    notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: 100, max_total_size: '24Ki' } },
    metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
  });
}

/** Two topics taking turns, payloads of one length: every notification counts the same bytes. */
function notification(index: number): Record<string, unknown> {
  return {
    event_type: 'dissemination',
    identifier: { destination: index % 2 === 0 ? 'A' : 'B', class: 'od' },
    payload: { index: String(index).padStart(3, '0'), text: 'x'.repeat(900) },
  };
}

async function scrape(metricsPort: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

function sample(exposition: string, series: string): number {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  expect(line, series).toBeDefined();
  return Number((line as string).slice(series.length + 1));
}

describe('a small in-memory max_total_size', () => {
  it('keeps only the newest notifications across topics, counts what it evicted and what it holds', async () => {
    const metricsPort = await findFreePort();
    const server = await start(budgetConfig(metricsPort));
    const atStartup = await scrape(metricsPort);
    for (const cause of ['bytes', 'topics', 'per_topic']) {
      expect(sample(atStartup, `aviso_memory_history_evictions_total{cause="${cause}"}`)).toBe(0);
    }
    expect(sample(atStartup, 'aviso_memory_history_bytes')).toBe(0);

    const watch = await open(server, '/api/v1/watch', { event_type: 'dissemination', identifier: { destination: '*', class: 'od' } });
    expect((await watch.nextSignificant())?.json.type).toBe('connection_established');
    for (let i = 1; i <= PUBLISHED; i++) {
      const answer = await postJson(`${server.url}/api/v1/notification`, notification(i));
      expect(answer.status, answer.text).toBe(200);
    }
    // Every notification answered 200 reached the open watch, evicted or not (D39).
    const live: unknown[] = [];
    while (live.length < PUBLISHED) {
      const event = await watch.nextSignificant();
      expect(event?.event).toBe('live-notification');
      live.push(event?.json.id);
    }
    expect(live).toEqual(Array.from({ length: PUBLISHED }, (_, i) => `dissemination@${i + 1}`));

    const replay = await open(server, '/api/v1/replay', {
      event_type: 'dissemination',
      identifier: { destination: '*', class: 'od' },
      from_id: '1',
    });
    expect(replay.status).toBe(200);
    const events = withoutHeartbeats(await replay.rest());
    const replayed = events.filter((event) => event.event === 'replay').map((event) => event.json.id as string);
    const kept = replayed.length;
    expect(kept).toBeGreaterThan(1);
    expect(kept).toBeLessThan(PUBLISHED);
    // The newest ones, both topics, nothing in between missing.
    expect(replayed).toEqual(Array.from({ length: kept }, (_, i) => `dissemination@${PUBLISHED - kept + i + 1}`));
    expect(events.at(-2)?.json.type).toBe('replay_completed');

    const after = await scrape(metricsPort);
    const held = sample(after, 'aviso_memory_history_bytes');
    const each = held / kept;
    expect(Number.isInteger(each)).toBe(true);
    // As many as fit: one more would not have.
    expect(held).toBeLessThanOrEqual(BUDGET);
    expect(held + each).toBeGreaterThan(BUDGET);
    expect(sample(after, 'aviso_memory_history_evictions_total{cause="bytes"}')).toBe(PUBLISHED - kept);
    expect(sample(after, 'aviso_memory_history_evictions_total{cause="topics"}')).toBe(0);
    expect(sample(after, 'aviso_memory_history_evictions_total{cause="per_topic"}')).toBe(0);

    const reached = await server.waitForLog('backend.in_memory.total_size.reached', { from: 0 });
    expect(reached.severityText).toBe('WARN');
    expect(reached.attributes?.max_total_bytes).toBe(BUDGET);
    expect(server.logs.filter((line) => line.attributes?.['event.name'] === 'backend.in_memory.total_size.reached')).toHaveLength(1);
  });

  it('gives back the bytes of a wiped stream', async () => {
    const metricsPort = await findFreePort();
    const server = await start(budgetConfig(metricsPort));
    for (let i = 1; i <= 3; i++) expect((await postJson(`${server.url}/api/v1/notification`, notification(i))).status).toBe(200);
    expect(sample(await scrape(metricsPort), 'aviso_memory_history_bytes')).toBeGreaterThan(0);
    const wipe = await fetch(`${server.url}/api/v1/admin/wipe/stream`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ stream_name: 'diss' }),
    });
    expect(wipe.status).toBe(200);
    expect(sample(await scrape(metricsPort), 'aviso_memory_history_bytes')).toBe(0);
  });
});

describe('an in-memory max_total_size some notify would not fit in', () => {
  it('stops startup with one line naming the field and the smallest budget', async () => {
    const result = await runServerToExit({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', max_body_bytes: 4096 },
        notification_backend: { kind: 'in_memory', in_memory: { max_total_size: '23Ki' } },
      }),
    });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toEqual([
      "aviso-server: configuration error: notification_backend.in_memory.max_total_size: must be at least 24576 bytes (4 × application.max_body_bytes + 8 KiB, so that any notification notify accepts fits), got '23Ki' (23552 bytes)",
    ]);
    expect(result.stdout).not.toMatch(/startup\.server\.started/);
  });
});
