import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_REALM, signToken, trustedProxyAuth } from '../../../../test/support/fake-auth-o-tron.js';
import { serverConfig } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { AvisoClient, BearerAuth, HttpError } from '../../src/index.js';
import { RawStream } from '../support/raw-stream.js';
import { CLI_ENTRY, cliEnv, ndjson, runCli, startCli } from './support.js';

/**
 * `aviso admin streams` and `aviso admin close-stream` (docs/cli.md), and the library calls under
 * them, against the real server process with authentication on: the streams other clients opened
 * are listed with their filter, user, route and owner, the filters and the limit apply, a
 * non-admin is refused, and a closed stream's client gets `end_of_stream` / `operator_closed`,
 * while an `aviso listen` whose stream is closed reconnects from its cursor.
 */

const token = (username: string, roles: string[]): Promise<string> =>
  signToken({ sub: username, username, realm: LOCAL_REALM, roles, attributes: {} });
const MARS = { class: 'od', expver: '0001', domain: 'g', date: '20250706', time: '12:00', stream: 'enfo' };

let server: RunningServer;
let env: Record<string, string>;
let admin: string;
let alice: string;
const open: RawStream[] = [];

beforeAll(async () => {
  server = await startServer({ config: serverConfig({ auth: trustedProxyAuth({ auth_o_tron_url: 'http://127.0.0.1:9/' }) }) });
  admin = await token('root', ['admin']);
  alice = await token('alice', ['reader']);
  env = cliEnv(mkdtempSync(join(tmpdir(), 'aviso-streams-home-')), { AVISO_BASE_URL: server.url, AVISO_TOKEN: admin });
});
afterEach(() => {
  for (const client of open.splice(0)) client.close();
});
afterAll(() => server?.stop());

/** A stream the way another client opens it; its request id is the id the list gives it. */
async function watch(body: Record<string, unknown>, bearer?: string): Promise<{ client: RawStream; id: string }> {
  const client = await RawStream.open(`${server.url}/api/v1/watch`, body, bearer ? { authorization: `Bearer ${bearer}` } : {});
  expect(client.status).toBe(200);
  open.push(client);
  // The opening frame: the stream is registered by the time it is written.
  expect((await client.next())?.json.type).toBe('connection_established');
  return { client, id: client.requestId };
}

/** The command on a terminal (`script` gives it a pseudo-terminal), as a person sees it. */
function onTerminal(args: readonly string[]): string {
  const command = [process.execPath, CLI_ENTRY, ...args].map((a) => `'${a}'`).join(' ');
  return spawnSync('script', ['-qec', command, '/dev/null'], { env, encoding: 'utf8', timeout: 30_000 }).stdout.replace(/\r\n/g, '\n');
}

async function listing(args: string[] = [], e = env): Promise<Record<string, unknown> & { streams: Record<string, unknown>[] }> {
  const r = await runCli(['admin', 'streams', ...args], e);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown> & { streams: Record<string, unknown>[] };
}

