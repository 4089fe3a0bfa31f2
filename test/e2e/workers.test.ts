import { availableParallelism } from 'node:os';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBackend } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { postJsonOnNewConnection, request, requestOnNewConnection, type JsonResponse } from '../support/http.js';
import { metricSum } from '../support/metric-sum.js';
import { findFreePort } from '../support/ports.js';
import { TEST_SCHEMAS, serverConfig } from '../support/schemas.js';
import { runServerToExit, startServer, type LogLine, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * `application.workers` (D36) against the real process: a primary and two workers on one port
 * over one JetStream. Which worker served a request is read from its log lines (`worker_id`
 * next to the request id); requests sent on connections of their own alternate between workers.
 */

const WORKERS = 2;
/** Three processes start on two shared cores; the default 15 s is short when other work runs. */
const START_TIMEOUT_MS = 60_000;
const { mars, dissemination } = TEST_SCHEMAS;
const MARS_IDENTIFIER = { class: 'od', expver: '1', domain: 'g', date: '20250706', time: '1200', stream: 'enfo', step: '1' };
/** A schema that is not configured at startup. */
const FLOOD = {
  topic: { base: 'flood', key_order: ['region'] },
  identifier: { region: { type: 'StringHandler', required: true } },
};

function eventName(line: LogLine): unknown {
  return line.attributes?.['event.name'];
}

/** The worker whose line `eventName` carries `requestId`, waiting for the line. */
async function workerOf(server: RunningServer, event: string, requestId: string | null | undefined): Promise<number> {
  const line = await eventually(`${event} of request ${requestId}`, () =>
    server.logs.find((each) => eventName(each) === event && each.attributes?.request_id === requestId),
  );
  return line.attributes?.worker_id as number;
}

/** The `event` lines of every worker logged from index `from` on, once each worker has logged one. */
function reloadLines(server: RunningServer, from: number, event: string): Promise<LogLine[]> {
  return eventually(`${event} of every worker`, () => {
    const lines = server.logs.slice(from).filter((line) => eventName(line) === event);
    return new Set(lines.map((line) => line.attributes?.worker_id)).size === WORKERS && lines;
  });
}

/** Notifies on new connections until each worker has stored one; resolves with the answers. */
async function notifyOnEveryWorker(server: RunningServer, body: (attempt: number) => unknown): Promise<JsonResponse[]> {
  const served = new Set<number>();
  const answers: JsonResponse[] = [];
  for (let attempt = 0; served.size < WORKERS; attempt++) {
    if (attempt >= 10 * WORKERS) throw new Error(`only workers ${[...served].join(', ')} served ${attempt} notifications`);
    const answer = await postJsonOnNewConnection(`${server.url}/api/v1/notification`, body(attempt));
    expect(answer.status, answer.text).toBe(200);
    answers.push(answer);
    served.add(await workerOf(server, 'api.notification.processed', answer.headers.get('x-request-id')));
  }
  return answers;
}

describe('two workers on JetStream', { timeout: 60_000 }, () => {
  const backend = useBackend('jetstream');
  let server: RunningServer;
  let metricsPort = 0;
  let metricsUrl: string;

  const config = (schemas: Record<string, unknown>) =>
    backend.config({
      application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', workers: WORKERS },
      metrics: { enabled: true, port: metricsPort },
      notification_schema: schemas,
    });

  beforeAll(async () => {
    metricsPort = await findFreePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    server = await startServer({ config: config({ mars, dissemination }), startTimeoutMs: START_TIMEOUT_MS });
  }, START_TIMEOUT_MS + 10_000);
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  async function scrape(): Promise<string> {
    const response = await request(metricsUrl);
    expect(response.status).toBe(200);
    return response.text;
  }

  it('starts a primary and two workers serving one port, every line naming its process', async () => {
    // The primary's own lines are in order; a worker's come through its own pipe, so may come later.
    const listening = server.logs.filter((line) => eventName(line) === 'cluster.worker.listening');
    expect(listening.map((line) => line.attributes?.worker).sort()).toEqual([1, 2]);
    expect(listening.every((line) => line.attributes?.worker_id === 0 && line.attributes.port === server.port)).toBe(true);
    const pids = listening.map((line) => line.attributes?.pid);
    expect(new Set(pids).size).toBe(2);
    expect(pids).not.toContain(server.process.pid);
    const ready = server.logs.find((line) => eventName(line) === 'startup.server.started');
    expect(ready?.attributes).toMatchObject({ worker_id: 0, workers: 2, port: server.port });
    const started = await eventually("both workers' startup lines", () => {
      const lines = server.logs.filter((line) => eventName(line) === 'startup.worker.started');
      return lines.length === WORKERS && lines;
    });
    expect(started.map((line) => [line.attributes?.worker_id, line.attributes?.pid]).sort()).toEqual(
      listening.map((line) => [line.attributes?.worker, line.attributes?.pid]).sort(),
    );
    expect(server.logs.every((line) => [0, 1, 2].includes(line.attributes?.worker_id as number))).toBe(true);
    // The primary logged the configuration once; the workers did not repeat it.
    expect(
      server.logs.filter((line) => eventName(line) === 'startup.configuration.dumped').map((line) => line.attributes?.worker_id),
    ).toEqual([0]);
  });

  it('delivers to a watch on one worker what was notified through the other', async () => {
    const watch = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'mars', identifier: { class: 'od' } });
    try {
      expect(watch.status, watch.errorBody).toBe(200);
      expect((await watch.nextSignificant())?.json.type).toBe('connection_established');
      const watchWorker = await workerOf(server, 'api.watch.stream.established', watch.headers.get('x-request-id'));

      const answers = await notifyOnEveryWorker(server, (attempt) => ({
        event_type: 'mars',
        identifier: MARS_IDENTIFIER,
        payload: { note: `n${attempt}` },
      }));
      const servedBy = await Promise.all(
        answers.map((answer) => workerOf(server, 'api.notification.processed', answer.headers.get('x-request-id'))),
      );
      expect(servedBy).toContain(watchWorker === 1 ? 2 : 1);
      const notes: unknown[] = [];
      for (const _ of answers) {
        const event = await watch.nextSignificant();
        expect(event?.event).toBe('live-notification');
        notes.push((event?.json.data as { payload: { note: string } }).payload.note);
      }
      expect(notes).toEqual(answers.map((_, attempt) => `n${attempt}`));
    } finally {
      watch.close();
    }
  });

  it('answers /metrics on the primary with every worker added up', async () => {
    const before = await scrape();
    const answers = await notifyOnEveryWorker(server, () => ({
      event_type: 'dissemination',
      identifier: { destination: 'ecmwf', class: 'od' },
      payload: 'x',
    }));
    const after = await scrape();
    const success = { event_type: 'dissemination', status: 'success' };
    expect(metricSum(after, 'aviso_notifications_total', success) - metricSum(before, 'aviso_notifications_total', success)).toBe(
      answers.length,
    );
    expect(metricSum(after, 'aviso_build_info')).toBe(1);
    for (const worker of ['0', '1', '2']) expect(metricSum(after, 'process_start_time_seconds', { worker })).toBeGreaterThan(0);
    // Nothing answers /metrics on the public port, whichever worker gets the request.
    for (let i = 0; i < WORKERS; i++) expect((await requestOnNewConnection(`${server.url}/metrics`)).status).toBe(404);
  });

  it('reloads every worker on SIGHUP to the primary: a new event type is accepted by each', async () => {
    server.rewriteConfig(config({ mars, dissemination, flood: FLOOD }));
    const from = server.logs.length;
    server.signal('SIGHUP');
    const applied = await server.waitForLog('cluster.reload.applied', { from });
    expect(applied.attributes).toMatchObject({ worker_id: 0, source: 'signal', workers: [1, 2] });
    const succeeded = await reloadLines(server, from, 'configuration.reload.succeeded');
    expect(succeeded.map((line) => line.attributes?.worker_id).sort()).toEqual([1, 2]);
    expect(succeeded.every((line) => JSON.stringify(line.attributes?.event_types_added) === '["flood"]')).toBe(true);
    await notifyOnEveryWorker(server, (attempt) => ({ event_type: 'flood', identifier: { region: `r${attempt}` }, payload: 'x' }));
  });

  it('reloads every worker from the admin route of one, answering for all; a refusal is one for all', async () => {
    server.rewriteConfig(config({ mars, flood: FLOOD }));
    const reloadsBefore = await scrape();
    const from = server.logs.length;
    const answer = await requestOnNewConnection(`${server.url}/api/v1/admin/reload`, { method: 'POST' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toMatchObject({ success: true, event_types_removed: ['dissemination'], restart_required: [] });
    const requestId = answer.headers.get('x-request-id');
    const asking = await workerOf(server, 'configuration.reload.succeeded', requestId);
    const succeeded = await reloadLines(server, from, 'configuration.reload.succeeded');
    const other = succeeded.filter((line) => line.attributes?.worker_id !== asking);
    expect(other).toHaveLength(1);
    expect(other[0]?.attributes?.request_id).toBeUndefined();
    for (let i = 0; i < WORKERS; i++) {
      const gone = await postJsonOnNewConnection(`${server.url}/api/v1/notification`, {
        event_type: 'dissemination',
        identifier: {},
        payload: 'x',
      });
      expect(gone.json.code).toBe('UNKNOWN_EVENT_TYPE');
    }

    server.rewriteConfig(config({ mars, flood: { ...FLOOD, topic: { base: 'mars', key_order: ['region'] } } }));
    const refusedFrom = server.logs.length;
    const refused = await requestOnNewConnection(`${server.url}/api/v1/admin/reload`, { method: 'POST' });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.code).toBe('INVALID_CONFIGURATION');
    const line = await server.waitForLog('cluster.reload.refused', { from: refusedFrom });
    expect(line.attributes).toMatchObject({ source: 'admin', refused_by: [1, 2], applied_by: [] });
    expect(line.body).toBe(refused.json.message);
    const failed = await reloadLines(server, refusedFrom, 'configuration.reload.failed');
    expect(failed.every((line) => line.body === refused.json.message)).toBe(true);
    const after = await scrape();
    for (const result of ['success', 'failure']) {
      expect(
        metricSum(after, 'aviso_config_reloads_total', { result }) - metricSum(reloadsBefore, 'aviso_config_reloads_total', { result }),
      ).toBe(1);
    }
    // Still the configuration of the last reload that every worker applied.
    await notifyOnEveryWorker(server, () => ({ event_type: 'flood', identifier: { region: 'r' }, payload: 'x' }));
  });
});

