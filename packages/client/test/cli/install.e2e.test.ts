import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig } from '../../../../test/support/schemas.js';
import { startServer } from '../../../../test/support/server-process.js';
import { sequences } from './support.js';

// The install steps of docs/cli.md and docs/client.md ("Installing"), followed outside the
// checkout: `npm pack` of the built package, `npm install -g` of the tarball for the `aviso`
// command, `npm install` of it into a project for the library. Run after `npm run build`.
const REPO = resolve(import.meta.dirname, '../../../..');
const { version } = JSON.parse(readFileSync(join(REPO, 'packages/client/package.json'), 'utf8')) as { version: string };

/**
 * The environment of a user's shell: no npm settings of the test run (`npm_config_*`, set when
 * vitest runs under `npm test`), and a PATH with node but none of the checkout's bins.
 */
function userEnv(path: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  return { ...env, PATH: path };
}

/** npm, run as the user would; the packages come from npm's cache when it holds them. */
function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  return execFileSync('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], { cwd, env, encoding: 'utf8', timeout: 240_000 });
}

describe('the package installed outside the checkout', () => {
  let work: string;
  let tarball: string;
  let globalPrefix: string;
  let shellPath: string;

  beforeAll(() => {
    work = realpathSync(mkdtempSync(join(tmpdir(), 'aviso-install-')));
    globalPrefix = join(work, 'global');
    // node's folder for the bin's `#!/usr/bin/env node`, the system's for npm's build of fs-ext.
    shellPath = [join(globalPrefix, 'bin'), dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
    const env = userEnv(shellPath);
    const packed = JSON.parse(npm(['pack', '-w', '@aviso-ts/client', '--pack-destination', work, '--json'], REPO, env)) as {
      filename: string;
    }[];
    tarball = join(work, packed[0]!.filename);
    npm(['install', '-g', '--prefix', globalPrefix, tarball], work, env);
    mkdirSync(join(work, 'app'));
    writeFileSync(join(work, 'app/package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    npm(['install', tarball], join(work, 'app'), env);
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('is packed and installed in a directory outside the checkout', () => {
    expect(work.startsWith(REPO + sep)).toBe(false);
    expect(tarball).toBe(join(work, `aviso-ts-client-${version}.tgz`));
  });

  it('puts `aviso` on PATH: --version and --help answer from the installed copy', () => {
    const env = userEnv(shellPath);
    const found = execFileSync('sh', ['-c', 'command -v aviso'], { env, encoding: 'utf8' }).trim();
    expect(found).toBe(join(globalPrefix, 'bin/aviso'));
    expect(realpathSync(found).startsWith(join(globalPrefix, 'lib/node_modules/@aviso-ts/client/'))).toBe(true);
    expect(execFileSync('aviso', ['--version'], { env, encoding: 'utf8' })).toBe(`${version}\n`);
    const help = execFileSync('aviso', ['--help'], { env, encoding: 'utf8' });
    expect(help).toMatch(/^Usage: aviso /);
    for (const command of ['notify', 'listen', 'replay', 'schema', 'admin', 'completions'])
      expect(help).toMatch(new RegExp(`\\n  ${command}\\b`));
  });

  it('notifies and replays against a running server with the installed `aviso`', async () => {
    const server = await startServer({ config: serverConfig() });
    try {
      const env = { ...userEnv(shellPath), HOME: work, AVISO_BASE_URL: server.url };
      const mars = 'event=mars,class=od,expver=0001,domain=g,date=20250706,time=12:00,stream=enfo,step:=1';
      execFileSync('aviso', ['notify', mars, 'data={"path":"s3://bucket/x"}'], { env, cwd: work, encoding: 'utf8' });
      const replayed = execFileSync('aviso', ['replay', '--event', 'mars', '--identifier', 'class=od', '--from', '0', '--json'], {
        env,
        cwd: work,
        encoding: 'utf8',
      });
      expect(sequences(replayed)).toEqual([1]);
    } finally {
      await server.stop();
    }
  });

  it("imports the library's public entry in a project, and nothing past it", () => {
    const script = [
      "import * as aviso from '@aviso-ts/client';",
      "import { join } from 'node:path';",
      'const file = join(process.cwd(), "state.json");',
      'const store = new aviso.JsonFileStore(file);',
      'const key = await aviso.resumeKey("http://localhost:8000", "mars", { class: "od" });',
      // The state file's lock is the native fs-ext: a put proves npm built it in the project.
      'await store.put(key, { lastCommittedSequence: 7, lastEventId: "mars@7" });',
      'const internal = await import("@aviso-ts/client/dist/internal.js").then(() => "imported", (e) => e.code);',
      'console.log(JSON.stringify({',
      '  entry: import.meta.resolve("@aviso-ts/client"),',
      '  client: new aviso.AvisoClient({ baseUrl: "http://localhost:8000" }).baseUrl.href,',
      '  stored: await new aviso.JsonFileStore(file).get(key),',
      '  internal,',
      '  backoffDelay: typeof aviso.backoffDelay,',
      '}));',
    ].join('\n');
    writeFileSync(join(work, 'app/use.mjs'), script);
    const out = JSON.parse(
      execFileSync(process.execPath, ['use.mjs'], { cwd: join(work, 'app'), env: userEnv(shellPath), encoding: 'utf8' }),
    ) as Record<string, unknown>;
    expect(out).toEqual({
      entry: `file://${join(work, 'app/node_modules/@aviso-ts/client/dist/index.js')}`,
      client: 'http://localhost:8000/',
      stored: { lastCommittedSequence: 7, lastEventId: 'mars@7' },
      internal: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      backoffDelay: 'undefined',
    });
  });
});
