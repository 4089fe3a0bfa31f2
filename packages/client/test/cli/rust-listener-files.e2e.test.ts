import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig, TEST_SCHEMAS } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { cliEnv, ndjson, runCli, startCli } from './support.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');

/**
 * Listener files from the aviso client's documentation (fixtures/README.md), run unchanged by the
 * real bin against the real server: the Teams card reaches a local receiver standing in for a
 * Teams Workflows endpoint, and the email recipe (a command through msmtp, optional) fails on
 * this machine without msmtp, warns, and does not stop the listeners. The server's `mars` leaves
 * `class` optional, as the documentation's server does, so the email listener needs no filter.
 */
describe('listener files written for the Rust aviso', () => {
  let server: RunningServer;
  let receiver: Server;
  const cards: Record<string, unknown>[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    const mars = TEST_SCHEMAS.mars as { identifier: Record<string, Record<string, unknown>> };
    const optionalClass = { ...mars, identifier: { ...mars.identifier, class: { ...mars.identifier.class, required: false } } };
    server = await startServer({ config: serverConfig({ notification_schema: { ...TEST_SCHEMAS, mars: optionalClass } }) });
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        cards.push({ path: req.url, type: req.headers['content-type'], card: JSON.parse(body) as unknown });
        res.statusCode = 202;
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const teams = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/workflows/abc/triggers/manual/paths/invoke?sig=secret`;
    env = cliEnv(mkdtempSync(join(tmpdir(), 'aviso-rust-files-')), { AVISO_BASE_URL: server.url, TEAMS_WEBHOOK_URL: teams });
  });
  afterAll(async () => {
    receiver?.close();
    await server?.stop();
  });

  it('the Teams and email examples run unchanged', async () => {
    const cli = startCli(['listen', join(FIXTURES, 'listener-teams.yaml'), join(FIXTURES, 'listener-email.yaml'), '--no-state-store'], env);
    await cli.waitFor(
      ({ stderr }) => stderr.includes('Listening for mars-od [mars] (class=od)') && stderr.includes('Listening for ops-email [mars]'),
    );
    for (const step of [1, 2]) {
      const r = await runCli(
        ['notify', `event=mars,class=od,expver=0001,domain=g,date=20250706,time=12:00,stream=enfo,step:=${step}`, 'data={"seed":"x"}'],
        env,
      );
      expect(r.code).toBe(0);
    }
    await cli.waitFor(() => cards.length === 2);
    await cli.waitFor(({ stderr }) => (stderr.match(/client\.trigger\.failed/g) ?? []).length === 2);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);

    expect(cards[0]).toMatchObject({ path: '/workflows/abc/triggers/manual/paths/invoke?sig=secret', type: 'application/json' });
    const body = (
      cards[0]?.card as { attachments: { content: { body: { text?: string; facts?: { title: string; value: string }[] }[] } }[] }
    ).attachments[0]!.content.body;
    expect(body[0]?.text).toBe('Custom title mars');
    expect(body[1]?.facts?.slice(0, 3)).toEqual([
      { title: 'Event', value: 'mars' },
      { title: 'Sequence', value: expect.stringMatching(/^\d+$/) },
      { title: 'class', value: 'od' },
    ]);
    expect(body[3]?.facts).toEqual([{ title: 'seed', value: 'x' }]);

    const warnings = ndjson(
      cli
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .join('\n'),
    );
    expect(warnings).toEqual([
      expect.objectContaining({
        severityText: 'WARN',
        body: 'optional trigger failed; continuing',
        attributes: expect.objectContaining({ listener: 'ops-email', kind: 'command' }),
      }),
      expect.objectContaining({ severityText: 'WARN', attributes: expect.objectContaining({ listener: 'ops-email', kind: 'command' }) }),
    ]);
    expect(cli.stderr()).not.toContain('Error in listener');
  });
});
