import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBackend } from '../support/backends.js';
import { eventually } from '../support/eventually.js';
import { queryOf } from '../support/get-streams.js';
import { postJson, requestOnNewConnection, type JsonResponse } from '../support/http.js';
import { MARS_EXAMPLE, TEST_SCHEMAS } from '../support/schemas.js';
import { startServer, type LogLine, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * D49 against real processes: two JetStream servers and one with two workers, on one NATS. Streams
 * of every kind (watch and replay, POST and GET) are opened on each process; the admin list asked
 * of any process finds each stream exactly once, with its filter, phase, last sequence and the
 * process that holds it; a stream closed through another process gets its close frame, and its
 * client resumes from its cursor.
 */

const START_TIMEOUT_MS = 60_000;
const { mars } = TEST_SCHEMAS;
const LIVE = { class: 'od' };
const HISTORY = { class: 'rd' };
type Kind = 'watch POST' | 'watch GET' | 'replay POST' | 'replay GET';
const KINDS: readonly Kind[] = ['watch POST', 'watch GET', 'replay POST', 'replay GET'];

interface Opened {
  readonly kind: Kind;
  readonly client: SseClient;
  readonly id: string;
  /** The process holding it, `<hostname>:<pid>`. */
  readonly process: string;
}

interface ListedStream {
  readonly id: string;
  readonly process: string;
  readonly route: string;
  readonly method: string;
  readonly filter: unknown;
  readonly phase: string;
  readonly last_sequence: number | null;
  readonly delivered: number;
}

interface StreamsAnswer {
  readonly streams: ListedStream[];
  readonly total: number;
  readonly processes: { readonly answered: string[]; readonly not_answering: string[]; readonly cluster_unreachable: boolean };
}

/** A notification of the example's topic with this class and step. */
const notification = (identifier: { class: string }, step = '7') => ({
  ...MARS_EXAMPLE,
  identifier: { ...MARS_EXAMPLE.identifier, ...identifier, step },
});

const processId = (pid: number | undefined): string => `${hostname()}:${pid}`;
const eventName = (line: LogLine): unknown => line.attributes?.['event.name'];

/** Opens one stream of `kind` on a new connection; replays start at 1, so they have history to send. */
async function open(server: RunningServer, kind: Kind): Promise<SseClient> {
  const [route, method] = kind.split(' ') as ['watch' | 'replay', 'POST' | 'GET'];
  const body = route === 'watch' ? { event_type: 'mars', identifier: LIVE } : { event_type: 'mars', identifier: HISTORY, from_id: '1' };
  const client =
    method === 'POST'
      ? await SseClient.open(`${server.url}/api/v1/${route}`, body)
      : await SseClient.openGet(`${server.url}/api/v1/${route}?${queryOf(body)}`);
  expect(client.status, client.errorBody).toBe(200);
  expect((await client.nextSignificant())?.json.type).toBe(route === 'watch' ? 'connection_established' : 'replay_started');
  // A replay holds still once its first batch, sequence 1, is out.
  if (route === 'replay') expect(await nextNotificationId(client)).toBe('mars@1');
  return client;
}

/** The CloudEvent id of the next notification, past the control frames. */
async function nextNotificationId(client: SseClient): Promise<unknown> {
  for (;;) {
    const event = await client.nextSignificant();
    if (event === undefined || event.json.specversion !== undefined) return event?.json.id;
  }
}

/** The worker process that logged the stream's `established` line. */
async function holderAmongWorkers(
  server: RunningServer,
  route: string,
  requestId: string,
  workerPids: Map<number, number>,
): Promise<string> {
  const line = await eventually(`the established line of ${requestId}`, () =>
    server.logs.find((each) => eventName(each) === `api.${route}.stream.established` && each.attributes?.request_id === requestId),
  );
  return processId(workerPids.get(line.attributes?.worker_id as number));
}

async function list(server: RunningServer): Promise<StreamsAnswer> {
  const answer: JsonResponse = await requestOnNewConnection(`${server.url}/api/v1/admin/streams?event_type=mars&limit=1000`);
  expect(answer.status, answer.text).toBe(200);
  return answer.json as unknown as StreamsAnswer;
}

describe('open streams across JetStream processes and workers', { timeout: 180_000 }, () => {
  const backend = useBackend('jetstream');
  let single: RunningServer[] = [];
  let workers: RunningServer;
  const workerPids = new Map<number, number>();
  const opened: Opened[] = [];

  const config = (workerCount?: number) =>
    backend.config({
      application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', ...(workerCount ? { workers: workerCount } : {}) },
      notification_schema: { mars },
      // One notification per replay batch and a long pause after it: a replay stays open, replaying.
      watch_endpoint: { replay_batch_size: 1, replay_batch_delay_ms: 600_000 },
    });

  beforeAll(async () => {
    [single[0], single[1], workers] = await Promise.all([
      startServer({ config: config(), startTimeoutMs: START_TIMEOUT_MS }),
      startServer({ config: config(), startTimeoutMs: START_TIMEOUT_MS }),
      startServer({ config: config(2), startTimeoutMs: START_TIMEOUT_MS }),
    ]);
    single = single.slice(0, 2);
    const listening = await eventually('both workers listening', () => {
      const lines = workers.logs.filter((line) => eventName(line) === 'cluster.worker.listening');
      return lines.length === 2 && lines;
    });
    for (const line of listening) workerPids.set(line.attributes?.worker as number, line.attributes?.pid as number);

    // History for the replays: sequences 1 and 2.
    for (const step of [1, 2])
      expect((await postJson(`${single[0]!.url}/api/v1/notification`, notification(HISTORY, String(step)))).status).toBe(200);
    for (const server of single) {
      for (const kind of KINDS) {
        const client = await open(server, kind);
        opened.push({ kind, client, id: client.headers.get('x-request-id') ?? '', process: processId(server.process.pid) });
      }
    }
    // Each kind twice in a row: connections alternate between the workers, so each gets one of each.
    for (const kind of KINDS.flatMap((kind) => [kind, kind])) {
      const client = await open(workers, kind);
      const id = client.headers.get('x-request-id') ?? '';
      opened.push({ kind, client, id, process: await holderAmongWorkers(workers, kind.split(' ')[0]!, id, workerPids) });
    }
    // Sequence 3 reaches every live watch.
    expect((await postJson(`${single[1]!.url}/api/v1/notification`, notification(LIVE))).status).toBe(200);
    for (const { kind, client } of opened) if (kind.startsWith('watch')) expect(await nextNotificationId(client)).toBe('mars@3');
  }, 4 * START_TIMEOUT_MS);

  afterAll(async () => {
    for (const { client } of opened) client.close();
    await Promise.all([...single, workers].filter(Boolean).map((server) => server.stop()));
  });

  it('lists every stream exactly once from every process, with its owner, filter, phase and last sequence', async () => {
    const everyProcess = [...single.map((server) => processId(server.process.pid)), ...[...workerPids.values()].map(processId)];
    expect(new Set(opened.filter((stream) => stream.kind !== 'watch POST').map((stream) => stream.process)).size).toBe(4);
    // The workers' lists are asked on new connections until each worker answered one.
    const askers = new Set<string>();
    const answers: StreamsAnswer[] = [];
    for (const server of single) answers.push(await list(server));
    for (let attempt = 0; askers.size < 2; attempt++) {
      expect(attempt).toBeLessThan(10);
      const answer = await list(workers);
      askers.add(answer.processes.answered[0]!);
      answers.push(answer);
    }
    expect([...answers.map((answer) => answer.processes.answered[0])].sort()).toEqual(expect.arrayContaining([...everyProcess].sort()));
    for (const answer of answers) {
      expect(answer.processes.cluster_unreachable).toBe(false);
      expect(answer.processes.not_answering).toEqual([]);
      expect([...answer.processes.answered].sort()).toEqual([...everyProcess].sort());
      expect(answer.total).toBe(opened.length);
      expect(answer.streams.map((stream) => stream.id).sort()).toEqual(opened.map((stream) => stream.id).sort());
      for (const stream of opened) {
        const listed = answer.streams.find((each) => each.id === stream.id)!;
        const [route, method] = stream.kind.split(' ');
        const live = route === 'watch';
        expect(listed).toMatchObject({
          process: stream.process,
          route,
          method,
          filter: live ? LIVE : HISTORY,
          phase: live ? 'live' : 'replaying',
          last_sequence: live ? 3 : 1,
          delivered: 1,
        });
      }
    }
  });

  it('closes a stream through another process: its close frame, then its client resumes from its cursor', async () => {
    const [holder, asker] = single as [RunningServer, RunningServer];
    const target = opened.find((stream) => stream.kind === 'watch POST' && stream.process === processId(holder.process.pid))!;
    // The watch got sequence 3 live; 4 is stored while it is closed.
    const closed = await requestOnNewConnection(`${asker.url}/api/v1/admin/streams/${target.id}`, { method: 'DELETE' });
    expect(closed.status, closed.text).toBe(200);
    expect(closed.json).toMatchObject({ success: true, message: 'Stream closed', stream_id: target.id, process: target.process });
    const rest = (await target.client.rest()).filter((event) => event.event !== 'heartbeat');
    expect(rest.at(-1)?.json).toMatchObject({ reason: 'end_of_stream', cause: 'operator_closed' });
    expect((await postJson(`${asker.url}/api/v1/notification`, notification(LIVE))).status).toBe(200);

    const resumed = await SseClient.open(`${holder.url}/api/v1/watch`, { event_type: 'mars', identifier: LIVE, from_id: '4' });
    opened.push({ kind: 'watch POST', client: resumed, id: resumed.headers.get('x-request-id') ?? '', process: target.process });
    expect(resumed.status, resumed.errorBody).toBe(200);
    expect(await nextNotificationId(resumed)).toBe('mars@4');

    // Gone from every process's list; a second close of it is a 404.
    for (const server of [holder, asker, workers]) expect((await list(server)).streams.map((stream) => stream.id)).not.toContain(target.id);
    const again = await requestOnNewConnection(`${workers.url}/api/v1/admin/streams/${target.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(again.json).toMatchObject({ success: false, message: 'Stream not found', stream_id: target.id });
  });
});
