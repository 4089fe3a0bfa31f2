import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BackendUnderTest } from '../support/backends.js';
import { postJson, request, UUID_V4, type JsonResponse } from '../support/http.js';
import { eventually } from '../support/eventually.js';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.js';
import { startNatsServer, type NatsServerProcess } from '../support/nats-server.js';
import type { RunningServer } from '../support/server-process.js';
import { withoutHeartbeats, type SseClient, type SseEvent } from '../support/sse-client.js';
import { TRANSCRIPT_REQUEST, TRANSCRIPT_TOPIC, transcriptNotification } from '../support/transcript.js';
import { trackProcesses } from '../support/tracked-processes.js';

/**
 * NATS faults (issue 9): a real aviso-ts process on a private NATS that is killed and brought back,
 * and on a 3-node JetStream cluster that loses a node. Throughout, notify traffic runs and a watcher
 * stays open; afterwards every acknowledged notify must be stored exactly once and the watcher must
 * have seen all of them (directly, or by resuming from its cursor after a final frame).
 *
 * Measured figures (recovery and failover times, counts) are printed with the `[nats-faults]` prefix;
 * nothing asserts a speed, only eventual recovery within generous bounds.
 */

/** Generous bound for aviso to work again once NATS is back; recovery normally takes a second or two. */
const RECOVERY_BOUND_MS = 45_000;
/** `eventually`'s options while aviso recovers. */
const WHILE_RECOVERING = { timeoutMs: RECOVERY_BOUND_MS };
/**
 * No notify (and no refused watch or replay) may take longer than this: the backend's publish
 * deadline (10 s, covering the ack timeout, retries with backoff and a re-ensure of the stream) plus
 * slack for a loaded machine.
 */
const NOTIFY_BOUND_MS = 15_000;
/** Each traffic run tags its notes, so runs sharing a stream are told apart. */
let trafficRuns = 0;

const { start, open } = trackProcesses();
const traffics: NotifyTraffic[] = [];
afterEach(async () => {
  for (const traffic of traffics.splice(0)) await traffic.stop();
});

function report(what: string, figures: Record<string, unknown>): void {
  console.log(`[nats-faults] ${what}: ${JSON.stringify(figures)}`);
}

function natsConfig(natsUrl: string, jetstream: Record<string, unknown> = {}): Record<string, unknown> {
  const config = new BackendUnderTest('jetstream', natsUrl).config({
    watch_endpoint: { sse_heartbeat_interval_sec: 1 },
  }) as { notification_backend: { jetstream: Record<string, unknown> } };
  Object.assign(config.notification_backend.jetstream, { timeout_seconds: 5, ...jetstream });
  return config;
}

function noteOf(event: SseEvent): string | undefined {
  return (event.json.data as { payload?: { note?: string } } | undefined)?.payload?.note ?? undefined;
}

function sequenceOf(id: string): number {
  return Number(id.slice(id.lastIndexOf('@') + 1));
}

interface NotifyOutcome {
  readonly note: string;
  readonly status: number;
  readonly body: JsonResponse['json'];
  readonly startedAt: number;
  readonly durationMs: number;
}

/**
 * Sequential notify traffic, one request at a time (so acknowledged sequences follow send order),
 * until stopped. Each request's outcome and duration is kept.
 */
class NotifyTraffic {
  readonly outcomes: NotifyOutcome[] = [];
  private stopped = false;
  private readonly running: Promise<void>;
  private readonly waiters: (() => void)[] = [];

  /** Prefix of this run's notes. */
  readonly prefix = `traffic${++trafficRuns}-`;

  constructor(private readonly server: RunningServer) {
    this.running = this.run();
    traffics.push(this);
  }

