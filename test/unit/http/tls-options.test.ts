import { X509Certificate } from 'node:crypto';
import { createSecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadTlsMaterial,
  MAX_CONCURRENT_STREAMS,
  replaceTlsMaterial,
  secureServerOptions,
  TlsFileError,
} from '../../../src/http/transport/tls-options.js';
import { DEFAULT_SERVER_LIMITS } from '../../../src/http/transport/server-limits.js';
import { createTestCertificates, type TestCertificates } from '../../support/test-certificates.js';

let first: TestCertificates;
let second: TestCertificates;
beforeAll(() => {
  first = createTestCertificates();
  second = createTestCertificates();
});
afterAll(() => {
  first?.remove();
  second?.remove();
});

describe('loadTlsMaterial', () => {
  it('reads the certificate, the key and the optional CA file', () => {
    const material = loadTlsMaterial({ cert_file: first.certFile, key_file: first.keyFile, ca_file: first.caFile });
    expect(material.ca?.equals(first.ca)).toBe(true);
    expect(new X509Certificate(material.cert).subject).toBe('CN=localhost');
  });

  it('names the field and the file it cannot read', () => {
    expect(() => loadTlsMaterial({ cert_file: first.certFile, key_file: '/nonexistent/key.pem' })).toThrow(
      new TlsFileError('application.tls.key_file: cannot read /nonexistent/key.pem: no such file'),
    );
  });

  it('refuses a key of another certificate', () => {
    expect(() => loadTlsMaterial({ cert_file: first.certFile, key_file: second.keyFile })).toThrow(/^application\.tls: cannot use /);
  });
});

describe('secureServerOptions', () => {
  it('offers HTTP/1.1 beside HTTP/2 and at least 128 streams per connection', () => {
    const options = secureServerOptions(loadTlsMaterial({ cert_file: first.certFile, key_file: first.keyFile }), DEFAULT_SERVER_LIMITS);
    expect(options.allowHTTP1).toBe(true);
    expect(options.settings?.maxConcurrentStreams).toBe(MAX_CONCURRENT_STREAMS);
    expect(MAX_CONCURRENT_STREAMS).toBeGreaterThanOrEqual(128);
    expect(options.settings?.maxHeaderListSize).toBe(DEFAULT_SERVER_LIMITS.max_header_bytes);
  });
});

describe('replaceTlsMaterial', () => {
  it('serves the new certificate from the next handshake on', async () => {
    const server = createSecureServer(
      secureServerOptions(loadTlsMaterial({ cert_file: first.certFile, key_file: first.keyFile }), DEFAULT_SERVER_LIMITS),
    );
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const servedCertificate = () =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
          resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
          socket.destroy();
        });
        socket.once('error', reject);
      });
    try {
      expect(await servedCertificate()).toBe(
        new X509Certificate(loadTlsMaterial({ cert_file: first.certFile, key_file: first.keyFile }).cert).fingerprint256,
      );
      replaceTlsMaterial(server, loadTlsMaterial({ cert_file: second.certFile, key_file: second.keyFile }));
      expect(await servedCertificate()).toBe(
        new X509Certificate(loadTlsMaterial({ cert_file: second.certFile, key_file: second.keyFile }).cert).fingerprint256,
      );
    } finally {
      server.close();
    }
  });
});
