import { connect as connectTls } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { http2Client, https1Client } from '../support/tls-clients.js';
import { TRANSCRIPT_REQUEST, expectCloudEvent, transcriptNotification } from '../support/transcript.js';

/**
 * docs/design/rules/browser.md §3 and §5: the certificate files are read at startup and again on every reload, so a
 * renewed certificate is served from the next handshake on while open connections and their
 * streams go on; files that cannot be used refuse the reload with startup's line.
 */
let first: TestCertificates;
let second: TestCertificates;
let server: RunningServer;

function tlsConfig(certificates: TestCertificates, certFile = certificates.certFile): Record<string, unknown> {
  return withTls(serverConfig(), { certFile, keyFile: certificates.keyFile });
}

/** SHA-256 fingerprint of the certificate a new TLS handshake is given. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTls(
      { host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, ALPNProtocols: ['h2'] },
      () => {
        const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
        socket.destroy();
        resolve(fingerprint);
      },
    );
    socket.once('error', reject);
  });
}

const fingerprintOf = (certificates: TestCertificates): string => new X509Certificate(readFileSync(certificates.certFile)).fingerprint256;

beforeAll(async () => {
  first = createTestCertificates();
  second = createTestCertificates();
  server = await startServer({ config: tlsConfig(first) });
});
afterAll(async () => {
  await server?.stop();
  first?.remove();
  second?.remove();
});

describe('certificates on reload', () => {
  it('serves the new certificate to new connections while a stream opened before keeps receiving', async () => {
    expect(await servedFingerprint(server.port)).toBe(fingerprintOf(first));
    const before = http2Client(`https://localhost:${server.port}`, first.ca);
    try {
      const stream = await before.stream('/api/v1/watch', TRANSCRIPT_REQUEST);
      const opening = await stream.nextSignificant();
      expect(opening?.json.type).toBe('connection_established');

      server.rewriteConfig(tlsConfig(second));
      const from = server.logs.length;
      server.signal('SIGHUP');
      const succeeded = await server.waitForLog('configuration.reload.succeeded', { from });
      expect(succeeded.attributes?.['event.name']).toBe('configuration.reload.succeeded');
      // New file names are applied live, not reported as waiting for a restart.
      expect(server.logs.slice(from).some((line) => line.attributes?.['event.name'] === 'configuration.reload.ignored')).toBe(false);

      expect(await servedFingerprint(server.port)).toBe(fingerprintOf(second));
      // A client trusting only the new CA now connects; the old session still works.
      const after = https1Client(`https://localhost:${server.port}`, second.ca);
      try {
        expect((await after.request('/api/v1/notification', { body: transcriptNotification('after reload') })).status).toBe(200);
      } finally {
        after.close();
      }
      const live = await stream.nextSignificant();
      expectCloudEvent(live, 'live-notification', Number((live?.json.id as string).split('@')[1]), 'after reload');
      stream.close();
    } finally {
      before.close();
    }
  });

  it('refuses a reload whose certificate file cannot be read, with startup line, and keeps serving the old certificate', async () => {
    const missing = `${second.dir}/renewed.pem`;
    server.rewriteConfig(tlsConfig(second, missing));
    const client = https1Client(`https://localhost:${server.port}`, second.ca);
    try {
      const response = await client.request('/api/v1/admin/reload', { method: 'POST' });
      expect(response.status).toBe(400);
      expect(response.json.code).toBe('INVALID_CONFIGURATION');
      expect(response.json.message).toBe(`configuration error: application.tls.cert_file: cannot read ${missing}: no such file`);
    } finally {
      client.close();
    }
    expect(await servedFingerprint(server.port)).toBe(fingerprintOf(second));
  });
});