  private async run(): Promise<void> {
    for (let i = 0; !this.stopped; i++) {
      const note = `${this.prefix}${i}`;
      const startedAt = Date.now();
      // A transport failure (status 0) is a failure too: aviso must always answer.
      const response = await postJson(`${this.server.url}/api/v1/notification`, transcriptNotification(note)).catch((error: unknown) => ({
        status: 0,
        json: { transport_error: String(error) },
      }));
      this.outcomes.push({ note, status: response.status, body: response.json, startedAt, durationMs: Date.now() - startedAt });
      for (const wake of this.waiters.splice(0)) wake();
      // Pacing, not synchronisation: keeps the load modest on a small machine.
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  get acknowledged(): NotifyOutcome[] {
    return this.outcomes.filter((o) => o.status === 200);
  }

  get failed(): NotifyOutcome[] {
    return this.outcomes.filter((o) => o.status !== 200);
  }

  /** Resolves once `predicate` holds for the outcomes so far. */
  async until(what: string, predicate: (outcomes: readonly NotifyOutcome[]) => boolean, timeoutMs = RECOVERY_BOUND_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.outcomes)) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for notify traffic: ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}

/**
 * Every stored traffic notification, from a replay of the whole stream. A replay that fails with an
 * `error` frame is retried (as a client does) up to `attempts` times; the failures are counted.
 */
async function storedTraffic(
  server: RunningServer,
  traffic: NotifyTraffic,
  attempts = 1,
): Promise<{ stored: { id: string; note: string }[]; failedReplays: string[] }> {
  const failedReplays: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const client = await open(server, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '0' });
    expect(client.status, client.errorBody).toBe(200);
    const frames = withoutHeartbeats(await client.rest(30_000));
    const summary = frames
      .filter((f) => !f.json.specversion)
      .map((f) => f.data)
      .join('\n');
    expect(frames.at(-1)?.json.reason, summary).toBe('end_of_stream');
    if (!frames.some((f) => f.json.type === 'replay_completed')) {
      const error = frames.find((f) => f.event === 'error');
      expect(error?.json.error, summary).toBe('stream_processing_failed');
      failedReplays.push(String(error?.json.message));
      if (attempt < attempts) continue;
      expect.fail(`replay failed ${failedReplays.length} time(s): ${failedReplays.join('; ')}`);
    }
    const stored = frames
      .filter((f) => f.event === 'replay' && noteOf(f)?.startsWith(traffic.prefix))
      .map((f) => ({ id: f.json.id as string, note: noteOf(f) as string }));
    return { stored, failedReplays };
  }
}

/** Checks the counts and identities: every acknowledged notify stored exactly once. */
function expectNothingAcknowledgedLost(traffic: NotifyTraffic, stored: readonly { id: string; note: string }[]): void {
  const storedNotes = stored.map((s) => s.note);
  expect(new Set(storedNotes).size, 'a notification is stored twice').toBe(storedNotes.length);
  expect(new Set(stored.map((s) => s.id)).size).toBe(stored.length);
  const missing = traffic.acknowledged.map((o) => o.note).filter((note) => !storedNotes.includes(note));
  expect(missing, 'acknowledged notifies missing from the stream').toEqual([]);
  // Sequences follow acknowledgement order, since the traffic sends one notify at a time.
  const sequenceOfNote = new Map(stored.map((s) => [s.note, sequenceOf(s.id)]));
  const ackedSequences = traffic.acknowledged.map((o) => sequenceOfNote.get(o.note) as number);
  expect(ackedSequences).toEqual([...ackedSequences].sort((a, b) => a - b));
  for (const outcome of traffic.outcomes) {
    expect(outcome.durationMs, `notify ${outcome.note} took ${outcome.durationMs} ms`).toBeLessThan(NOTIFY_BOUND_MS);
    if (outcome.status === 200) continue;
    expect(outcome.status).toBe(500);
    expect(outcome.body).toMatchObject({ code: 'NOTIFICATION_STORAGE_FAILED', error: 'Notification Storage Failed' });
    expect(outcome.body.request_id).toMatch(UUID_V4);
  }
}

/**
 * Follows a watch opened before the fault, as a client does: it stamps each traffic notification's
 * arrival, and when the stream ends (which it must announce: `error` then `connection-closing`) it
 * resumes with `from_id` = last seen sequence + 1, retrying while aviso refuses (500).
 */
