import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdminExchange } from '../../src/backend/jetstream/admin-exchange.js';
import { NatsLink } from '../../src/backend/jetstream/nats-link.js';
import { streamsAcrossDeployment } from '../../src/streaming/deployment-streams.js';
import type { OpenStream, OpenStreamDirectory, StreamsOfDeployment } from '../../src/streaming/open-streams.js';
import { systemClock } from '../../src/time/clock.js';
import { eventually } from '../support/eventually.js';
import { startNatsServer, type NatsServerProcess } from '../support/nats-server.js';

/**
 * D49 on real NATS: the processes of a deployment (here NATS links of one test process, each with
 * its own exchange and its own directory of streams) list and close each other's open streams
 * over `%AVISO_ADMIN`, within the bound, naming the processes that stay silent. Private servers,
 * so no other aviso process on the machine's NATS takes part.
 */

const BOUND_MS = 1_000;
/** Short presence, so a test is past the first interval (when every ask waits the whole bound) quickly. */
const PRESENCE_INTERVAL_MS = 100;
const WINDOW_MS = 3 * PRESENCE_INTERVAL_MS;

/** A process's streams held in a map; records who closed what. */
class Directory implements OpenStreamDirectory {
  readonly closed: { id: string; closedBy: string | null }[] = [];
  private readonly streams = new Map<string, OpenStream>();
  /** False: this process holds its streams but does not answer (a process stuck or half gone). */
  answering = true;

  constructor(ids: readonly string[] = []) {
    for (const id of ids) this.streams.set(id, openStream(id));
  }

  list(): OpenStream[] {
    if (!this.answering) throw new Error('stuck');
    return [...this.streams.values()];
  }

  close(id: string, closedBy: string | null): boolean {
    if (!this.answering) throw new Error('stuck');
    if (!this.streams.delete(id)) return false;
    this.closed.push({ id, closedBy });
    return true;
  }
}

function openStream(id: string, user: string | null = 'alice'): OpenStream {
  return {
    id,
    route: 'watch',
    method: 'POST',
    event_type: 'mars',
    filter: {
      class: 'od',
      step: 1,
      polygon: [
        [1.5, 2],
        [3, 4],
        [1.5, 2],
      ],
    },
    topic_pattern: 'mars.od.*',
    user,
    client_address: '127.0.0.1',
    opened_at: '2026-12-05T21:00:00.000Z',
    phase: 'live',
    last_sequence: 7,
    delivered: 3,
    buffered_bytes: 0,
    lag_ms: 0,
  };
}

interface Member {
  readonly id: string;
  readonly link: NatsLink;
  readonly exchange: AdminExchange;
  readonly directory: Directory;
  readonly deployment: StreamsOfDeployment;
}

const members: Member[] = [];

async function member(
  natsUrl: string,
  id: string,
  directory: Directory,
  logger: Logger = pino({ level: 'silent' }),
  presenceIntervalMs = PRESENCE_INTERVAL_MS,
): Promise<Member> {
  const link = await NatsLink.open(
    { url: natsUrl, token: undefined, connectTimeoutMs: 5_000, startupAttempts: 1, reconnectDelayMs: 100, maxReconnectAttempts: 0 },
    logger,
  );
  const exchange = new AdminExchange(link, logger, { process: id, clock: systemClock, boundMs: BOUND_MS, presenceIntervalMs });
  // Once the server has answered a ping, it has this process's subscriptions: a question asked
  // from now on reaches it.
  await link.clients().nc.flush();
  const created = { id, link, exchange, directory, deployment: streamsAcrossDeployment(directory, exchange) };
  members.push(created);
  return created;
}

async function leave(one: Member): Promise<void> {
  one.exchange.stop();
  await one.link.close();
}

afterEach(async () => {
  await Promise.all(members.splice(0).map(leave));
});

async function timed<T>(operation: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await operation();
  return { value, ms: performance.now() - started };
}

const pastYouth = () => new Promise((resolve) => setTimeout(resolve, PRESENCE_INTERVAL_MS + 50));

