import { connect as connectTls } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { HalfOpenHandshakes, captureClientHello } from './support/half-open-tls.js';
import { rssBytes } from './support/raw-sse.js';
import { expectStillServing } from './support/still-serving.js';

/**
 * Half-open TLS connections against the real server process (docs/security.md, "TLS and
 * HTTP/2"): clients that send a ClientHello and never finish the handshake. Each one costs the
 * server its TLS state (about 55 KB of native memory, measured here as RSS growth) until
 * `headers_timeout_ms`, the handshake timeout, closes it; `application.max_connections` bounds how
 * many can be pending at once. The outside probe held 17,000 of them; 2,000 keep the shape on a
 * 2-core machine (and under the 20,000 file descriptors of each process).
 */

const HANDSHAKES = 2_000;
/** Long enough to begin every handshake and measure before the first one times out. */
const HANDSHAKE_TIMEOUT_MS = 15_000;
const BOUNDED_CONNECTIONS = 500;
/** Generous bounds around the ~55 KB measured (docs/security.md): a pending handshake is tens of KB, not a few, nor megabytes. */
const MIN_BYTES_PER_HANDSHAKE = 24 * 1024;
const MAX_BYTES_PER_HANDSHAKE = 160 * 1024;

let certificates: TestCertificates;
let clientHello: Buffer;
beforeAll(async () => {
  certificates = createTestCertificates();
  clientHello = await captureClientHello();
});
afterAll(() => certificates?.remove());

function tlsServer(application: Record<string, unknown>): Promise<RunningServer> {
  const limits = { headers_timeout_ms: HANDSHAKE_TIMEOUT_MS, request_timeout_ms: HANDSHAKE_TIMEOUT_MS, ...application };
  return startServer({ config: withTls(serverConfig({ logging: { level: 'debug' } }), certificates, limits) });
}

/** Begins and drops a few handshakes, so code and pools first used by a handshake are not counted per connection. */
async function warmUp(server: RunningServer): Promise<void> {
  const warm = new HalfOpenHandshakes(server.port, clientHello);
  await warm.begin(100);
  warm.destroyAll();
}

/** Whether a fresh client completes a TLS handshake (false: the server closed the socket first). */
function handshakeCompletes(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTls({ host: '127.0.0.1', port, servername: 'localhost', ca: certificates.ca, ALPNProtocols: ['h2'] });
    socket.once('secureConnect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

describe('half-open TLS handshakes under the default max_connections', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await tlsServer({});
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('answers 2,000 of them, keeps tens of KB of RSS for each, serves fresh clients meanwhile, and closes each at headers_timeout_ms', async () => {
    await warmUp(server);
    const before = await rssBytes(server.process.pid as number);
    const attack = new HalfOpenHandshakes(server.port, clientHello);
    try {
      await attack.begin(HANDSHAKES);
      expect(attack.answered).toBe(HANDSHAKES);
      expect(attack.open).toBe(HANDSHAKES);
      const perHandshake = ((await rssBytes(server.process.pid as number)) - before) / HANDSHAKES;
      expect(perHandshake, `${Math.round(perHandshake)} bytes of RSS per pending handshake`).toBeGreaterThan(MIN_BYTES_PER_HANDSHAKE);
      expect(perHandshake, `${Math.round(perHandshake)} bytes of RSS per pending handshake`).toBeLessThan(MAX_BYTES_PER_HANDSHAKE);

      await expectStillServing(server, certificates.ca);

      // The server, not the client, ends every one of them: the handshake timeout.
      await eventually('every half-open handshake closed by the server', () => attack.open === 0, { timeoutMs: 4 * HANDSHAKE_TIMEOUT_MS });
      const timedOut = server.logs.filter(
        (line) =>
          line.attributes?.['event.name'] === 'http.tls.handshake.failed' && line.attributes.error_code === 'ERR_TLS_HANDSHAKE_TIMEOUT',
      );
      expect(timedOut.length).toBeGreaterThanOrEqual(HANDSHAKES);
      // Nothing was "answered" on them: a TLS failure is no HTTP client error.
      const answeredAsHttp = server.logs.filter(
        (line) => line.attributes?.['event.name'] === 'http.client.error' && String(line.attributes.error_code).startsWith('ERR_TLS_'),
      );
      expect(answeredAsHttp).toEqual([]);
    } finally {
      attack.destroyAll();
    }
    await expectStillServing(server, certificates.ca);
  }, 180_000);
});

describe(`half-open TLS handshakes with max_connections: ${BOUNDED_CONNECTIONS}`, () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await tlsServer({ max_connections: BOUNDED_CONNECTIONS, max_streams: BOUNDED_CONNECTIONS - 100 });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('answers 500 of 2,000, closes the other 1,500 without a byte, refuses fresh clients while they are held, and serves once they end', async () => {
    await warmUp(server);
    await eventually('the warm-up connections released', () => handshakeCompletes(server.port));
    const before = await rssBytes(server.process.pid as number);
    const attack = new HalfOpenHandshakes(server.port, clientHello);
    try {
      await attack.begin(HANDSHAKES);
      expect(attack.answered).toBe(BOUNDED_CONNECTIONS);
      expect(attack.refused).toBe(HANDSHAKES - BOUNDED_CONNECTIONS);
      // The limit bounds the memory: only the accepted handshakes hold TLS state.
      const growth = (await rssBytes(server.process.pid as number)) - before;
      expect(growth).toBeLessThan(BOUNDED_CONNECTIONS * MAX_BYTES_PER_HANDSHAKE);
      // The price of the bound: while the attack holds every slot, a legitimate client is refused too.
      expect(await handshakeCompletes(server.port)).toBe(false);
    } finally {
      attack.destroyAll();
    }
    await eventually('a fresh client served again', () => handshakeCompletes(server.port));
    await expectStillServing(server, certificates.ca);
  }, 180_000);
});
