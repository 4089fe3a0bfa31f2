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
    expect(ndjson(replay.stdout)[0]).toEqual({ event_type: 'mars', sequence: 1, identifier: expect.objectContaining({ class: 'od', step: '1' }), payload: { n: 1 } });
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
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { version: number; key_format_version: number; checkpoints: Record<string, unknown> };
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
});

function readLines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}
