import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { cliEnv, ndjson, runCli, startCli } from './support.js';

const ROOT = join(import.meta.dirname, '../../../..');

/** Splits a shell line into words: enough for the README's single-quoted arguments. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.replace(/\s+#.*$/, '').matchAll(/'([^']*)'|(\S+)/g)) out.push(m[1] ?? (m[2] as string));
  return out;
}

/** The README's "Then, for example" `aviso` commands, against the shipped in-memory configuration. */
describe('README: aviso notify and aviso listen against the in-memory server', () => {
  let server: RunningServer;
  beforeAll(async () => {
    const config = parse(readFileSync(join(ROOT, 'config/config.yaml'), 'utf8')) as { application: Record<string, unknown> };
    server = await startServer({ config: { ...config, application: { ...config.application, port: 0 } } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('runs the documented commands', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const commands = readme
      .split('\n')
      .filter((l) => l.startsWith('npx aviso '))
      .map((l) => words(l).slice(2));
    const [listen, notify, replay] = commands as [string[], string[], string[]];
    expect(listen[0]).toBe('listen');
    expect(notify[0]).toBe('notify');
    expect(replay[0]).toBe('replay');
    const env = cliEnv(mkdtempSync(join(tmpdir(), 'aviso-readme-')), { AVISO_BASE_URL: server.url });
    const listener = startCli(listen, env);
    await listener.waitFor(({ stderr }) => stderr.includes('Listening for ad-hoc [mars]'));
    const published = await runCli(notify, env);
    expect(published.stderr).toBe('');
    expect(published.code).toBe(0);
    await listener.waitFor(({ stdout }) => stdout.includes('\n'));
    listener.child.kill('SIGINT');
    expect(await listener.exited).toBe(0);
    expect(ndjson(listener.stdout())).toEqual([expect.objectContaining({ event_type: 'mars', payload: 'forecast complete' })]);
    const replayed = await runCli(replay, env);
    expect(replayed.code).toBe(0);
    expect(ndjson(replayed.stdout)).toHaveLength(1);
  });
});