describe('aviso admin streams', () => {
  it('lists every open stream with its filter, user, route and owner; filters and the limit apply', async () => {
    const first = await watch({ event_type: 'mars', identifier: { class: 'od' } }, alice);
    const second = await watch({ event_type: 'dissemination', identifier: { destination: 'FOO', class: 'od' } });
    const third = await watch({ event_type: 'mars', identifier: { class: 'rd', step: { gte: 6 } } }, admin);

    const all = await listing(['--json']);
    const process = `${hostname()}:${server.process.pid}`;
    expect(all.streams.map((s) => s.id)).toEqual([first.id, second.id, third.id]);
    expect(all).toMatchObject({
      total: 3,
      truncated: false,
      counts: { dissemination: 1, mars: 2 },
      processes: { answered: [process], not_answering: [] },
    });
    expect(Object.keys(all)).toEqual(['streams', 'total', 'truncated', 'counts', 'processes', 'request_id']);
    expect(all.streams[0]).toMatchObject({
      id: first.id,
      process,
      route: 'watch',
      method: 'POST',
      event_type: 'mars',
      filter: { class: 'od' },
      user: 'alice',
      client_address: '127.0.0.1',
      phase: 'live',
      last_sequence: null,
      delivered: 0,
      buffered_bytes: 0,
      lag_ms: 0,
    });
    expect(all.streams[0]?.opened_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(all.streams[1]).toMatchObject({ event_type: 'dissemination', user: null, filter: { destination: 'FOO', class: 'od' } });
    expect(all.streams[2]).toMatchObject({ user: 'root', filter: { class: 'rd', step: { gte: 6 } } });

    const mars = await listing(['--event-type', 'mars', '--limit', '1']);
    expect(mars).toMatchObject({ total: 2, truncated: true, counts: { dissemination: 1, mars: 2 } });
    expect(mars.streams.map((s) => s.id)).toEqual([first.id]);
    expect((await listing(['--user', 'alice'])).streams.map((s) => s.id)).toEqual([first.id]);
    expect(await listing(['--user', 'nobody'])).toMatchObject({ streams: [], total: 0, counts: { dissemination: 1, mars: 2 } });

    // The library call under the command, typed.
    const client = new AvisoClient({ baseUrl: server.url, auth: new BearerAuth(admin) });
    const typed = await client.admin.listStreams({ eventType: 'dissemination' });
    expect(typed.streams).toEqual([
      expect.objectContaining({ id: second.id, eventType: 'dissemination', user: null, lastSequence: null, bufferedBytes: 0, lagMs: 0 }),
    ]);
    expect(typed.processes).toEqual({ answered: [process], notAnswering: [], clusterUnreachable: false });
    await client.close();
  });

  it('counts a notification delivered and its sequence', async () => {
    const stream = await watch({ event_type: 'mars', identifier: { class: 'od' } });
    const notify = await runCli(
      [
        'notify',
        `event=mars,${Object.entries(MARS)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')},step:=1`,
      ],
      env,
    );
    expect(notify.code).toBe(0);
    const live = await stream.client.next();
    expect(live?.event).toBe('live-notification');
    const sequence = Number(String(live?.json.id).split('@')[1]);
    const listed = (await listing()).streams.find((s) => s.id === stream.id);
    expect(listed).toMatchObject({ last_sequence: sequence, delivered: 1, phase: 'live' });
  });

  it('prints a table on a terminal, and the close as one line', async () => {
    const stream = await watch({ event_type: 'mars', identifier: { class: 'od', step: { gte: 6 } } }, alice);
    const lines = onTerminal(['admin', 'streams', '--user', 'alice']).split('\n');
    expect(lines[0]).toMatch(/^ID +PROCESS +ROUTE +EVENT TYPE +FILTER +USER +CLIENT +OPENED +PHASE +LAST SEQ +DELIVERED +BUFFERED +LAG$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^${stream.id}  ${hostname()}:${server.process.pid}  POST watch  mars        class=od step=\\{"gte":6\\}  alice  127\\.0\\.0\\.1  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC  live  +-  +0  +0 B  +0 ms$`,
      ),
    );
    expect(lines.slice(2)).toEqual([expect.stringMatching(/^1 matching stream, \d+ open in all \(mars \d+\)$/), '']);
    expect(onTerminal(['admin', 'close-stream', stream.id, '--yes'])).toBe(
      `Stream closed: ${stream.id} on ${hostname()}:${server.process.pid}\n`,
    );
  });

  it('refuses a bad --limit before sending, a reader with 403 and no credential with 401', async () => {
    const bad = await runCli(['admin', 'streams', '--limit', '0'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit must be a whole number from 1 to 1000, not "0"/);
    const reader = await runCli(['admin', 'streams'], { ...env, AVISO_TOKEN: alice });
    expect(reader.code).toBe(1);
    expect(reader.stderr).toMatch(/^Error: HTTP 403: .*\(request id [0-9a-f-]{36}\)$/m);
    expect(reader.stdout).toBe('');
    const anonymous = await runCli(['admin', 'streams'], { PATH: env.PATH ?? '', HOME: env.HOME ?? '', AVISO_BASE_URL: server.url });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/^Error: the server requires authentication \(401\)$/m);
  });
});

describe('aviso admin close-stream', () => {
  it('asks for --yes, closes the chosen stream with end_of_stream / operator_closed, and says 404 for an unknown id', async () => {
    const kept = await watch({ event_type: 'mars', identifier: { class: 'od' } });
    const closed = await watch({ event_type: 'mars', identifier: { class: 'rd' } }, alice);

    const unconfirmed = await runCli(['admin', 'close-stream', closed.id], env);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/pass --yes to confirm/);
    expect((await listing()).streams.map((s) => s.id)).toContain(closed.id);

    const done = await runCli(['admin', 'close-stream', closed.id, '--yes'], env);
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(ndjson(done.stdout)).toEqual([
      {
        success: true,
        message: 'Stream closed',
        stream_id: closed.id,
        process: `${hostname()}:${server.process.pid}`,
        request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
      },
    ]);
    const frame = await closed.client.next();
    expect(frame?.event).toBe('connection-closing');
    expect(frame?.json).toMatchObject({ reason: 'end_of_stream', cause: 'operator_closed' });
    expect(await closed.client.next()).toBeUndefined();
    const after = (await listing()).streams.map((s) => s.id);
    expect(after).toContain(kept.id);
    expect(after).not.toContain(closed.id);

    const unknown = await runCli(['admin', 'close-stream', closed.id, '--yes'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^Error: HTTP 404: Stream not found \(request id [0-9a-f-]{36}\)$/m);
    const client = new AvisoClient({ baseUrl: server.url, auth: new BearerAuth(admin) });
    await expect(client.admin.closeStream('no-such-stream')).rejects.toSatisfy((e) => e instanceof HttpError && e.status === 404);
    await client.close();
  });

  it('an `aviso listen` whose stream is closed reconnects from its cursor: nothing lost, nothing twice', { timeout: 60_000 }, async () => {
    const identifiers = Object.entries(MARS)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const publish = async (step: number): Promise<void> => {
      expect((await runCli(['notify', `event=mars,${identifiers},step:=${step}`, `data={"step":${step}}`], env)).code).toBe(0);
    };
    const cli = startCli(['listen', '--event', 'mars', '--identifier', 'stream=enfo', '--identifier', 'class=od', '--no-state-store'], env);
    await cli.waitFor(({ stderr }) => stderr.includes('Listening for ad-hoc [mars]'));
    await publish(101);
    await cli.waitFor(({ stdout }) => ndjson(stdout).length === 1);

    const mine = (await listing(['--event-type', 'mars'])).streams.filter((s) => (s.filter as Record<string, unknown>).stream === 'enfo');
    expect(mine).toHaveLength(1);
    const first = mine[0]?.id as string;
    expect((await runCli(['admin', 'close-stream', first, '--yes'], env)).code).toBe(0);
    // Published while the listener is between streams (or just back): its new stream starts after
    // the last notification it handled, so this one arrives once, from the replay or live.
    await publish(102);
    await expect
      .poll(
        async () =>
          (await listing(['--event-type', 'mars'])).streams
            .filter((s) => (s.filter as Record<string, unknown>).stream === 'enfo')
            .map((s) => s.id),
        {
          timeout: 20_000,
          interval: 250,
        },
      )
      .toEqual([expect.not.stringMatching(first) as unknown]);
    await publish(103);
    await cli.waitFor(({ stdout }) => ndjson(stdout).length === 3);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(ndjson(cli.stdout()).map((n) => (n.payload as { step: number }).step)).toEqual([101, 102, 103]);
  });
});
