import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig, TEST_SCHEMAS } from '../../../../test/support/schemas.js';
import { startServer, type RunningServer } from '../../../../test/support/server-process.js';
import { createTestCertificates } from '../../../../test/support/test-certificates.js';
import { cliEnv, ndjson, runCli } from './support.js';

const TLS_DIR = join(import.meta.dirname, '../support/tls');
const CERT = join(TLS_DIR, 'cert.pem');

/**
 * `--ca-bundle` / `tls.ca_bundle`: the CLI trusts private CAs for an https server (added to the
 * default roots), refuses the server without them, and switches certificate checks off only when
 * told to, warning on every run. A TLS terminator in front of the real in-memory server stands in
 * for a deployment behind https.
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

  it('trusts the CA files of the config file, relative ones next to it, and says where they came from', async () => {
    const dir = mkdtempSync(join(home, 'conf-'));
    copyFileSync(CERT, join(dir, 'internal-ca.pem'));
    const config = join(dir, 'with-ca.yaml');
    writeFileSync(config, `base_url: ${httpsUrl}\ntls:\n  ca_bundle:\n    - internal-ca.pem\n`);
    // Run from elsewhere: the relative path is the config file's neighbour, not the working directory's.
    expect((await runCli(['-c', config, 'schema', 'list'], cliEnv(home), tmpdir())).code).toBe(0);
    const dump = await runCli(['-c', config, '--json', 'config', 'dump'], cliEnv(home));
    expect(JSON.parse(dump.stdout)).toMatchObject({ tls: { ca_bundle: { value: [join(dir, 'internal-ca.pem')], source: 'file' } } });
  });

  it('takes --ca-bundle more than once', async () => {
    const other = createTestCertificates();
    try {
      const r = await runCli(['--base-url', httpsUrl, '--ca-bundle', other.caFile, '--ca-bundle', CERT, 'schema', 'list'], cliEnv(home));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    } finally {
      other.remove();
    }
  });

  it('fails with exit 1 when the server certificate is not trusted', async () => {
    const result = await runCli(['--base-url', httpsUrl, 'schema', 'list'], cliEnv(home));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/self-signed|certificate/i);
  });

  it('refuses an unreadable CA bundle, or one without a certificate, with usage errors', async () => {
    const missing = await runCli(['--base-url', httpsUrl, '--ca-bundle', join(home, 'none.pem'), 'schema', 'list'], cliEnv(home));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read the CA bundle');
    const empty = join(home, 'empty.pem');
    writeFileSync(empty, 'not a certificate\n');
    const notPem = await runCli(['--base-url', httpsUrl, '--ca-bundle', empty, 'schema', 'list'], cliEnv(home));
    expect(notPem.code).toBe(2);
    expect(notPem.stderr).toContain(`CA bundle ${empty} contains no certificate`);
  });

  it('--danger-accept-invalid-certs and tls.danger_accept_invalid_certs: true accept any certificate, with a warning on every run', async () => {
    const flag = await runCli(['--base-url', httpsUrl, '--danger-accept-invalid-certs', 'schema', 'list'], cliEnv(home));
    expect(flag.code).toBe(0);
    expect(ndjson(flag.stdout).map((s) => s.event_type)).toContain('mars');
    const warning = {
      severityText: 'WARN',
      body: expect.stringContaining('TLS certificate validation disabled'),
      attributes: { 'event.name': 'cli.tls.insecure_mode' },
    };
    expect(ndjson(flag.stderr)).toEqual([expect.objectContaining(warning)]);
    const config = join(home, 'danger.yaml');
    writeFileSync(config, `base_url: ${httpsUrl}\ntls:\n  danger_accept_invalid_certs: true\n`);
    for (let run = 0; run < 2; run += 1) {
      const fromFile = await runCli(['-c', config, 'schema', 'list'], cliEnv(home));
      expect(fromFile.code).toBe(0);
      expect(ndjson(fromFile.stderr)).toEqual([expect.objectContaining(warning)]);
    }
  });
});