class WatcherFollower {
  readonly seen: { id: string; note: string; at: number }[] = [];
  /** How the first stream behaved across the fault: `continuous`, or its final frames. */
  firstStream = 'continuous';
  resumedAt: number | undefined;
  private failure: unknown;
  private stopped = false;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly server: RunningServer,
    first: SseClient,
    private readonly traffic: NotifyTraffic,
  ) {
    void this.follow(first).catch((error: unknown) => {
      this.failure = error;
      this.wake();
    });
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  private async follow(first: SseClient): Promise<void> {
    const finals = await this.read(first);
    if (finals.length === 0) return;
    this.firstStream = finals.map((f) => `${f.event}:${String(f.json.error ?? f.json.reason)}`).join(' + ');
    expect(finals.at(-1)?.json.reason, this.firstStream).toBe('end_of_stream');
    const last = this.seen.at(-1);
    const resumed = await eventually(
      'a resumed watch to open',
      async () => {
        const client = await open(this.server, '/api/v1/watch', {
          ...TRANSCRIPT_REQUEST,
          from_id: String(last ? sequenceOf(last.id) + 1 : 1),
        });
        return client.status === 200 ? client : undefined;
      },
      WHILE_RECOVERING,
    );
    this.resumedAt = Date.now();
    const resumedFinals = await this.read(resumed);
    if (!this.stopped) expect(resumedFinals, 'the resumed watch ended too').toEqual([]);
  }

  /** Reads a stream until it ends, returning its final frames. */
  private async read(client: SseClient): Promise<SseEvent[]> {
    const finals: SseEvent[] = [];
    while (!this.stopped) {
      let event: SseEvent | undefined;
      try {
        event = await client.nextSignificant(1_000);
      } catch {
        continue; // nothing within a second: look at `stopped` again
      }
      if (event === undefined) {
        expect(finals.at(-1)?.event, 'the stream ended without a final frame').toBe('connection-closing');
        return finals;
      }
      if (event.json.specversion) {
        expect(finals, 'a notification after a final frame').toEqual([]);
        const note = noteOf(event);
        if (note?.startsWith(this.traffic.prefix)) this.seen.push({ id: event.json.id as string, note, at: Date.now() });
        this.wake();
      } else if (event.event === 'error' || event.event === 'connection-closing') {
        finals.push(event);
      }
    }
    return finals;
  }

  /** Resolves once every stored traffic notification arrived; then checks order and duplicates. */
  async covers(stored: readonly { id: string }[]): Promise<void> {
    const wanted = new Set(stored.map((s) => s.id));
    const deadline = Date.now() + RECOVERY_BOUND_MS;
    while (this.seen.filter((s) => wanted.has(s.id)).length < wanted.size) {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- what the watcher caught, rethrown as it was
      if (this.failure) throw this.failure;
      if (Date.now() > deadline) throw new Error(`the watcher saw ${this.seen.length} of ${wanted.size} notifications`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1_000);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.stopped = true;
    const ids = this.seen.map((s) => s.id);
    expect(new Set(ids).size, `duplicates in ${ids.join(' ')}`).toBe(ids.length);
    expect(ids.map(sequenceOf)).toEqual([...ids.map(sequenceOf)].sort((x, y) => x - y));
    expect([...ids].sort()).toEqual([...wanted].sort());
  }

  /** How long after `since` the first notification acknowledged from then on reached the watcher. */
  deliveryLagAfter(since: number): number | undefined {
    const note = this.traffic.acknowledged.find((o) => o.startedAt >= since)?.note;
    const arrival = this.seen.find((s) => s.note === note)?.at;
    return arrival === undefined ? undefined : arrival - since;
  }
}

describe('a single NATS server is killed and restarted (same port, same store)', { timeout: 150_000 }, () => {
  let nats: NatsServerProcess;
  let natsDown = false;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats.stop();
  });

  // A client that gives up (`max_reconnect_attempts` > 0) stays down for good since 0.13
  // (docs/design/rules/reference-0.13.md §6); test/e2e/readiness.test.ts covers that case.
  const cases = [
    {
      name: 'the client keeps reconnecting (max_reconnect_attempts: 0)',
      jetstream: { reconnect_delay_ms: 200, max_reconnect_attempts: 0 },
      // The shared live feed outlives the outage: the open watch just goes on.
      watcher: 'continuous',
    },
  ];

  for (const testCase of cases) {
    it(`fails fast and cleanly while NATS is away, recovers on its own, and loses nothing acknowledged: ${testCase.name}`, async () => {
      // A previous case that failed mid-outage may have left NATS down.
      if (natsDown) await nats.restart();
      natsDown = false;
      const server = await start(natsConfig(nats.url, testCase.jetstream));
      expect((await postJson(`${server.url}/api/v1/notification`, transcriptNotification('before'))).status).toBe(200);
      const watcher = await open(server, '/api/v1/watch', TRANSCRIPT_REQUEST);
      expect(watcher.status).toBe(200);
      expect((await watcher.nextSignificant())?.json.type).toBe('connection_established');

      const traffic = new NotifyTraffic(server);
      const follower = new WatcherFollower(server, watcher, traffic);
      await traffic.until('some acknowledged notifies before the outage', (o) => o.filter((x) => x.status === 200).length >= 5);
      const ackedBefore = traffic.acknowledged.length;
      await nats.kill();
      natsDown = true;
      const killedAt = Date.now();

      // While NATS is away: notify answers 500, new streams answer 500, /health stays 200.
      await traffic.until(
        'notifies failing during the outage',
        (o) => o.filter((x) => x.startedAt > killedAt && x.status !== 200).length >= 3,
      );
      for (const path of ['/api/v1/watch', '/api/v1/replay']) {
        const body = path === '/api/v1/replay' ? { ...TRANSCRIPT_REQUEST, from_id: '0' } : TRANSCRIPT_REQUEST;
        const startedAt = Date.now();
        const refused = await open(server, path, body);
        const durationMs = Date.now() - startedAt;
        expect(refused.status, `${path} during the outage`).toBe(500);
        const error = JSON.parse(refused.errorBody ?? '{}') as Record<string, unknown>;
        expect(Object.keys(error).sort()).toEqual(['code', 'details', 'error', 'message', 'request_id', 'topic']);
        expect(error).toMatchObject({
          code: 'SSE_STREAM_INITIALIZATION_FAILED',
          error: 'SSE stream creation failed',
          topic: TRANSCRIPT_TOPIC,
        });
        expect(durationMs, `${path} took ${durationMs} ms to refuse`).toBeLessThan(NOTIFY_BOUND_MS);
      }
      const health = await request(`${server.url}/health`);
      expect(health.status).toBe(200);
      expect(health.json).toEqual({ status: 'ok' });
      const readiness = await request(`${server.url}/ready`);
      expect(readiness.status).toBe(503);
      expect(readiness.json).toEqual({ backend_connected: false, status: 'not_ready' });
      expect(server.process.exitCode).toBeNull();

      await nats.restart();
      natsDown = false;
      const restartedAt = Date.now();
      await traffic.until('a notify acknowledged after NATS returned', (o) =>
        o.some((x) => x.startedAt >= restartedAt && x.status === 200),
      );
      const firstAck = traffic.outcomes.find((x) => x.startedAt >= restartedAt && x.status === 200) as NotifyOutcome;
      const notifyRecoveryMs = firstAck.startedAt + firstAck.durationMs - restartedAt;
      const watchRecoveredAt = await eventually(
        'a new watch to open',
        async () => {
          const client = await open(server, '/api/v1/watch', TRANSCRIPT_REQUEST);
          client.close();
          return client.status === 200 ? Date.now() : undefined;
        },
        WHILE_RECOVERING,
      );
      await traffic.until(
        'more acknowledged notifies after recovery',
        (o) => o.filter((x) => x.startedAt >= restartedAt && x.status === 200).length >= 5,
      );
      await traffic.stop();

      const { stored } = await storedTraffic(server, traffic);
      expectNothingAcknowledgedLost(traffic, stored);
      await follower.covers(stored);
      expect(server.process.exitCode).toBeNull();
      expect(follower.firstStream).toBe(testCase.watcher);
      if (follower.firstStream === 'continuous') {
        // The shared live feed followed the stream again with a new consumer after the reconnect.
        expect(server.logs.some((line) => line.attributes?.['event.name'] === 'backend.jetstream.live.resubscribed')).toBe(true);
      }
      const failedDurations = traffic.failed.map((o) => o.durationMs);
      report(testCase.name, {
        sent: traffic.outcomes.length,
        acknowledged: traffic.acknowledged.length,
        acknowledged_before_outage: ackedBefore,
        failed: traffic.failed.length,
        failed_but_stored: traffic.failed.filter((o) => stored.some((s) => s.note === o.note)).length,
        found_in_replay: stored.length,
        slowest_failed_notify_ms: Math.max(0, ...failedDurations),
        outage_ms: restartedAt - killedAt,
        notify_recovery_ms_after_nats_back: notifyRecoveryMs,
        watch_recovery_ms_after_nats_back: watchRecoveredAt - restartedAt,
        watcher_first_stream: follower.firstStream,
        watcher_resumed_ms_after_nats_back: follower.resumedAt === undefined ? undefined : follower.resumedAt - restartedAt,
        live_delivery_ms_after_nats_back: follower.deliveryLagAfter(restartedAt),
        watcher_saw: follower.seen.length,
      });
    });
  }
});

