import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { reapOnExit } from '../support/child-reaper.js';
import { RULE_FILES, allAlertRules, asBoolComparisons, dashboardQueries, withDashboardVariables } from '../support/deploy-queries.js';
import { ROOT, runTool } from '../support/deploy-tools.js';
import { eventually } from '../support/eventually.js';
import { postJson } from '../support/http.js';
import { startNatsServer, type NatsServerProcess } from '../support/nats-server.js';
import { findFreePort } from '../support/ports.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';
import { TRANSCRIPT_REQUEST, transcriptNotification } from '../support/transcript.js';

/**
 * The dashboard and the alert rules of deploy/ against the real thing: Debian's Prometheus scrapes
 * the real server process (JetStream on a private nats-server) every second under a small load;
 * every dashboard expression and every alert expression is evaluated through Prometheus's HTTP
 * API and must return series (a misspelt metric or label would return none); then NATS is stopped
 * and AvisoBackendNotReady must go pending.
 */

interface PrometheusProcess {
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
}

interface QueryAnswer {
  readonly status: string;
  readonly error?: string;
  readonly data?: { resultType: string; result: unknown[] };
}

interface ActiveAlert {
  readonly labels: Record<string, string>;
  readonly state: string;
}

let nats: NatsServerProcess;
let server: RunningServer;
let prometheus: PrometheusProcess;
let storage: string;
const streams: SseClient[] = [];

async function startPrometheus(metricsPort: number): Promise<PrometheusProcess> {
  runTool('prometheus', ['--version']);
  storage = mkdtempSync(join(tmpdir(), 'aviso-prometheus-'));
  const configFile = join(storage, 'prometheus.yml');
  writeFileSync(
    configFile,
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: RULE_FILES.map((file) => join(ROOT, file)),
      scrape_configs: [{ job_name: 'aviso', static_configs: [{ targets: [`127.0.0.1:${metricsPort}`] }] }],
    }),
  );
  const port = await findFreePort();
  const child = spawn(
    'prometheus',
    [`--config.file=${configFile}`, `--storage.tsdb.path=${join(storage, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  reapOnExit(child);
  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-16_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    'Prometheus to be ready',
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${output}`);
      return (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  return { url, child, output: () => output };
}

async function query(expr: string): Promise<QueryAnswer> {
  const response = await fetch(`${prometheus.url}/api/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ query: expr }),
  });
  return (await response.json()) as QueryAnswer;
}

async function alerts(): Promise<ActiveAlert[]> {
  const answer = (await (await fetch(`${prometheus.url}/api/v1/alerts`)).json()) as { data: { alerts: ActiveAlert[] } };
  return answer.data.alerts;
}

/** Expressions that failed or returned no series, each with the reason. */
async function unanswered(expressions: readonly { what: string; expr: string }[]): Promise<string[]> {
  const failures: string[] = [];
  for (const { what, expr } of expressions) {
    const answer = await query(expr);
    if (answer.status !== 'success') failures.push(`${what}: ${answer.error ?? answer.status}\n  ${expr}`);
    else if ((answer.data?.result ?? []).length === 0) failures.push(`${what}: no series\n  ${expr}`);
  }
  return failures;
}

beforeAll(async () => {
  nats = await startNatsServer();
  const metricsPort = await findFreePort();
  server = await startServer({
    config: serverConfig({
      notification_backend: { kind: 'jetstream', jetstream: { nats_url: nats.url, max_reconnect_attempts: 0, reconnect_delay_ms: 200 } },
      metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
    }),
  });
  prometheus = await startPrometheus(metricsPort);

  // A small load over about 20 scrapes: notifications, live streams, replays, unknown paths.
  for (let i = 0; i < 3; i++) {
    const stream = await SseClient.open(`${server.url}/api/v1/watch`, TRANSCRIPT_REQUEST);
    expect(stream.status).toBe(200);
    streams.push(stream);
  }
  const until = Date.now() + 20_000;
  for (let i = 0; Date.now() < until; i++) {
    expect((await postJson(`${server.url}/api/v1/notification`, transcriptNotification(`load-${i}`))).status).toBe(200);
    // Some 4xx answers as well; refused notifications are left out, since a few of them over a
    // minute of data are already the error ratio AvisoNotifyErrorRatioHigh warns about.
    if (i % 5 === 0) expect((await fetch(`${server.url}/api/v1/no-such-path`)).status).toBe(404);
    if (i % 10 === 0) {
      const replay = await SseClient.open(`${server.url}/api/v1/replay`, { ...TRANSCRIPT_REQUEST, from_id: '1' });
      expect(replay.status).toBe(200);
      await replay.rest(10_000);
      replay.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // Enough samples in Prometheus for rates over the last minute.
  await eventually('Prometheus to hold 15 scrapes of the server', async () => {
    const answer = await query('count_over_time(aviso_build_info[1m]) >= 15');
    return (answer.data?.result ?? []).length > 0;
  });
}, 180_000);

afterAll(async () => {
  for (const stream of streams.splice(0)) stream.close();
  prometheus?.child.kill('SIGTERM');
  await server?.stop();
  await nats?.stop();
  if (storage) rmSync(storage, { recursive: true, force: true });
});

describe('Prometheus scraping a real aviso-ts on JetStream', () => {
  it('scrapes the server', async () => {
    const up = await query('up{job="aviso"}');
    expect(up.data?.result).toEqual([expect.objectContaining({ value: [expect.any(Number), '1'] })]);
  });

  it('every dashboard expression returns series', async () => {
    const expressions = dashboardQueries().map(({ panel, expr }) => ({ what: panel, expr: withDashboardVariables(expr) }));
    expect(expressions.length).toBeGreaterThan(30);
    expect(await unanswered(expressions)).toEqual([]);
  }, 60_000);

  it('every alert expression returns series (its comparisons made bool), and none fires on a healthy server', async () => {
    const rules = allAlertRules();
    expect(await unanswered(rules.map((rule) => ({ what: rule.alert, expr: asBoolComparisons(rule.expr) })))).toEqual([]);
    expect((await alerts()).map((alert) => alert.labels.alertname)).toEqual([]);
  }, 60_000);

  it('AvisoBackendNotReady goes pending once NATS is stopped', async () => {
    expect((await query('aviso_backend_connected')).data?.result).toEqual([expect.objectContaining({ value: [expect.any(Number), '1'] })]);
    await nats.stop();
    const pending = await eventually(
      'AvisoBackendNotReady to be pending',
      async () => (await alerts()).find((alert) => alert.labels.alertname === 'AvisoBackendNotReady'),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(pending).toMatchObject({ state: 'pending', labels: { backend: 'jetstream', job: 'aviso', severity: 'critical' } });
    expect((await fetch(`${server.url}/ready`)).status).toBe(503);
  }, 90_000);
});