describe('the deployment exchange on NATS', { timeout: 30_000 }, () => {
  let nats: NatsServerProcess;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  it("lists every process's streams once, the asker's own first, as soon as every peer answered", async () => {
    const a = await member(nats.url, 'host-a:1', new Directory(['a1']));
    await member(nats.url, 'host-b:2', new Directory(['b1', 'b2']));
    await member(nats.url, 'host.c:3', new Directory([]));
    await pastYouth();
    const { value, ms } = await timed(() => a.deployment.list());
    expect(value.clusterUnreachable).toBe(false);
    expect(value.notAnswering).toEqual([]);
    expect(value.answered[0]).toEqual({ process: 'host-a:1', streams: [openStream('a1')] });
    const byProcess = Object.fromEntries(value.answered.map((answer) => [answer.process, answer.streams.map((stream) => stream.id)]));
    expect(byProcess).toEqual({ 'host-a:1': ['a1'], 'host-b:2': ['b1', 'b2'], 'host.c:3': [] });
    // Another process's stream arrives as it was: filter numbers and all, in the contract's field order.
    const b1 = value.answered.find((answer) => answer.process === 'host-b:2')?.streams[0];
    expect(b1).toEqual(openStream('b1'));
    expect(Object.keys(b1 ?? {})).toEqual(Object.keys(openStream('b1')));
    expect(ms).toBeLessThan(BOUND_MS / 2);
  });

  it('waits the whole bound during its first presence interval, and hears of its peers meanwhile', async () => {
    const silent = pino({ level: 'silent' });
    const a = await member(nats.url, 'young-a:1', new Directory(['a1']), silent, 5_000);
    await member(nats.url, 'young-b:2', new Directory(['b1']), silent, 5_000);
    const young = await timed(() => a.deployment.list());
    expect(young.ms).toBeGreaterThanOrEqual(BOUND_MS - 20);
    expect(young.value.answered.map((answer) => answer.process).sort()).toEqual(['young-a:1', 'young-b:2']);
  });

  it('names a silent peer within the bound and still lists the others', async () => {
    const a = await member(nats.url, 'live-a:1', new Directory(['a1']));
    const stuck = await member(nats.url, 'stuck-b:2', new Directory(['b1']));
    await member(nats.url, 'live-c:3', new Directory(['c1']));
    await pastYouth();
    stuck.directory.answering = false;
    const { value, ms } = await timed(() => a.deployment.list());
    expect(value.notAnswering).toEqual(['stuck-b:2']);
    expect(value.answered.map((answer) => answer.process).sort()).toEqual(['live-a:1', 'live-c:3']);
    expect(ms).toBeGreaterThanOrEqual(BOUND_MS - 20);
    expect(ms).toBeLessThan(BOUND_MS + 500);
  });

  it('forgets a peer that stopped cleanly at once, and one that went silent after the presence window', async () => {
    const a = await member(nats.url, 'stay-a:1', new Directory());
    const b = await member(nats.url, 'leave-b:2', new Directory(['b1']));
    const c = await member(nats.url, 'vanish-c:3', new Directory(['c1']));
    await pastYouth();
    await leave(members.splice(members.indexOf(b), 1)[0]!);
    const first = await timed(() => a.deployment.list());
    expect(first.value.notAnswering).toEqual([]);
    expect(first.ms).toBeLessThan(BOUND_MS / 2);
    expect(first.value.answered.map((answer) => answer.process)).toEqual(['stay-a:1', 'vanish-c:3']);
    // c's connection goes away without a word, as when its process is killed.
    await c.link.close();
    const silent = await timed(() => a.deployment.list());
    expect(silent.value.notAnswering).toEqual(['vanish-c:3']);
    expect(silent.ms).toBeLessThan(BOUND_MS + 500);
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const forgotten = await timed(() => a.deployment.list());
    expect(forgotten.value).toEqual({ answered: [{ process: 'stay-a:1', streams: [] }], notAnswering: [], clusterUnreachable: false });
    expect(forgotten.ms).toBeLessThan(BOUND_MS / 2);
  });

  it('closes a stream on the process holding it, with who closed it, and says when nobody holds it', async () => {
    const a = await member(nats.url, 'close-a:1', new Directory(['a1']));
    const b = await member(nats.url, 'close-b:2', new Directory(['b1']));
    const c = await member(nats.url, 'close-c:3', new Directory(['c1']));
    await pastYouth();
    const { value, ms } = await timed(() => a.deployment.close('c1', 'operator'));
    expect(value).toEqual({ closedOn: 'close-c:3' });
    expect(ms).toBeLessThan(BOUND_MS / 2);
    expect(c.directory.closed).toEqual([{ id: 'c1', closedBy: 'operator' }]);
    expect(b.directory.closed).toEqual([]);
    expect(await b.deployment.close('a1', null)).toEqual({ closedOn: 'close-a:1' });
    expect(a.directory.closed).toEqual([{ id: 'a1', closedBy: null }]);
    expect(await a.deployment.close('c1', 'operator')).toEqual({ closedOn: undefined, notAnswering: [] });
    b.directory.answering = false;
    expect(await a.deployment.close('nowhere', null)).toEqual({ closedOn: undefined, notAnswering: ['close-b:2'] });
  });

  it('sends an answer larger than max_payload in parts', async () => {
    const ids = Array.from({ length: 8_000 }, (_, i) => `stream-${i}-${'x'.repeat(40)}`);
    const a = await member(nats.url, 'big-a:1', new Directory());
    await member(nats.url, 'big-b:2', new Directory(ids));
    await pastYouth();
    const { value } = await timed(() => a.deployment.list());
    expect(JSON.stringify(value.answered[1]?.streams).length).toBeGreaterThan(1_048_576);
    expect(value.answered[1]?.streams.map((stream) => stream.id)).toEqual(ids);
    expect(value.notAnswering).toEqual([]);
  });

  it('answers across the cluster again after NATS restarts', async () => {
    const own = await startNatsServer();
    try {
      const a = await member(own.url, 'restart-a:1', new Directory(['a1']));
      await member(own.url, 'restart-b:2', new Directory(['b1']));
      await pastYouth();
      await own.restart();
      const value = await eventually('both processes answering after the restart', async () => {
        const listed = await a.deployment.list();
        return !listed.clusterUnreachable && listed.answered.length === 2 && listed;
      });
      expect(value.answered.map((answer) => answer.process)).toEqual(['restart-a:1', 'restart-b:2']);
    } finally {
      await Promise.all(members.splice(0).map(leave));
      await own.stop();
    }
  });
});

