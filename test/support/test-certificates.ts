import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A private CA and a server certificate it signed for `localhost` and `127.0.0.1`, made with openssl. */
export interface TestCertificates {
  readonly dir: string;
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** The CA certificate (PEM), for clients to trust. */
  readonly ca: Buffer;
  /** base64 SHA-256 of the server certificate's public key: Chromium's `--ignore-certificate-errors-spki-list`. */
  readonly spkiHash: string;
  remove(): void;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Generates fresh material in a temporary directory (a second or two of openssl). */
export function createTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'aviso-tls-'));
  openssl(
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=aviso test CA'],
    dir,
  );
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'server.ext',
    ],
    dir,
  );
  const certFile = join(dir, 'server.pem');
  const publicKey = new X509Certificate(readFileSync(certFile)).publicKey.export({ type: 'spki', format: 'der' });
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    certFile,
    keyFile: join(dir, 'server.key'),
    ca: readFileSync(join(dir, 'ca.pem')),
    spkiHash: createHash('sha256').update(publicKey).digest('base64'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * `config` (a whole server configuration, e.g. from `serverConfig()`) serving HTTPS with
 * `certificates`; `application` adds or overrides other `application` settings.
 */
export function withTls(
  config: Record<string, unknown>,
  certificates: Pick<TestCertificates, 'certFile' | 'keyFile'>,
  application: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...config,
    application: {
      ...(config.application as object),
      tls: { cert_file: certificates.certFile, key_file: certificates.keyFile },
      ...application,
    },
  };
}
