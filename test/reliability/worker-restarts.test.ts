import { describe, expect, it } from 'vitest';
import { useBackend } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { postJsonOnNewConnection, request, type JsonResponse } from '../support/http.js';
import { metricSum } from '../support/metric-sum.js';
import { findFreePort } from '../support/ports.js';
import { TEST_SCHEMAS, serverConfig } from '../support/schemas.js';
import { startServer, type LogLine, type RunningServer } from '../support/server-process.js';
import { RawSseStream, sequenceOf, type RawFrame } from './support/raw-sse.js';

/**
 * A worker that dies is replaced (D36): the real server with two workers on JetStream, one
 * worker killed with SIGKILL. The port keeps serving through the surviving worker, the killed
 * worker's clients resume from their cursor, the replacement serves what its sibling serves
 * (schemas reloaded before included), counters do not go down, and a worker that keeps dying is
 * replaced after a growing delay.
 */

const WORKERS = 2;
/** Three processes start on two shared cores; the default 15 s is short when other work runs. */
const START_TIMEOUT_MS = 60_000;
const { mars } = TEST_SCHEMAS;
const MARS_WATCH = JSON.stringify({ event_type: 'mars', identifier: { class: 'od' } });
const MARS_IDENTIFIER = { class: 'od', expver: '1', domain: 'g', date: '20250706', time: '1200', stream: 'enfo', step: '1' };
const FLOOD = {
  topic: { base: 'flood', key_order: ['region'] },
  identifier: { region: { type: 'StringHandler', required: true } },
};

function eventName(line: LogLine): unknown {
  return line.attributes?.['event.name'];
}

/** The primary's line `event` about `worker` logged from index `from` on. */
function primaryLine(server: RunningServer, event: string, worker: number, from: number): Promise<LogLine> {
  return eventually(`${event} of worker ${worker}`, () =>
    server.logs.slice(from).find((line) => eventName(line) === event && line.attributes?.worker === worker),
  );
}

async function workerOf(server: RunningServer, event: string, requestId: string | null | undefined): Promise<number> {
  const line = await eventually(`${event} of request ${requestId}`, () =>
    server.logs.find((each) => eventName(each) === event && each.attributes?.request_id === requestId),
  );
  return line.attributes?.worker_id as number;
}

function pidOf(server: RunningServer, worker: number): number {
  const listening = server.logs.filter((line) => eventName(line) === 'cluster.worker.listening' && line.attributes?.worker === worker);
  return listening.at(-1)?.attributes?.pid as number;
}

/** Opens watches on their own connections until `worker` holds one. */
async function watchOn(server: RunningServer, worker: number, body = MARS_WATCH): Promise<RawSseStream> {
  for (let attempt = 0; attempt < 10 * WORKERS; attempt++) {
    const stream = new RawSseStream(server.url, '/api/v1/watch', body);
    await stream.opened();
    if ((await workerOf(server, 'api.watch.stream.established', stream.requestId)) === worker) return stream;
    stream.destroy();
  }
  throw new Error(`no watch reached worker ${worker}`);
}

function notifyMars(server: RunningServer, note: string): Promise<JsonResponse> {
  return postJsonOnNewConnection(`${server.url}/api/v1/notification`, {
    event_type: 'mars',
    identifier: MARS_IDENTIFIER,
    payload: { note },
  });
}

/** Notifies until `worker` stored one; resolves with every answer (all must be 200). */
async function notifyUntilServedBy(
  server: RunningServer,
  worker: number,
  body: (attempt: number) => unknown,
  from: number,
): Promise<JsonResponse[]> {
  const answers: JsonResponse[] = [];
  for (let attempt = 0; attempt < 10 * WORKERS; attempt++) {
    const answer = await postJsonOnNewConnection(`${server.url}/api/v1/notification`, body(attempt));
    expect(answer.status, answer.text).toBe(200);
    answers.push(answer);
    const line = await eventually('the notification line', () =>
      server.logs
        .slice(from)
        .find(
          (each) => eventName(each) === 'api.notification.processed' && each.attributes?.request_id === answer.headers.get('x-request-id'),
        ),
    );
    if (line.attributes?.worker_id === worker) return answers;
  }
  throw new Error(`worker ${worker} stored none of ${answers.length} notifications`);
}

