import { connect as connectTls } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { http2Client, https1Client } from '../support/tls-clients.js';

/** docs/security.md, "TLS and HTTP/2": the connection limits of `application` on the TLS port. */
let certificates: TestCertificates;
let server: RunningServer;
let origin: string;
beforeAll(async () => {
  certificates = createTestCertificates();
  server = await startServer({
    config: withTls(serverConfig(), certificates, { max_header_bytes: 2048, headers_timeout_ms: 500, request_timeout_ms: 500 }),
  });
  origin = `https://localhost:${server.port}`;
});
afterAll(async () => {
  await server?.stop();
  certificates?.remove();
});

describe('application.max_header_bytes on the TLS port', () => {
  it('answers an HTTP/1.1 head over the limit with the 431 error shape', async () => {
    const client = https1Client(origin, certificates.ca);
    try {
      const response = await client.request('/health', { headers: { 'x-padding': 'p'.repeat(4096) } });
      expect(response.status).toBe(431);
      expect(response.json).toMatchObject({ code: 'HEADERS_TOO_LARGE' });
    } finally {
      client.close();
    }
  });

  it('answers an HTTP/2 header list over the limit with the 431 error shape, on that stream only', async () => {
    const client = http2Client(origin, certificates.ca);
    try {
      const refused = await client.request('/api/v1/notification', { body: '{}', headers: { 'x-padding': 'p'.repeat(4096) } });
      expect(refused.status).toBe(431);
      expect(refused.json).toEqual({
        code: 'HEADERS_TOO_LARGE',
        error: 'headers_too_large',
        message: 'The request head exceeds the configured limit',
        request_id: refused.headers['x-request-id'],
      });
      expect((await client.request('/health', { headers: { 'x-padding': 'p'.repeat(1024) } })).status).toBe(200);
    } finally {
      client.close();
    }
  });
});

describe('application.headers_timeout_ms on the TLS port', () => {
  it('closes an HTTP/1.1 connection that sends no request', async () => {
    const socket = connectTls({ host: '127.0.0.1', port: server.port, ca: certificates.ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    socket.on('error', () => undefined);
    await new Promise<void>((resolveConnect) => socket.once('secureConnect', resolveConnect));
    expect(socket.alpnProtocol).toBe('http/1.1');
    // Closed by the server: the test's own timeout is the bound, not a measured duration.
    await new Promise<void>((resolveClose) => socket.once('close', () => resolveClose()));
    expect(socket.destroyed).toBe(true);
  });
});
