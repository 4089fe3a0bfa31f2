import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWT_SECRET, LOCAL_REALM, signToken } from '../../../../test/support/fake-auth-o-tron.js';
import { serverConfig } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { AvisoClient, BearerAuth } from '../../src/index.js';
import { cliEnv, ndjson, runCli, startCli } from './support.js';

/**
 * The credentials file of the aviso client (`~/.config/aviso/credentials.yaml`, or
 * AVISO_CREDENTIALS_FILE) against the real server with authentication on: it is used when
 * nothing else holds a credential, and a running `aviso listen` reads it again after a 401, so a
 * token that a tool rotated on disk reaches it without a restart.
 */
const EVENT = 'private_feed';
const CLAIMS = { sub: 'admin-user', username: 'admin-user', realm: LOCAL_REALM, roles: ['admin'] };
let server: RunningServer;

beforeAll(async () => {
  server = await startServer({
    config: serverConfig({
      notification_schema: {
        [EVENT]: {
          topic: { base: 'privfeed', key_order: ['name'] },
          identifier: { name: { type: 'StringHandler', required: true } },
          auth: { required: true },
        },
      },
      auth: { enabled: true, mode: 'trusted_proxy', jwt_secret: JWT_SECRET, admin_roles: { [LOCAL_REALM]: ['admin'] } },
      watch_endpoint: { sse_heartbeat_interval_sec: 1 },
    }),
  });
});
afterAll(() => server?.stop());

/** A token the server refuses `seconds` from now (it allows 61 s past `exp`, docs/design/rules/operations.md §2.5). */
const expiringIn = (seconds: number): Promise<string> => signToken({ ...CLAIMS, exp: Math.ceil(Date.now() / 1000) + seconds - 61 });

describe('the credentials file', () => {
  it('is read again after a 401, so a rotated token reaches a running listen', { timeout: 90_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'aviso-creds-'));
    const credentials = join(home, 'credentials.yaml');
    writeFileSync(credentials, `bearer:\n  token: ${await expiringIn(15)}\n`);
    const env = cliEnv(home, { AVISO_BASE_URL: server.url, AVISO_CREDENTIALS_FILE: credentials });
    const dump = await runCli(['--json', 'config', 'dump'], env);
    expect(JSON.parse(dump.stdout)).toMatchObject({ auth: { kind: 'bearer', source: 'credentials file', path: credentials } });

    const cli = startCli(['listen', '--event', EVENT, '--identifier', 'name=n1', '--no-state-store'], env);
    await cli.waitFor(({ stderr }) => stderr.includes(`Listening for ad-hoc [${EVENT}] (name=n1)`));
    // A tool rotates the token on disk while the listener runs on the old one.
    writeFileSync(credentials, `bearer:\n  token: ${await signToken(CLAIMS)}\n`);
    // The server ends the stream when the old token expires; the reconnect's 401 makes the listener re-read the file.
    await cli.waitFor(({ stderr }) => (stderr.match(/cli\.listener\.retrying/g) ?? []).length > 0, 30_000);
    const publisher = new AvisoClient({ baseUrl: server.url, auth: new BearerAuth(await signToken(CLAIMS)) });
    await expect
      .poll(
        async () => {
          await publisher.notify({ eventType: EVENT, identifier: { name: 'n1' } });
          return ndjson(cli.stdout()).length;
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toBeGreaterThan(0);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).not.toContain('Error in listener');
    expect(ndjson(cli.stdout())[0]).toMatchObject({ event_type: EVENT, identifier: { name: 'n1' } });
  });
});