/** The CloudEvents a stream received, live or replayed (control frames share the live event name). */
function notifications(stream: RawSseStream): RawFrame[] {
  return stream
    .significant()
    .filter((frame) => (frame.event === 'live-notification' || frame.event === 'replay') && /^\{"data":/.test(frame.data));
}

function notes(stream: RawSseStream): string[] {
  return notifications(stream).map((frame) => (JSON.parse(frame.data) as { data: { payload: { note: string } } }).data.payload.note);
}

describe('a worker that dies', () => {
  const backend = useBackend('jetstream');

  it('is replaced while its sibling keeps serving; its clients resume; the replacement serves the reloaded schemas', async () => {
    const metricsPort = await findFreePort();
    const config = (schemas: Record<string, unknown>) =>
      backend.config({
        application: { ...(serverConfig().application as object), workers: WORKERS },
        metrics: { enabled: true, port: metricsPort },
        notification_schema: schemas,
      });
    const server = await startServer({ config: config({ mars }), startTimeoutMs: START_TIMEOUT_MS });
    const scrape = async () => (await request(`http://127.0.0.1:${metricsPort}/metrics`)).text;
    const success = { event_type: 'mars', status: 'success' };
    try {
      server.rewriteConfig(config({ mars, flood: FLOOD }));
      const reloadFrom = server.logs.length;
      server.signal('SIGHUP');
      await server.waitForLog('cluster.reload.applied', { from: reloadFrom });

      const onVictim = await watchOn(server, 1);
      const onSurvivor = await watchOn(server, 2);
      expect((await notifyMars(server, 'before')).status).toBe(200);
      await eventually('both watches got the first notification', () => notes(onVictim).length === 1 && notes(onSurvivor).length === 1);
      const lastSeen = sequenceOf(notifications(onVictim).at(-1) as RawFrame);
      const counted = metricSum(await scrape(), 'aviso_notifications_total', success);

      const killedFrom = server.logs.length;
      const victimPid = pidOf(server, 1);
      const killedAt = performance.now();
      process.kill(victimPid, 'SIGKILL');
      const exited = await primaryLine(server, 'cluster.worker.exited', 1, killedFrom);
      expect(exited.attributes).toMatchObject({ pid: victimPid, signal: 'SIGKILL', restart_in_ms: 0 });
      await onVictim.closed();
      expect(onVictim.closeReason).toBeUndefined();

      // The surviving worker serves every request while the replacement starts.
      const during: string[] = [];
      for (let i = 0; i < 4; i++) {
        const answer = await notifyMars(server, `during-${i}`);
        expect(answer.status, answer.text).toBe(200);
        during.push(`during-${i}`);
      }
      const replaced = await primaryLine(server, 'cluster.worker.listening', 1, killedFrom);
      const replacedAfterMs = performance.now() - killedAt;
      expect(replaced.attributes?.pid).not.toBe(victimPid);

      const afterFrom = server.logs.length;
      const throughReplacement = await notifyUntilServedBy(
        server,
        1,
        (attempt) => ({
          event_type: 'mars',
          identifier: MARS_IDENTIFIER,
          payload: { note: `after-${attempt}` },
        }),
        afterFrom,
      );
      const after = throughReplacement.map((_, attempt) => `after-${attempt}`);
      // The replacement started with the schemas of the reload its sibling applied.
      await notifyUntilServedBy(
        server,
        1,
        (attempt) => ({ event_type: 'flood', identifier: { region: `r${attempt}` }, payload: 'x' }),
        afterFrom,
      );

      await eventually('the surviving watch got everything', () => notes(onSurvivor).length === 1 + during.length + after.length);
      expect(notes(onSurvivor)).toEqual(['before', ...during, ...after]);
      expect(onSurvivor.hasEnded).toBe(false);

      // The killed worker's client resumes from its cursor: nothing lost, nothing twice.
      const resumed = new RawSseStream(
        server.url,
        '/api/v1/watch',
        JSON.stringify({ ...JSON.parse(MARS_WATCH), from_id: String(lastSeen + 1) }),
      );
      await eventually('the resumed watch caught up', () => notes(resumed).length === during.length + after.length);
      expect(notes(resumed)).toEqual([...during, ...after]);
      resumed.destroy();

      // Counters kept what the killed worker had counted.
      expect(metricSum(await scrape(), 'aviso_notifications_total', success)).toBe(counted + during.length + after.length);
      onSurvivor.destroy();
      console.info(
        `[worker-restarts] replacement listening ${Math.round(replacedAfterMs)} ms after SIGKILL; ` +
          `${during.length} notifications served meanwhile, ${after.length} until one reached the replacement`,
      );
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 150_000);

  it('applies a reload made while a worker was being replaced to the replacement too', async () => {
    const config = (schemas: Record<string, unknown>) =>
      backend.config({ application: { ...(serverConfig().application as object), workers: WORKERS }, notification_schema: schemas });
    const server = await startServer({ config: config({ mars }), startTimeoutMs: START_TIMEOUT_MS });
    try {
      const from = server.logs.length;
      process.kill(pidOf(server, 1), 'SIGKILL');
      const forked = await primaryLine(server, 'cluster.worker.forked', 1, from);
      // The replacement has its starting configuration once it logs; the reload comes after that.
      await eventually('the replacement logging', () =>
        server.logs.slice(server.logs.indexOf(forked)).some((line) => line.attributes?.worker_id === 1),
      );
      server.rewriteConfig(config({ mars, flood: FLOOD }));
      server.signal('SIGHUP');
      await server.waitForLog('cluster.reload.applied', { from });
      await primaryLine(server, 'cluster.worker.listening', 1, from);
      const caughtUp = server.logs.slice(from).find((line) => eventName(line) === 'cluster.reload.caught_up');
      await notifyUntilServedBy(
        server,
        1,
        (attempt) => ({ event_type: 'flood', identifier: { region: `r${attempt}` }, payload: 'x' }),
        from,
      );
      console.info(
        `[worker-restarts] the replacement ${caughtUp ? 'started before the reload and applied it once it listened' : 'started with the reloaded configuration'}`,
      );
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 150_000);

  it('keeps dying: each replacement waits longer', async () => {
    const server = await startServer({
      config: backend.config({ application: { ...(serverConfig().application as object), workers: WORKERS } }),
      startTimeoutMs: START_TIMEOUT_MS,
    });
    try {
      const delays: unknown[] = [];
      let pid = pidOf(server, 2);
      let from = server.logs.length;
      for (let kill = 0; kill < 3; kill++) {
        process.kill(pid, 'SIGKILL');
        const exited = await primaryLine(server, 'cluster.worker.exited', 2, from);
        delays.push(exited.attributes?.restart_in_ms);
        const forked = await primaryLine(server, 'cluster.worker.forked', 2, server.logs.indexOf(exited));
        pid = forked.attributes?.pid as number;
        from = server.logs.indexOf(forked);
      }
      expect(delays).toEqual([0, 1_000, 2_000]);
      const back = await primaryLine(server, 'cluster.worker.listening', 2, from);
      expect(back.attributes?.pid).toBe(pid);
      await notifyUntilServedBy(
        server,
        2,
        (attempt) => ({ event_type: 'mars', identifier: MARS_IDENTIFIER, payload: { note: `n${attempt}` } }),
        0,
      );
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 150_000);
});
