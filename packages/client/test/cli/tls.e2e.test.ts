import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig, TEST_SCHEMAS } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { cliEnv, ndjson, runCli } from './support.js';

const TLS_DIR = join(import.meta.dirname, '../support/tls');
const CERT = join(TLS_DIR, 'cert.pem');

/**
 * `--ca-bundle` / `tls.ca_bundle`: the CLI trusts a private CA for an https server, refuses the
 * server without it, and refuses to switch certificate checks off. A TLS terminator in front of
 * the real in-memory server stands in for a deployment behind https.
 */
describe('aviso CLI over https', () => {
  let server: RunningServer;
  let terminator: Server;
  let httpsUrl: string;
  let home: string;

  beforeAll(async () => {
    server = await startServer({ config: serverConfig({ notification_schema: TEST_SCHEMAS }) });
    terminator = createServer({ key: readFileSync(join(TLS_DIR, 'key.pem')), cert: readFileSync(CERT) }, (socket) => {
      const upstream = connect(server.port, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      const end = (): void => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', end);
      upstream.on('error', end);
    });
    await new Promise<void>((resolveListen) => terminator.listen(0, '127.0.0.1', resolveListen));
    httpsUrl = `https://127.0.0.1:${(terminator.address() as AddressInfo).port}`;
    home = mkdtempSync(join(tmpdir(), 'aviso-cli-tls-'));
  });
  afterAll(async () => {
    await new Promise((resolveClose) => terminator?.close(resolveClose));
    await server?.stop();
  });

  it('trusts the CA given with --ca-bundle', async () => {
    const list = await runCli(['--base-url', httpsUrl, '--ca-bundle', CERT, 'schema', 'list'], cliEnv(home));
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(ndjson(list.stdout).map((s) => s.event_type)).toContain('mars');
  });

  it('trusts the CA of the config file, and says where it came from', async () => {
    const config = join(home, 'with-ca.yaml');
    writeFileSync(config, `base_url: ${httpsUrl}\ntls:\n  ca_bundle: ${CERT}\n`);
    expect((await runCli(['-c', config, 'schema', 'list'], cliEnv(home))).code).toBe(0);
    const dump = await runCli(['-c', config, 'config', 'dump'], cliEnv(home));
    expect(JSON.parse(dump.stdout)).toMatchObject({ ca_bundle: { value: CERT, source: 'config' } });
  });

  it('fails with exit 1 when the server certificate is not trusted', async () => {
    const result = await runCli(['--base-url', httpsUrl, 'schema', 'list'], cliEnv(home));
    expect(result.code).toBe(1);
    expect(result.stderr).not.toBe('');
  });

  it('refuses an unreadable CA bundle and danger_accept_invalid_certs with usage errors', async () => {
    const missing = await runCli(['--base-url', httpsUrl, '--ca-bundle', join(home, 'none.pem'), 'schema', 'list'], cliEnv(home));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read the CA bundle');
    const config = join(home, 'danger.yaml');
    writeFileSync(config, `base_url: ${httpsUrl}\ntls:\n  danger_accept_invalid_certs: true\n`);
    const danger = await runCli(['-c', config, 'schema', 'list'], cliEnv(home));
    expect(danger.code).toBe(2);
    expect(danger.stderr).toContain('tls.danger_accept_invalid_certs is not supported');
  });
});
