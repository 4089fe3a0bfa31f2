import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test/support/eventually.js';
import { findFreePort } from '../../../../test/support/ports.js';
import { serverConfig, TEST_SCHEMAS } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { resumeKey } from '../../src/index.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { CLI_ENTRY, cliEnv, ndjson, runCli, sequences, startCli } from './support.js';

/**
 * The `aviso` bin against the real in-memory server, for what a person moving from the Rust
 * `aviso` notices first: where listening starts, what stderr says and in which shape, how found
 * credentials are guarded, and the smaller surfaces (notify's line, config dump, completions).
 * Each test uses its own `destination`, so its notifications are its own.
 */
describe('aviso as a drop-in for the Rust aviso', () => {
  let server: RunningServer;
  let home: string;
  let env: Record<string, string>;
  /** Nothing listens there: every connection is refused. */
  let closed: string;

  beforeAll(async () => {
    server = await startServer({ config: serverConfig({ notification_schema: TEST_SCHEMAS }) });
    home = mkdtempSync(join(tmpdir(), 'aviso-dropin-'));
    env = cliEnv(home, { AVISO_BASE_URL: server.url });
    closed = `http://127.0.0.1:${await findFreePort()}`;
  });
  afterAll(async () => {
    await server?.stop();
  });

  const notify = async (destination: string, count: number): Promise<void> => {
    for (let i = 0; i < count; i += 1) {
      const r = await runCli(['notify', `event=dissemination,destination=${destination},class=od`], env);
      expect(r.code).toBe(0);
    }
  };
  const stored = async (destination: string): Promise<number[]> =>
    sequences(
      (
        await runCli(
          ['replay', '--event', 'dissemination', '--identifier', `destination=${destination}`, '--identifier', 'class=od', '--from', '0'],
          env,
        )
      ).stdout,
    );
  const records = (stderr: string): Record<string, unknown>[] =>
    ndjson(
      stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .join('\n'),
    );

  it(
    '--from N and from_id: N start after N; an explicit start beats the saved cursor, which never moves back',
    { timeout: 90_000 },
    async () => {
      await notify('START', 4);
      const all = await stored('START');
      expect(all).toHaveLength(4);
      const [s1, s2, s3, s4] = all as [number, number, number, number];
      const dir = mkdtempSync(join(tmpdir(), 'aviso-dropin-start-'));
      const stateFile = join(dir, 'state.json');
      const adHoc = [
        '--state-file',
        stateFile,
        'listen',
        '--event',
        'dissemination',
        '--identifier',
        'destination=START',
        '--identifier',
        'class=od',
      ];

      const fromFlag = startCli([...adHoc, '--from', String(s2)], env);
      await fromFlag.waitFor(({ stdout }) => sequences(stdout).length >= 2);
      fromFlag.child.kill('SIGINT');
      expect(await fromFlag.exited).toBe(0);
      expect(sequences(fromFlag.stdout())).toEqual([s3, s4]);

      const file = join(dir, 'listeners.yaml');
      writeFileSync(
        file,
        `listeners:\n  - event: dissemination\n    identifiers:\n      destination: START\n      class: od\n    from_id: ${s1}\n    triggers:\n      - type: echo\n`,
      );
      const fromFile = startCli(['--state-file', stateFile, 'listen', file], env);
      await fromFile.waitFor(({ stdout }) => sequences(stdout).length >= 3);
      fromFile.child.kill('SIGINT');
      expect(await fromFile.exited).toBe(0);
      expect(sequences(fromFile.stdout())).toEqual([s2, s3, s4]);

      const key = await resumeKey(server.url, 'dissemination', { destination: 'START', class: 'od' });
      const saved = (): number =>
        (JSON.parse(readFileSync(stateFile, 'utf8')) as { checkpoints: Record<string, { last_committed_sequence: number }> }).checkpoints[
          key
        ]!.last_committed_sequence;
      expect(saved()).toBe(s4);

      const resumed = startCli(adHoc, env);
      await resumed.waitFor(({ stderr }) => stderr.includes('Listening for ad-hoc [dissemination] (class=od, destination=START)'));
      await notify('START', 1);
      await resumed.waitFor(({ stdout }) => sequences(stdout).length >= 1);
      resumed.child.kill('SIGINT');
      expect(await resumed.exited).toBe(0);
      const [s5] = (await stored('START')).slice(-1);
      expect(sequences(resumed.stdout())).toEqual([s5]);
      expect(saved()).toBe(s5);
      // replay --from 0 is "after 0": everything stored.
      expect(await stored('START')).toEqual([s1, s2, s3, s4, s5]);
    },
  );

  it('says Connecting, then Listening per listener (named by event type by default), and warns about odd listener files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aviso-dropin-lines-'));
    const file = join(dir, 'listeners.yaml');
    writeFileSync(
      file,
      [
        'listeners:',
        '  - event: dissemination',
        '    identifiers: {destination: LINES, class: od}',
        '    triggers: [{type: echo}]',
        '  - name: twin',
        '    event: dissemination',
        '    identifiers: {destination: LINES, class: rd}',
        '  - name: twin',
        '    event: dissemination',
        '    identifiers: {destination: LINES, class: xx}',
        '    triggers: [{type: echo}]',
        '',
      ].join('\n'),
    );
    const cli = startCli(['listen', file, '--no-state-store'], env);
    await cli.waitFor(({ stderr }) => (stderr.match(/^Listening for /gm) ?? []).length === 3);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    const lines = cli.stderr().trimEnd().split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'warning: listener `twin` has no triggers; notifications will be received but silently discarded. Add `triggers: [{ type: echo }]` (or another trigger type) to your listener YAML to see them.',
      'warning: listener name `twin` appears 2 times; per-listener errors and log records will be indistinguishable. Give each listener a unique `name:` in the YAML to disambiguate.',
      'Connecting for dissemination [dissemination] (class=od, destination=LINES), twin [dissemination] (class=rd, destination=LINES), twin [dissemination] (class=xx, destination=LINES)...',
    ]);
    expect(lines).toContain('Listening for dissemination [dissemination] (class=od, destination=LINES). Press Ctrl+C to stop.');
    expect(lines.at(-1)).toBe('All listeners stopped.');
  });

  it("reports retries at INFO as the aviso client's JSON records when stderr is not a terminal; AVISO_LOG sets the level", async () => {
    const failing = await runCli(
      ['--base-url', closed, 'listen', '--event', 'dissemination', '--identifiers', '{}', '--no-state-store', '--startup-timeout', '1s'],
      env,
    );
    expect(failing.code).toBe(1);
    const [retry] = records(failing.stderr);
    expect(retry).toMatchObject({
      severityText: 'INFO',
      severityNumber: 9,
      body: 'Retrying listener connection',
      resource: { 'service.name': 'aviso-cli', 'service.version': expect.stringMatching(/^\d+\.\d+\.\d+$/) },
      attributes: {
        'event.name': 'cli.listener.retrying',
        listener: 'ad-hoc',
        cause: expect.stringContaining('ECONNREFUSED'),
        delay_ms: expect.any(Number),
      },
    });
    expect(retry?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(failing.stderr).toMatch(/^Error in listener ad-hoc: listener startup timeout exceeded/m);

    const quiet = await runCli(
      ['--base-url', closed, 'listen', '--event', 'dissemination', '--identifiers', '{}', '--no-state-store', '--startup-timeout', '1s'],
      { ...env, AVISO_LOG: 'warn' },
    );
    expect(records(quiet.stderr)).toEqual([]);
    const verbose = await runCli(['-v', 'schema', 'list'], env);
    expect(records(verbose.stderr)).toEqual([
      expect.objectContaining({ severityText: 'DEBUG', attributes: expect.objectContaining({ 'event.name': 'cli.config.resolved' }) }),
    ]);
    expect(records((await runCli(['-v', 'schema', 'list'], { ...env, AVISO_LOG: 'warn,aviso=info' })).stderr)).toEqual([]);
    expect(records((await runCli(['schema', 'list'], { ...env, AVISO_LOG: 'aviso=debug' })).stderr)).toHaveLength(1);
  });

  it('writes readable lines on a terminal, colored with --color always or auto (not with NO_COLOR)', () => {
    const onTerminal = (args: string[], extra: Record<string, string> = {}): string => {
      const command = [
        process.execPath,
        CLI_ENTRY,
        '--base-url',
        closed,
        ...args,
        'listen',
        '--event',
        'dissemination',
        '--identifiers',
        '{}',
        '--no-state-store',
        '--startup-timeout',
        '1s',
      ]
        .map((a) => `'${a}'`)
        .join(' ');
      return spawnSync('script', ['-qec', command, '/dev/null'], { env: { ...env, ...extra }, encoding: 'utf8', timeout: 60_000 }).stdout;
    };
    const plain = onTerminal([]);
    expect(plain).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} {2}INFO Retrying listener connection event\.name=cli\.listener\.retrying listener=ad-hoc cause="transport error: fetch failed \(ECONNREFUSED/m,
    );
    expect(plain).not.toContain('\u001b[');
    expect(onTerminal(['--color', 'always'], { NO_COLOR: '1' })).toContain('\u001b[32m INFO\u001b[0m');
    expect(onTerminal(['--color', 'auto'])).toContain('\u001b[32m INFO\u001b[0m');
    expect(onTerminal(['--color', 'auto'], { NO_COLOR: '1' })).not.toContain('\u001b[');
  });

  it('--startup-timeout 0s turns the startup budget off', async () => {
    const proxy = await FaultProxy.start(server.port);
    try {
      const listen = (budget: string): ReturnType<typeof startCli> =>
        startCli(
          [
            '--base-url',
            proxy.url,
            'listen',
            '--event',
            'dissemination',
            '--identifiers',
            '{"class":"od","destination":"BUDGET"}',
            '--no-state-store',
            '--startup-timeout',
            budget,
          ],
          env,
        );
      proxy.setMode({ kind: 'status', status: 503, retryAfter: '3' });
      // A 3 s Retry-After cannot fit a 1 s budget: the listener gives up without waiting.
      const bounded = listen('1s');
      expect(await bounded.exited).toBe(1);
      expect(bounded.stderr()).toMatch(/listener startup timeout exceeded.*HTTP 503/);
      const accepted = proxy.accepted;
      const unbounded = listen('0s');
      await eventually('the first attempt of the unbounded listener', () => proxy.accepted > accepted);
      proxy.setMode({ kind: 'forward' });
      await unbounded.waitFor(
        ({ stderr }) => stderr.includes('Listening for ad-hoc [dissemination] (class=od, destination=BUDGET)'),
        30_000,
      );
      unbounded.child.kill('SIGINT');
      expect(await unbounded.exited).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('never sends a credential it found to a remote http:// address; one given on the command line goes, with warnings', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const remote = createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ event_types: [], schema: {} }));
    });
    await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
    // An IPv4-mapped address reaches this machine but is not loopback by the aviso client's rule.
    const url = `http://[::ffff:127.0.0.1]:${(remote.address() as AddressInfo).port}`;
    try {
      const credentials = join(home, 'credentials.yaml');
      writeFileSync(credentials, 'bearer:\n  token: found-in-a-file\n');
      const refused = await runCli(['--base-url', url, 'schema', 'list'], { ...env, AVISO_CREDENTIALS_FILE: credentials });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `refusing to send the credential from the credentials file ${credentials} to http://[::ffff:7f00:1]:`,
      );
      const fromEnv = await runCli(['--base-url', url, 'schema', 'list'], { ...env, AVISO_TOKEN: 'found-in-env' });
      expect(fromEnv.stderr).toContain('refusing to send the credential from the environment');
      expect(seen).toHaveLength(0);
      // config dump still says where it would have come from.
      const dump = await runCli(['--base-url', url, 'config', 'dump'], { ...env, AVISO_CREDENTIALS_FILE: credentials });
      expect(dump.stdout).toContain(`  source: credentials file ${credentials}\n`);

      const given = await runCli(['--base-url', url, '--token', 'typed-by-hand', 'schema', 'list'], env);
      expect(given.code).toBe(0);
      expect(seen.map((h) => h.authorization)).toEqual(['Bearer typed-by-hand']);
      expect(records(given.stderr).map((r) => (r.attributes as Record<string, unknown>)['event.name'])).toEqual([
        'cli.auth.on_command_line',
        'client.auth.plaintext',
      ]);
    } finally {
      remote.close();
    }
  });

  it("prints the aviso client's notify line, dumps YAML unless --json, accepts a missing --config, completes every shell", async () => {
    const line = spawnSync(
      'script',
      [
        '-qec',
        [process.execPath, CLI_ENTRY, 'notify', 'event=dissemination,destination=NOTIFY,class=od'].map((a) => `'${a}'`).join(' '),
        '/dev/null',
      ],
      {
        env,
        encoding: 'utf8',
      },
    ).stdout;
    expect(line).toMatch(
      /^notification accepted: event_type=dissemination, status=success, request_id=[0-9a-f-]{36}, processed_at=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\r?\n$/,
    );
    const piped = await runCli(['notify', 'event=dissemination,destination=NOTIFY,class=od'], env);
    expect(Object.keys(JSON.parse(piped.stdout) as object)).toEqual(['event_type', 'status', 'request_id', 'processed_at']);

    const missing = await runCli(['--config', join(home, 'no-such-config.yaml'), 'config', 'dump'], env);
    expect(missing.code).toBe(0);
    expect(missing.stdout).toContain(`config_path: ${join(home, 'no-such-config.yaml')} # from: flag\n`);
    expect(JSON.parse((await runCli(['--json', 'config', 'dump'], env)).stdout)).toMatchObject({
      base_url: { value: server.url, source: 'env' },
    });

    for (const shell of ['bash', 'elvish', 'fish', 'powershell', 'zsh']) {
      const script = await runCli(['completions', shell], env);
      expect(script.code).toBe(0);
      for (const word of ['listen', 'replay', 'completions', 'danger-accept-invalid-certs', 'startup-timeout'])
        expect(script.stdout).toContain(word);
    }
    const bash = join(home, 'aviso.bash');
    writeFileSync(bash, (await runCli(['completions', 'bash'], env)).stdout);
    execFileSync('bash', ['-n', bash]);
  });

  it('resumes from a state file whose keys use key_format_version 2, and keeps it at 2', async () => {
    await notify('KEYV2', 3);
    const [k1, , k3] = (await stored('KEYV2')) as [number, number, number];
    const stateFile = join(mkdtempSync(join(tmpdir(), 'aviso-dropin-v2-')), 'state.json');
    const key = await resumeKey(server.url, 'dissemination', { destination: 'KEYV2', class: 'od' }, 2);
    writeFileSync(
      stateFile,
      JSON.stringify({
        version: 1,
        key_format_version: 2,
        checkpoints: { [key]: { last_committed_sequence: k1, last_event_id: `dissemination@${k1}` } },
      }),
    );
    const cli = startCli(
      ['--state-file', stateFile, 'listen', '--event', 'dissemination', '--identifier', 'destination=KEYV2', '--identifier', 'class=od'],
      env,
    );
    await cli.waitFor(({ stdout }) => sequences(stdout).length >= 2);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(sequences(cli.stdout())).toHaveLength(2);
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toEqual({
      version: 1,
      key_format_version: 2,
      checkpoints: { [key]: { last_committed_sequence: k3, last_event_id: `dissemination@${k3}` } },
    });
  });
});