describe('starting several workers', { timeout: START_TIMEOUT_MS + 10_000 }, () => {
  const backend = useBackend('jetstream');

  it('refuses several workers on the in_memory backend with one line before anything starts', async () => {
    const result = await runServerToExit({
      config: serverConfig({ application: { host: '127.0.0.1', port: 0, workers: 2 } }),
      startTimeoutMs: START_TIMEOUT_MS,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'aviso-server: configuration error: application.workers: 2 server processes need notification_backend.kind jetstream: the in_memory backend keeps its notifications inside one process (set application.workers to 1)\n',
    );
    expect(result.stdout).not.toContain('cluster.worker.forked');
    expect(result.stdout).not.toContain('startup.server.started');
  });

  it('reports a worker that cannot start with its one line, once, and exits 1', async () => {
    const closed = await findFreePort();
    const result = await runServerToExit({
      startTimeoutMs: START_TIMEOUT_MS,
      config: {
        ...serverConfig({ application: { host: '127.0.0.1', port: 0, workers: 2 } }),
        notification_backend: {
          kind: 'jetstream',
          jetstream: { nats_url: `nats://127.0.0.1:${closed}`, retry_attempts: 1, timeout_seconds: 1, reconnect_delay_ms: 100 },
        },
      },
    });
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^aviso-server: backend initialization failed: /);
    expect(result.stdout).toContain('cluster.startup.failed');
    expect(result.stdout).not.toContain('startup.server.started');
  });

  it('starts one worker per usable CPU for auto', async () => {
    const server = await startServer({
      config: backend.config({ application: { host: '127.0.0.1', port: 0, workers: 'auto' } }),
      startTimeoutMs: START_TIMEOUT_MS,
    });
    try {
      const cpus = availableParallelism();
      expect(server.logs.find((line) => eventName(line) === 'startup.server.started')?.attributes?.workers).toBe(cpus);
      if (cpus > 1) expect(server.logs.filter((line) => eventName(line) === 'cluster.worker.listening')).toHaveLength(cpus);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe('two workers at their connection limit (D44)', { timeout: START_TIMEOUT_MS + 30_000 }, () => {
  const backend = useBackend('jetstream');
  /** Per worker: two connections, one of them the reserve above the one stream. */
  const MAX_CONNECTIONS = 2;
  const OPENED = 3 * WORKERS * MAX_CONNECTIONS;

  it("closes the connections over each worker's limit at once and counts them, instead of passing them round the workers", async () => {
    const metricsPort = await findFreePort();
    const server = await startServer({
      config: backend.config({
        application: { host: '127.0.0.1', port: 0, workers: WORKERS, max_connections: MAX_CONNECTIONS, max_streams: 1 },
        metrics: { enabled: true, port: metricsPort },
      }),
      startTimeoutMs: START_TIMEOUT_MS,
    });
    const sockets: Socket[] = [];
    try {
      const closed = new Set<Socket>();
      for (let index = 0; index < OPENED; index++) {
        const socket = connect(server.port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.on('close', () => closed.add(socket));
        sockets.push(socket);
      }
      // Node's own bound would leave the surplus connected and circling between the full
      // workers; here each worker keeps what it may hold and closes the rest.
      const open = await eventually('the surplus closed', () => {
        const still = OPENED - closed.size;
        return still <= WORKERS * MAX_CONNECTIONS && still;
      });
      expect(open).toBeGreaterThan(0);
      const refused = await eventually('every refusal counted across the workers', async () => {
        const counted = metricSum((await request(`http://127.0.0.1:${metricsPort}/metrics`)).text, 'aviso_http_connections_refused_total');
        return counted === closed.size && counted;
      });
      expect(refused).toBeGreaterThanOrEqual(OPENED - WORKERS * MAX_CONNECTIONS);
    } finally {
      for (const socket of sockets) socket.destroy();
      expect(await server.stop()).toBe(0);
    }
  });
});