describe('an account that may not use %AVISO_ADMIN.>', { timeout: 30_000 }, () => {
  let nats: NatsServerProcess;
  let configDir: string;
  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'aviso-admin-denied-'));
    const configFile = join(configDir, 'nats.conf');
    writeFileSync(
      configFile,
      [
        'accounts: {',
        '  APP: {',
        '    jetstream: enabled',
        '    users: [{ user: aviso, password: unused, permissions: { publish: { deny: ["%AVISO_ADMIN.>"] }, subscribe: { deny: ["%AVISO_ADMIN.>"] } } }]',
        '  }',
        '}',
        'no_auth_user: aviso',
        '',
      ].join('\n'),
    );
    nats = await startNatsServer({ extraArgs: ['-c', configFile] });
  });
  afterAll(async () => {
    await nats?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  it('warns once and answers with this process alone, marked unreachable, without waiting', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n'))
            if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
    );
    const a = await member(nats.url, 'denied-a:1', new Directory(['a1']), logger);
    await member(nats.url, 'denied-b:2', new Directory(['b1']));
    const warnings = () => lines.filter((line) => line.event_name === 'backend.jetstream.admin.denied' && line.level === 40);
    await eventually('the refusal warning', () => warnings().length > 0);
    const { value, ms } = await timed(() => a.deployment.list());
    expect(value).toEqual({
      answered: [{ process: 'denied-a:1', streams: [openStream('a1')] }],
      notAnswering: [],
      clusterUnreachable: true,
    });
    expect(ms).toBeLessThan(BOUND_MS / 2);
    expect(await a.deployment.close('b1', null)).toEqual({ closedOn: undefined, notAnswering: [] });
    expect(await a.deployment.close('a1', null)).toEqual({ closedOn: 'denied-a:1' });
    await new Promise((resolve) => setTimeout(resolve, 3 * PRESENCE_INTERVAL_MS));
    expect(warnings()).toHaveLength(1);
    expect(lines.map((line) => line.event_name)).not.toContain('backend.jetstream.error');
  });
});
