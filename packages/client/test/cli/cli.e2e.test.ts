import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, useBackend } from '../../../../test/support/backends.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { cliEnv, ndjson, runCli, sequences, startCli } from './support.js';

/** Every identifier the mars test schema needs to publish. */
const MARS = 'class=od,expver=0001,domain=g,date=20250706,time=12:00,stream=enfo';

/** The CLI as a subprocess against the real server process: stdout, stderr, exit codes. */
describe.each(BACKEND_KINDS)('aviso CLI on %s', (kind) => {
  const backend = useBackend(kind);
  let server: RunningServer;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startServer({ config: backend.config() });
    home = mkdtempSync(join(tmpdir(), 'aviso-cli-home-'));
    env = cliEnv(home, { AVISO_BASE_URL: server.url });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const notify = async (params: string): Promise<void> => {
    const r = await runCli(['notify', params], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  };

  it('notify prints the server answer as one JSON line when piped, and replay --from 0 --until N prints exactly 1..N', async () => {
    for (let step = 1; step <= 5; step += 1) {
      const r = await runCli(['notify', `event=mars,${MARS},step:=${step}`, 'data={"n":1}'], env);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(ndjson(r.stdout)).toEqual([expect.objectContaining({ status: 'success', event_type: 'mars' })]);
    }
    const replay = await runCli(['replay', '--event', 'mars', '--identifier', 'class=od', '--from', '0', '--until', '3'], env);
    expect(replay.code).toBe(0);
    expect(sequences(replay.stdout)).toEqual([1, 2, 3]);
    expect(ndjson(replay.stdout)[0]).toEqual({
      event_type: 'mars',
      sequence: 1,
      identifier: expect.objectContaining({ class: 'od', step: '1' }),
      payload: { n: 1 },
    });
    // --from N means after N; without --until the replay ends at the stored history.
    const after = await runCli(['replay', '--event', 'mars', '--identifiers', '{"class":"od"}', '--from', '2'], env);
    expect(after.code).toBe(0);
    expect(sequences(after.stdout)).toEqual([3, 4, 5]);
  });

  it('listen runs a listener file, prints the banner on stderr, resumes from the state file after Ctrl+C', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aviso-cli-listen-'));
    const seen = join(dir, 'seen.log');
    const file = join(dir, 'listeners.yaml');
    writeFileSync(
      file,
      `listeners:\n  - name: mars-od\n    event: mars\n    identifiers:\n      class: od\n    triggers:\n      - type: command\n        command: 'echo "$AVISO_EVENT_TYPE@$AVISO_SEQUENCE" >> ${seen}'\n`,
    );
    const stateFile = join(dir, 'state', 'state.json');
    const first = startCli(['--state-file', stateFile, 'listen', file, '--from', '3'], env);
    await first.waitFor(({ stderr }) => stderr.includes('Listening for mars-od [mars] (class=od)'));
    await first.waitFor(() => readLines(seen).length === 2);
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
    expect(readLines(seen)).toEqual(['mars@4', 'mars@5']);
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as {
      version: number;
      key_format_version: number;
      checkpoints: Record<string, unknown>;
    };
    expect(state.version).toBe(1);
    expect(state.key_format_version).toBe(1);
    expect(Object.values(state.checkpoints)).toEqual([{ last_committed_sequence: 5, last_event_id: 'mars@5' }]);
    expect(Object.keys(state.checkpoints)[0]).toMatch(/^[0-9a-f]{64}$/);

    const second = startCli(['--state-file', stateFile, 'listen', file], env);
    await second.waitFor(({ stderr }) => stderr.includes('Listening for mars-od'));
    expect((await runCli(['notify', `event=mars,${MARS},step:=6`], env)).code).toBe(0);
    await second.waitFor(() => readLines(seen).length === 3);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
    expect(readLines(seen)).toEqual(['mars@4', 'mars@5', 'mars@6']);
  });

  // Four CLI processes and twenty notifications on two shared cores: a generous budget.
  it('two CLI processes sharing one state file lose nothing', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aviso-cli-shared-'));
    const stateFile = join(dir, 'state.json');
    const start = (cls: string, from: string[]): ReturnType<typeof startCli> =>
      startCli(
        [
          '--state-file',
          stateFile,
          'listen',
          '--event',
          'dissemination',
          '--identifier',
          `class=${cls}`,
          '--identifier',
          'destination=SHARED',
          ...from,
        ],
        env,
      );
    const publish = async (cls: string, n: number): Promise<void> => {
      for (let i = 0; i < n; i += 1) await notify(`event=dissemination,destination=SHARED,class=${cls}`);
    };
    const round = async (from: string[], expected: number): Promise<[number[], number[]]> => {
      const a = start('od', from);
      const b = start('rd', from);
      await Promise.all([a, b].map((c) => c.waitFor(({ stderr }) => stderr.includes('Listening for'))));
      await Promise.all([publish('od', 5), publish('rd', 5)]);
      await Promise.all([a, b].map((c) => c.waitFor(({ stdout }) => sequences(stdout).length >= expected)));
      a.child.kill('SIGINT');
      b.child.kill('SIGINT');
      expect(await a.exited).toBe(0);
      expect(await b.exited).toBe(0);
      return [sequences(a.stdout()), sequences(b.stdout())];
    };
    const [od1, rd1] = await round(['--from', '0'], 5);
    const [od2, rd2] = await round([], 5);
    const stored = async (c: string): Promise<number[]> =>
      sequences(
        (
          await runCli(
            ['replay', '--event', 'dissemination', '--identifier', `class=${c}`, '--identifier', 'destination=SHARED', '--from', '0'],
            env,
          )
        ).stdout,
      );
    const odStored = await stored('od');
    expect(odStored).toHaveLength(10);
    expect([...od1, ...od2]).toEqual(odStored);
    expect([...rd1, ...rd2]).toEqual(await stored('rd'));
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { checkpoints: Record<string, { last_committed_sequence: number }> };
    expect(
      Object.values(state.checkpoints)
        .map((c) => c.last_committed_sequence)
        .sort((x, y) => x - y),
    ).toEqual([od2.at(-1), rd2.at(-1)].sort((x, y) => (x as number) - (y as number)));
  });
});

function readLines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}
