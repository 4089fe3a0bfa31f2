import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig, TEST_SCHEMAS } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { resumeKey } from '../../src/index.js';
import { cliEnv, ndjson, runCli, sequences, startCli } from './support.js';

const MARS = 'class=od,expver=0001,domain=g,date=20250706,time=12:00,stream=enfo';
const FIXTURES = join(import.meta.dirname, 'fixtures');

/** The weather schema of the aviso client's "weather constraints" tutorial. */
const WEATHER = {
  topic: { base: 'weather', key_order: ['date', 'severity', 'anomaly', 'region'] },
  identifier: {
    date: { type: 'DateHandler', required: true, canonical_format: '%Y%m%d' },
    severity: { type: 'IntHandler', required: false, range: [0, 10] },
    anomaly: { type: 'FloatHandler', required: false, range: [-100, 100] },
    region: { type: 'EnumHandler', required: false, values: ['north', 'south', 'west'] },
  },
  payload: { required: false },
};

describe('aviso CLI behaviour (in memory)', () => {
  let server: RunningServer;
  let home: string;
  let env: Record<string, string>;
  const notify = async (extra: string): Promise<void> => {
    const r = await runCli(['notify', extra], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  };

  beforeAll(async () => {
    server = await startServer({ config: serverConfig({ notification_schema: { ...TEST_SCHEMAS, weather: WEATHER } }) });
    home = mkdtempSync(join(tmpdir(), 'aviso-cli-home-'));
    env = cliEnv(home, { AVISO_BASE_URL: server.url });
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe('exit codes', () => {
    it('2 for usage errors, before anything is sent', async () => {
      const usage = async (args: string[], message: RegExp, e = env): Promise<void> => {
        const r = await runCli(args, e);
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(r.stdout).toBe('');
      };
      await usage(['notify', 'class=od'], /event=<TYPE> is required/);
      await usage(['notify', 'event=mars', '--identifier', 'step:=012'], /not valid JSON/);
      await usage(['--no-such-flag', 'schema', 'list'], /unknown option/);
      await usage(['listen'], /no listeners/);
      await usage(['listen', '--event', 'mars'], /--event requires/);
      await usage(
        ['listen', '--event', 'mars', '--identifiers', '{}', '--identifier', 'class=od'],
        /either --identifiers or repeated --identifier/,
      );
      await usage(['replay', '--event', 'mars', '--identifiers', '{}'], /--from/);
      await usage(['replay', '--event', 'mars', '--identifiers', '{}', '--from', 'yesterday'], /neither a sequence id nor a date/);
      await usage(['admin', 'wipe-all'], /pass --yes to confirm/);
      await usage(['admin', 'delete', 'mars-42', '--yes'], /not a notification id/);
      await usage(['listen', join(FIXTURES, 'missing.yaml')], /cannot read listener file/);
      await usage(['schema', 'list'], /no server URL/, cliEnv(home));
      await usage(['completions', 'tcsh'], /unsupported shell/);
    });
    it('1 for runtime errors: a rejected notification, an unreachable server', async () => {
      const rejected = await runCli(['notify', 'event=mars,class=toolong'], env);
      expect(rejected.code).toBe(1);
      expect(rejected.stderr).toMatch(/^Error: HTTP 400.*\(request id [^)]+\)$/m);
      const down = await runCli(['--base-url', 'http://127.0.0.1:9', 'schema', 'list'], env);
      expect(down.code).toBe(1);
    });
    it('0 for help and version', async () => {
      expect((await runCli(['--help'], env)).code).toBe(0);
      expect((await runCli(['--version'], env)).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    });
  });

  it('schema list/get, config dump --redact and completions', async () => {
    const list = await runCli(['schema', 'list'], env);
    expect(list.code).toBe(0);
    expect(ndjson(list.stdout).map((s) => s.event_type)).toContain('mars');
    const get = await runCli(['schema', 'get', 'mars'], env);
    expect(get.code).toBe(0);
    expect(JSON.parse(get.stdout)).toBeTypeOf('object');
    expect((await runCli(['schema', 'get', 'nope'], env)).code).toBe(1);

    const dump = await runCli(['--token', 's3cret', '--json', 'config', 'dump', '--redact'], env);
    expect(dump.code).toBe(0);
    expect(dump.stdout).not.toContain('s3cret');
    const parsed = JSON.parse(dump.stdout) as Record<string, unknown>;
    expect(parsed.base_url).toEqual({ value: server.url, source: 'env' });
    expect(parsed.auth).toMatchObject({ provider: '<set; redacted>', kind: 'bearer', source: 'flag' });
    expect(parsed.state_file).toEqual({ value: join(home, '.config/aviso/state.json'), source: 'default' });
    // A credential on the command line is announced, as the aviso client announces it.
    expect(ndjson(dump.stderr)).toEqual([
      expect.objectContaining({ severityText: 'WARN', attributes: { 'event.name': 'cli.auth.on_command_line' } }),
    ]);
    const yaml = await runCli(['config', 'dump'], env);
    expect(yaml.stdout).toContain(`base_url: ${server.url} # from: env\n`);

    for (const shell of ['bash', 'elvish', 'fish', 'powershell', 'zsh']) {
      const r = await runCli(['completions', shell], env);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('listen');
      expect(r.stdout).toContain('no-state-store');
    }
    const script = join(home, 'aviso.bash');
    writeFileSync(script, (await runCli(['completions', 'bash'], env)).stdout);
    execFileSync('bash', ['-n', script]);
  });

  it('an ad-hoc listener echoes NDJSON to a pipe and names itself ad-hoc', async () => {
    await notify(`event=mars,${MARS},step:=1`);
    const cli = startCli(['listen', '--event', 'mars', '--identifier', 'class=od', '--from', '0', '--no-state-store'], env);
    await cli.waitFor(({ stderr }) => stderr.includes('Listening for ad-hoc [mars] (class=od). Press Ctrl+C to stop.'));
    await cli.waitFor(({ stdout }) => stdout.includes('\n'));
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(ndjson(cli.stdout())[0]).toMatchObject({ event_type: 'mars', sequence: 1, identifier: { class: 'od' } });
    expect(existsSync(join(home, '.config/aviso/state.json'))).toBe(false);
  });

  it('the documented listener files work unchanged (replay of the weather tutorial selects B and C)', async () => {
    const seeds = [
      ['A', 4, 45, 'north'],
      ['B', 5, 45, 'north'],
      ['C', 7, 50, 'south'],
      ['D', 8, 45, 'west'],
      ['E', 9, 39.5, 'north'],
    ] as const;
    for (const [id, severity, anomaly, region] of seeds) {
      await notify(`event=weather,date=20260913,severity:=${severity},anomaly:=${anomaly},region=${region},data={"id":"${id}"}`);
    }
    const r = await runCli(['replay', join(FIXTURES, 'listener-constraints.yaml'), '--from', '0'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout).map((n) => (n.payload as { id: string }).id)).toEqual(['B', 'C']);
    const minimal = await runCli(
      ['replay', '--listener', 'mars-od', join(FIXTURES, 'listener-minimal.yaml'), '--from', '0', '--until', '1'],
      env,
    );
    expect(minimal.code).toBe(0);
    expect(sequences(minimal.stdout)).toEqual([1]);
  });

  it('reads a state file in the aviso client format and resumes after its cursor', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aviso-cli-state-'));
    for (let step = 10; step < 13; step += 1) await notify(`event=mars,${MARS.replace('class=od', 'class=rd')},step:=${step}`);
    const replayed = await runCli(['replay', '--event', 'mars', '--identifier', 'class=rd', '--from', '0'], env);
    const [s1, s2, s3] = sequences(replayed.stdout);
    // The documented example, with the key of this server, event and filter.
    const documented = JSON.parse(readFileSync(join(FIXTURES, 'state-file-documented.json'), 'utf8')) as {
      checkpoints: Record<string, { last_committed_sequence: number; last_event_id: string }>;
    };
    const [example] = Object.values(documented.checkpoints);
    const stateFile = join(dir, 'state.json');
    const key = await resumeKey(server.url, 'mars', { class: 'rd' });
    writeFileSync(
      stateFile,
      JSON.stringify({
        ...documented,
        checkpoints: { ...documented.checkpoints, [key]: { ...example, last_committed_sequence: s1, last_event_id: `mars@${s1}` } },
      }),
    );
    const cli = startCli(['--state-file', stateFile, 'listen', '--event', 'mars', '--identifier', 'class=rd'], env);
    await cli.waitFor(({ stdout }) => stdout.split('\n').length > 2);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(sequences(cli.stdout())).toEqual([s2, s3]);
    const after = JSON.parse(readFileSync(stateFile, 'utf8')) as typeof documented & { version: number; key_format_version: number };
    expect(after.version).toBe(1);
    expect(after.key_format_version).toBe(1);
    expect(after.checkpoints[key]).toEqual({ last_committed_sequence: s3, last_event_id: `mars@${s3}` });
    // The other checkpoint of the file is kept as it was.
    expect(after.checkpoints['46fe3e30937478ae30527c74cb2f03a5e5419228a11051cdaccefe7d044b21c3']).toEqual(example);
  });

  it('one failing listener does not stop the others, and the run then exits 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aviso-cli-fail-'));
    const file = join(dir, 'listeners.yaml');
    writeFileSync(
      file,
      `listeners:\n  - name: broken\n    event: mars\n    identifiers: {}\n    triggers:\n      - type: echo\n  - name: good\n    event: mars\n    identifiers:\n      class: od\n    triggers:\n      - type: echo\n`,
    );
    const cli = startCli(['listen', file, '--no-state-store'], env);
    await cli.waitFor(
      ({ stderr }) =>
        stderr.includes("Error in listener broken: HTTP 400: Required field 'class' missing") &&
        stderr.includes('  Other listeners continue.') &&
        stderr.includes('Listening for good [mars]'),
    );
    await notify(`event=mars,${MARS},step:=99`);
    await cli.waitFor(({ stdout }) => stdout.includes('"step":"99"'));
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toMatch(/^ {2}Hint: identifiers the schema marks `required: true`/m);
    expect(cli.stderr().trimEnd().split('\n').at(-1)).toBe(
      'Some listeners stopped with errors (see messages above). Exiting with non-zero status.',
    );
  });

  it('a second Ctrl+C within 5 s exits 130 without waiting for the running trigger', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aviso-cli-int-'));
    const started = join(dir, 'started');
    const file = join(dir, 'listeners.yaml');
    writeFileSync(
      file,
      `listeners:\n  - event: mars\n    identifiers: {class: od}\n    triggers:\n      - type: command\n        command: 'touch ${started}; sleep 5'\n`,
    );
    const cli = startCli(['listen', file, '--no-state-store'], env);
    await cli.waitFor(({ stderr }) => stderr.includes('Listening for mars [mars]'));
    await notify(`event=mars,${MARS},step:=77`);
    await cli.waitFor(() => existsSync(started));
    cli.child.kill('SIGINT');
    await cli.waitFor(({ stderr }) => stderr.includes('Stopping'));
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(130);
  });

  it('the command-on-every-notification example of docs/cli.md runs as documented', async () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../../docs/cli.md'), 'utf8');
    const block = /<!-- tested: every-notification -->\n```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'aviso-cli-doc-'));
    writeFileSync(join(dir, 'every-mars.yaml'), block as string);
    const cli = startCli(['listen', 'every-mars.yaml', '--no-state-store'], env, dir);
    await cli.waitFor(({ stderr }) => stderr.includes('Listening for every-mars [mars] (class=od)'));
    await notify(`event=mars,${MARS},step:=31`);
    await notify(`event=mars,${MARS},step:=32`);
    const log = join(dir, 'notifications.log');
    await cli.waitFor(() => existsSync(log) && readFileSync(log, 'utf8').split('\n').length > 2);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(readFileSync(log, 'utf8')).toMatch(/^mars@\d+ step=31\nmars@\d+ step=32\n$/);
  });

  it("uses the config file's listeners: when no file is given, and replay --listener picks one", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aviso-cli-config-'));
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      `base_url: ${server.url}\nlisteners:\n  - name: from-config\n    event: mars\n    identifiers: {class: od}\n    triggers: [{type: echo}]\n  - name: other\n    event: mars\n    identifiers: {class: rd}\n`,
    );
    const noUrl = cliEnv(home);
    await notify(`event=mars,${MARS},step:=41`);
    const cli = startCli(['--config', config, 'listen', '--no-state-store', '--from', '0'], noUrl);
    await cli.waitFor(({ stderr }) => stderr.includes('Listening for from-config [mars]') && stderr.includes('Listening for other [mars]'));
    await cli.waitFor(({ stdout }) => stdout.includes('\n'));
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    const ambiguous = await runCli(['--config', config, 'replay', '--from', '0'], noUrl);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/choose one with --listener NAME \(from-config, other\)/);
    const picked = await runCli(['--config', config, 'replay', '--listener', 'from-config', '--from', '0'], noUrl);
    expect(picked.code).toBe(0);
    const classes = ndjson(picked.stdout).map((n) => (n.identifier as { class: string }).class);
    expect(classes.length).toBeGreaterThan(0);
    expect(new Set(classes)).toEqual(new Set(['od']));
  });

  it('--startup-timeout fails a listener that never connects (exit 1)', async () => {
    const r = await runCli(
      [
        '--base-url',
        'http://127.0.0.1:9',
        'listen',
        '--event',
        'mars',
        '--identifier',
        'class=od',
        '--no-state-store',
        '--startup-timeout',
        '1s',
      ],
      env,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error in listener ad-hoc: listener startup timeout exceeded/m);
    expect(r.stderr).not.toContain('Listening for');
    // Ctrl+C while it is still retrying is a clean stop.
    const retrying = startCli(
      ['--base-url', 'http://127.0.0.1:9', 'listen', '--event', 'mars', '--identifiers', '{}', '--no-state-store'],
      env,
    );
    await retrying.waitFor(({ stderr }) => stderr.includes('Retrying listener connection'));
    retrying.child.kill('SIGINT');
    expect(await retrying.exited).toBe(0);
    expect(retrying.stderr()).toContain('All listeners stopped.');
  });

  it('the post trigger forwards the server CloudEvent as application/cloudevents+json', async () => {
    const bodies: { type: string | undefined; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        bodies.push({ type: req.headers['content-type'], body });
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const port = (receiver.address() as AddressInfo).port;
      const dir = mkdtempSync(join(tmpdir(), 'aviso-cli-post-'));
      const file = join(dir, 'post.yaml');
      writeFileSync(
        file,
        `listeners:\n  - event: mars\n    identifiers: {class: od, step: 51}\n    triggers:\n      - type: post\n        url: "http://127.0.0.1:${port}/aviso/{{ notification.identifier.step }}"\n`,
      );
      const cli = startCli(['listen', file, '--no-state-store'], env);
      await cli.waitFor(({ stderr }) => stderr.includes('Listening for mars [mars]'));
      await notify(`event=mars,${MARS},step:=51`);
      await cli.waitFor(() => bodies.length === 1);
      cli.child.kill('SIGINT');
      expect(await cli.exited).toBe(0);
      expect(bodies[0]?.type).toBe('application/cloudevents+json');
      const event = JSON.parse(bodies[0]?.body ?? '') as Record<string, unknown>;
      expect(event).toMatchObject({ specversion: '1.0', type: expect.stringContaining('mars'), id: expect.stringMatching(/^mars@\d+$/) });
      expect(event.data).toMatchObject({ identifier: { class: 'od', step: '51' } });
    } finally {
      receiver.close();
    }
  });

  it('the bin is executable with its shebang and linked where npx finds it', () => {
    const bin = resolve(import.meta.dirname, '../../bin/aviso.js');
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    expect(realpathSync(resolve(import.meta.dirname, '../../../../node_modules/.bin/aviso'))).toBe(realpathSync(bin));
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