describe('a 3-node JetStream cluster with an R3 stream loses a node', { timeout: 150_000 }, () => {
  let cluster: NatsCluster;
  beforeAll(async () => {
    cluster = await startNatsCluster(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('keeps notify, watch and replay working after a bounded failover, and loses nothing acknowledged', async () => {
    const server = await start(natsConfig(cluster.urls, { replicas: 3, reconnect_delay_ms: 200, max_reconnect_attempts: 0 }));
    expect((await postJson(`${server.url}/api/v1/notification`, transcriptNotification('before'))).status).toBe(200);
    const info = await cluster.withManager((jsm) => jsm.streams.info('POLYGON'));
    expect(info.config.num_replicas).toBe(3);
    expect(info.cluster?.replicas?.length).toBe(2);

    const watcher = await open(server, '/api/v1/watch', TRANSCRIPT_REQUEST);
    expect(watcher.status).toBe(200);
    expect((await watcher.nextSignificant())?.json.type).toBe('connection_established');
    const traffic = new NotifyTraffic(server);
    const follower = new WatcherFollower(server, watcher, traffic);
    await traffic.until('acknowledged notifies before the failure', (o) => o.filter((x) => x.status === 200).length >= 5);

    // The worst node to lose: the one aviso talks to, made the stream leader as well when possible.
    const victim = await eventually('aviso to show up in a node connection list', () => cluster.nodeServing('aviso-ts'), WHILE_RECOVERING);
    const leaderBefore = await moveStreamLeader(cluster, 'POLYGON', victim.name);
    await victim.kill();
    const killedAt = Date.now();

    await traffic.until('a notify acknowledged after the node died', (o) => o.some((x) => x.startedAt >= killedAt && x.status === 200));
    const firstAck = traffic.outcomes.find((x) => x.startedAt >= killedAt && x.status === 200) as NotifyOutcome;
    const notifyFailoverMs = firstAck.startedAt + firstAck.durationMs - killedAt;
    const watchFailoverAt = await eventually(
      'a new watch to open',
      async () => {
        const client = await open(server, '/api/v1/watch', TRANSCRIPT_REQUEST);
        client.close();
        return client.status === 200 ? Date.now() : undefined;
      },
      WHILE_RECOVERING,
    );
    await traffic.until(
      'more acknowledged notifies after failover',
      (o) => o.filter((x) => x.startedAt >= killedAt && x.status === 200).length >= 10,
    );
    await traffic.stop();

    // A replay may fail (and be retried by its client) while a lost node is still a stream peer.
    const { stored, failedReplays } = await storedTraffic(server, traffic, 3);
    expectNothingAcknowledgedLost(traffic, stored);
    await follower.covers(stored);
    expect(follower.firstStream).toBe('continuous');
    const leaderAfter = await cluster.streamLeader('POLYGON');
    expect(leaderAfter).not.toBe(victim.name);
    expect(server.process.exitCode).toBeNull();
    report('3-node cluster, R3 stream, one node killed', {
      killed: victim.name,
      killed_node_was_stream_leader: leaderBefore === victim.name,
      stream_leader_after: leaderAfter,
      sent: traffic.outcomes.length,
      acknowledged: traffic.acknowledged.length,
      failed: traffic.failed.length,
      failed_but_stored: traffic.failed.filter((o) => stored.some((s) => s.note === o.note)).length,
      failure_messages: [...new Set(traffic.failed.map((o) => `${String(o.body.message)}: ${String(o.body.details)}`))],
      slowest_failed_notify_ms: Math.max(0, ...traffic.failed.map((o) => o.durationMs)),
      found_in_replay: stored.length,
      failed_replays: failedReplays,
      notify_failover_ms: notifyFailoverMs,
      watch_failover_ms: watchFailoverAt - killedAt,
      watcher_first_stream: follower.firstStream,
      live_delivery_ms_after_kill: follower.deliveryLagAfter(killedAt),
      watcher_saw: follower.seen.length,
    });
  });
});

/**
 * Asks the stream's leader to step down until `target` leads (a few tries: the new leader is
 * chosen by election). Returns the leader in the end, which may still be another node.
 */
async function moveStreamLeader(cluster: NatsCluster, stream: string, target: string): Promise<string | undefined> {
  let leader = await cluster.streamLeader(stream);
  for (let attempt = 0; attempt < 6 && leader !== target; attempt++) {
    const previous = leader;
    await cluster.withManager(async (_jsm, nc) => {
      await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, undefined, { timeout: 5_000 });
    });
    leader = await eventually(
      'a new stream leader',
      async () => {
        const current = await cluster.streamLeader(stream).catch(() => undefined);
        return current !== undefined && current !== previous ? current : undefined;
      },
      WHILE_RECOVERING,
    );
  }
  return leader;
}
