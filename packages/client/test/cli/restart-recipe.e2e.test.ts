import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resumeKey } from '../../src/index.js';
import { RestartingServer } from '../support/restarting-server.js';
import { cliEnv, ndjson, runCli, sequences, startCli, type RunningCli } from './support.js';

/**
 * Issue 30's recipe, with this repository's `aviso` command against the real in-memory server:
 * three notifications, `aviso listen --from 0`, a restart (SIGTERM, and separately SIGKILL) on the
 * same port and state directory, two notifications before the listener reconnects and two after.
 * The listener prints every one exactly once, in order, with the numbering carrying on (D40). A
 * gap (D42) and a reset numbering (D41) reach the command as one WARN record each on stderr, and
 * the listener goes on.
 */
const servers: RestartingServer[] = [];
const listeners: RunningCli[] = [];
afterEach(async () => {
  for (const cli of listeners.splice(0)) if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  for (const server of servers.splice(0)) await server.stop();
});

async function serve(inMemory: Record<string, unknown> = {}): Promise<RestartingServer> {
  const server = await RestartingServer.start(inMemory);
  servers.push(server);
  return server;
}

function listen(env: Record<string, string>, args: readonly string[] = ['--from', '0']): RunningCli {
  const cli = startCli(['listen', '--event', 'job', '--identifier', 'name=a', ...args], env);
  listeners.push(cli);
  return cli;
}

/** The log records on stderr (JSON, since stderr is not a terminal), without the plain status lines. */
function records(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
const named = (stderr: string, eventName: string): Record<string, unknown>[] =>
  records(stderr).filter((r) => (r.attributes as Record<string, unknown> | undefined)?.['event.name'] === eventName);
const printed = (cli: RunningCli, count: number): Promise<void> => cli.waitFor(({ stdout }) => sequences(stdout).length >= count, 30_000);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('aviso listen across a restart of the in-memory server (issue 30)', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`${signal}: every notification sent before and after the reconnect is printed once, in order, numbered on`, async () => {
      const server = await serve();
      const env = cliEnv(mkdtempSync(join(tmpdir(), 'aviso-recipe-home-')), { AVISO_BASE_URL: server.url });
      await server.publish(3);
      const cli = listen(env);
      await printed(cli, 3);
      await server.restart(signal, () => server.publish(2));
      await printed(cli, 5);
      await server.publish(2);
      await printed(cli, 7);
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(0);

      const lines = ndjson(cli.stdout());
      expect(lines.map((n) => n.sequence)).toEqual(range(1, 7));
      expect(lines.map((n) => (n.payload as { step: number }).step)).toEqual(range(1, 7));
      const retries = named(cli.stderr(), 'cli.listener.retrying').map((r) => (r.attributes as Record<string, unknown>).cause);
      expect(retries[0]).toMatch(signal === 'SIGTERM' ? /^server_shutdown$/ : /^transport error|^the connection ended/);
      // Nothing was lost, so nothing is said to be.
      expect(named(cli.stderr(), 'client.stream.history_gap')).toEqual([]);
      expect(named(cli.stderr(), 'client.stream.sequence_reset')).toEqual([]);
    }, 90_000);
  }
});

describe('what the command says about history it cannot have', () => {
  it('a history gap is one WARN line on stderr, and the notification after it is still printed', async () => {
    const server = await serve({ max_history_per_topic: 1 });
    const env = cliEnv(mkdtempSync(join(tmpdir(), 'aviso-recipe-home-')), { AVISO_BASE_URL: server.url });
    // The same identifier twice: the per-topic limit of 1 removes the first.
    for (let i = 0; i < 2; i++) expect((await runCli(['notify', 'event=job,name=a,step=1', `data={"i":${i}}`], env)).code).toBe(0);
    const replay = await runCli(['replay', '--event', 'job', '--identifier', 'name=a', '--from', '0'], env);
    expect(replay.code).toBe(0);
    expect(sequences(replay.stdout)).toEqual([2]);
    const gaps = named(replay.stderr, 'client.stream.history_gap');
    expect(gaps).toEqual([
      expect.objectContaining({
        severityText: 'WARN',
        body: 'history gap: notifications the server no longer stores were skipped; continuing',
        attributes: {
          'event.name': 'client.stream.history_gap',
          listener: 'ad-hoc',
          first_sequence: 1,
          last_sequence: 1,
          lost: 1,
          scope: 'request',
          message: '1 notification of this request in sequence 1 is no longer stored',
        },
      }),
    ]);
    expect(replay.stderr.split('\n').filter((line) => line.includes('history gap'))).toHaveLength(1);
  }, 60_000);

  it('a reset numbering is one WARN line; the listener prints the new numbering from 1 and saves its position in it', async () => {
    const server = await serve({ persist_sequences: false });
    const home = mkdtempSync(join(tmpdir(), 'aviso-recipe-home-'));
    const env = cliEnv(home, { AVISO_BASE_URL: server.url });
    await server.publish(3);
    const cli = listen(env);
    await printed(cli, 3);
    // The numbering starts at 1 again; the listener will ask for 4, beyond the new last sequence 1.
    await server.restart('SIGTERM', () => server.publish(1));
    await printed(cli, 4);
    await server.publish(1);
    await printed(cli, 5);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(sequences(cli.stdout())).toEqual([1, 2, 3, 1, 2]);
    expect(ndjson(cli.stdout()).map((n) => (n.payload as { step: number }).step)).toEqual(range(1, 5));
    expect(named(cli.stderr(), 'client.stream.sequence_reset')).toEqual([
      expect.objectContaining({
        severityText: 'WARN',
        body: "sequence reset: the server's numbering started again; continuing from its first sequence",
        attributes: {
          'event.name': 'client.stream.sequence_reset',
          listener: 'ad-hoc',
          requested_sequence: 4,
          last_sequence: 1,
          message:
            "Sequence 4 is beyond this stream's last sequence 1: its numbering was reset, so the stream starts again from its first sequence",
        },
      }),
    ]);

    // The state file went back from 3 to the new numbering's 2: the next run resumes there.
    const state = JSON.parse(readFileSync(join(home, '.config/aviso/state.json'), 'utf8')) as {
      checkpoints: Record<string, { last_committed_sequence: number }>;
    };
    expect(state.checkpoints[await resumeKey(server.url, 'job', { name: 'a' })]?.last_committed_sequence).toBe(2);
    const again = listen(env, []);
    await again.waitFor(({ stderr }) => stderr.includes('Listening for'), 30_000);
    await server.publish(1);
    await printed(again, 1);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    expect(sequences(again.stdout())).toEqual([3]);
  }, 90_000);
});
