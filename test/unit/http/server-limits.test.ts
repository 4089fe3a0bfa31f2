import net from 'node:net';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { ConfigValidationError, validateConfig } from '../../../src/config/validate.js';
import type { AvisoMetrics } from '../../../src/metrics/aviso-metrics.js';
import { createPrometheusMetrics } from '../../../src/metrics/prometheus-metrics.js';
import {
  DEFAULT_SERVER_LIMITS,
  connectionsCheckingInterval,
  describeClientError,
  type ServerLimits,
} from '../../../src/http/transport/server-limits.js';
import type { EventSchemaSource } from '../../../src/schema/event-schema.js';
import { loadTlsMaterial } from '../../../src/http/transport/tls-options.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { UUID_V4 } from '../../support/http.js';
import { metricSum } from '../../support/metric-sum.js';
import { ManualClock } from '../../support/manual-clock.js';
import { TEST_SCHEMAS } from '../../support/schemas.js';
import { createTestCertificates, type TestCertificates } from '../../support/test-certificates.js';
import { DEFAULT_WATCH_ENDPOINT } from '../../support/test-app.js';
import { loadDoc, removeSandboxes } from '../config/config-fixture.js';

/**
 * The connection limits of `application` (docs/security.md): their defaults and validation, and
 * the answers of a real listening app to clients that break them — in the API's error shape, with
 * a request id, then the connection closed.
 */

afterAll(removeSandboxes);

describe('application connection limits in the config model', () => {
  it('defaults: 16 KiB head, 30 s head timeout, 60 s request timeout, 72 s keep-alive, 10,000 streams within 11,000 connections', () => {
    const { application } = loadDoc();
    expect(application.max_header_bytes).toBe(16384);
    expect(application.headers_timeout_ms).toBe(30000);
    expect(application.request_timeout_ms).toBe(60000);
    expect(application.keep_alive_timeout_ms).toBe(72000);
    expect(application.max_connections).toBe(11000);
    expect(application.max_streams).toBe(10000);
    expect(DEFAULT_SERVER_LIMITS.max_connections).toBe(application.max_connections);
    expect(DEFAULT_SERVER_LIMITS.max_streams).toBe(application.max_streams);
    // The defaults pass the startup rule that streams leave connections for everything else.
    expect(() => validateConfig(loadDoc())).not.toThrow();
  });

  it.each([
    [{ max_header_bytes: 512 }, 'application.max_header_bytes'],
    [{ headers_timeout_ms: 0 }, 'application.headers_timeout_ms'],
    [{ request_timeout_ms: -1 }, 'application.request_timeout_ms'],
    [{ keep_alive_timeout_ms: 1.5 }, 'application.keep_alive_timeout_ms'],
    [{ max_connections: 1 }, 'application.max_connections'],
    [{ max_streams: 0 }, 'application.max_streams'],
  ])('rejects %o at load time, naming the field', (patch, field) => {
    expect(() => loadDoc({ application: patch })).toThrow(field);
  });

  it('rejects a head timeout longer than the request timeout', () => {
    const config = loadDoc({ application: { headers_timeout_ms: 5000, request_timeout_ms: 4000 } });
    expect(() => validateConfig(config)).toThrow(ConfigValidationError);
    expect(() => validateConfig(config)).toThrow(
      'application.headers_timeout_ms: must not exceed application.request_timeout_ms (5000 > 4000)',
    );
  });

  it.each([
    [10000, 10000],
    [20000, 11000],
  ])('refuses max_streams %i with max_connections %i: streams could take every connection (D44)', (streams, connections) => {
    const config = loadDoc({ application: { max_streams: streams, max_connections: connections } });
    expect(() => validateConfig(config)).toThrow(
      `application.max_streams: must be less than application.max_connections (${streams} >= ${connections}), so that streams leave connections for /health, /ready and notify`,
    );
  });

  it('accepts a stream limit one below the connection limit', () => {
    expect(() => validateConfig(loadDoc({ application: { max_streams: 499, max_connections: 500 } }))).not.toThrow();
  });

  it('sweeps for expired heads at least twice per head timeout and at most every second', () => {
    const limits = (headers: number): ServerLimits => ({
      max_header_bytes: 16384,
      headers_timeout_ms: headers,
      request_timeout_ms: 60000,
      keep_alive_timeout_ms: 72000,
      max_connections: 11000,
      max_streams: 10000,
    });
    expect(connectionsCheckingInterval(limits(30000))).toBe(1000);
    expect(connectionsCheckingInterval(limits(600))).toBe(300);
    expect(connectionsCheckingInterval(limits(10))).toBe(50);
  });

  it('maps Node client errors to stable codes', () => {
    expect(describeClientError('ERR_HTTP_REQUEST_TIMEOUT')).toMatchObject({ status: 408, code: 'REQUEST_TIMEOUT' });
    expect(describeClientError('HPE_HEADER_OVERFLOW')).toMatchObject({ status: 431, code: 'HEADERS_TOO_LARGE' });
    expect(describeClientError('HPE_INVALID_METHOD')).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    expect(describeClientError(undefined)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
  });
});

/** Sends `chunks` (strings written `gapMs` apart; the last one repeats until the server closes), returns all it read. */
function rawExchange(port: number, chunks: readonly string[], gapMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let index = 0;
    let timer: NodeJS.Timeout | undefined;
    const writeNext = (): void => {
      if (socket.destroyed || !socket.writable) return;
      socket.write(chunks[Math.min(index, chunks.length - 1)] as string);
      index++;
      if (gapMs > 0) timer = setTimeout(writeNext, gapMs);
    };
    socket.on('connect', writeNext);
    socket.on('data', (data: Buffer) => (received += data.toString('utf8')));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may reset a socket we are still writing to once it has answered.
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

function parseAnswer(raw: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  return { status, headers: head.toLowerCase(), body: JSON.parse(body) as Record<string, unknown> };
}

describe('a listening app enforcing the limits', () => {
  let app: FastifyInstance;
  let port: number;

  let metrics: AvisoMetrics;

  beforeAll(async () => {
    const clock = new ManualClock();
    metrics = createPrometheusMetrics({ version: '1', backendKind: 'in_memory', eventTypes: [] });
    app = await buildApp({
      metrics,
      registry: new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, true),
      backend: new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 100, clock }),
      clock,
      logger: pino({ level: 'silent' }),
      maxBodyBytes: 4096,
      baseUrl: 'http://localhost:8000',
      watchEndpoint: DEFAULT_WATCH_ENDPOINT,
      limits: {
        max_header_bytes: 2048,
        headers_timeout_ms: 300,
        request_timeout_ms: 600,
        keep_alive_timeout_ms: 5000,
        max_connections: 4,
        max_streams: 3,
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => app.close());

  function expectErrorShape(raw: string, status: number, code: string): void {
    const answer = parseAnswer(raw);
    expect(answer.status, raw).toBe(status);
    expect(answer.body.code).toBe(code);
    expect(answer.body.request_id).toMatch(UUID_V4);
    expect(answer.headers).toContain(`x-request-id: ${String(answer.body.request_id)}`);
    expect(answer.headers).toContain('content-type: application/json');
  }

  it('a head sent a byte at a time is answered 408 REQUEST_TIMEOUT and closed', async () => {
    const head = 'POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nX-Slow: ';
    const raw = await rawExchange(port, [...head.split(''), 'a'], 20);
    expectErrorShape(raw, 408, 'REQUEST_TIMEOUT');
  });

  it('a body that never completes is answered 408 REQUEST_TIMEOUT', async () => {
    const raw = await rawExchange(
      port,
      ['POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{', ' '],
      50,
    );
    expectErrorShape(raw, 408, 'REQUEST_TIMEOUT');
  });

  it('a head over max_header_bytes is answered 431 HEADERS_TOO_LARGE', async () => {
    const raw = await rawExchange(port, [`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4000)}\r\n\r\n`]);
    expectErrorShape(raw, 431, 'HEADERS_TOO_LARGE');
  });

  it('a request that is not HTTP is answered 400 BAD_REQUEST', async () => {
    const raw = await rawExchange(port, ['NOT HTTP AT ALL\r\n\r\n']);
    expectErrorShape(raw, 400, 'BAD_REQUEST');
  });

  it('refuses connections beyond max_connections, counts them, and serves again once they close', async () => {
    const refusedBefore = metricSum((await metrics.render()).body, 'aviso_http_connections_refused_total');
    const held = await Promise.all(
      Array.from({ length: 4 }, () => {
        return new Promise<net.Socket>((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
        });
      }),
    );
    // Wait until the server has accepted all four, so the fifth is the one over the cap.
    await expect.poll(async () => new Promise((resolve) => app.server.getConnections((_e, n) => resolve(n)))).toBe(4);
    const refused = await rawExchange(port, ['GET /health HTTP/1.1\r\nHost: x\r\n\r\n']);
    expect(refused).toBe('');
    expect(metricSum((await metrics.render()).body, 'aviso_http_connections_refused_total')).toBe(refusedBefore + 1);
    for (const socket of held) socket.destroy();
    await expect.poll(async () => new Promise((resolve) => app.server.getConnections((_e, n) => resolve(n)))).toBe(0);
    const response = await fetch(`http://127.0.0.1:${port}/health`);
    expect(response.status).toBe(200);
  });
});

describe('the connection cap on both transports (D44)', () => {
  let certificates: TestCertificates;
  beforeAll(() => {
    certificates = createTestCertificates();
  });
  afterAll(() => certificates.remove());

  it.each(['plain HTTP/1.1', 'HTTPS with HTTP/2'])(
    'closes a connection over max_connections at once, before any byte, counts it, and logs it once (%s)',
    async (transport) => {
      const clock = new ManualClock();
      const metrics = createPrometheusMetrics({ version: '1', backendKind: 'in_memory', eventTypes: [] });
      const lines: Record<string, unknown>[] = [];
      const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
      const tls =
        transport === 'plain HTTP/1.1'
          ? {}
          : { tls: loadTlsMaterial({ cert_file: certificates.certFile, key_file: certificates.keyFile }) };
      const app = await buildApp({
        registry: new SchemaRegistry(TEST_SCHEMAS as unknown as Record<string, EventSchemaSource>, true),
        backend: new MemoryBackend({ maxHistoryPerTopic: 10, maxTopics: 100, clock }),
        clock,
        logger,
        metrics,
        maxBodyBytes: 4096,
        baseUrl: 'http://localhost:8000',
        watchEndpoint: DEFAULT_WATCH_ENDPOINT,
        limits: { ...loadDoc().application, max_connections: 2, max_streams: 1 },
        ...tls,
      });
      const sockets: net.Socket[] = [];
      try {
        await app.listen({ host: '127.0.0.1', port: 0 });
        const port = (app.server.address() as net.AddressInfo).port;
        // Node's own bound is not used: in a worker it passes refused connections round the workers.
        expect(app.server.maxConnections ?? undefined).toBeUndefined();
        for (let index = 0; index < 2; index++) {
          sockets.push(
            await new Promise<net.Socket>((resolve) => {
              const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
            }),
          );
        }
        await expect.poll(async () => new Promise((resolve) => app.server.getConnections((_e, n) => resolve(n)))).toBe(2);
        // Over TLS too the refused connection gets nothing, not even a ServerHello.
        const answers = await Promise.all([1, 2, 3].map(() => rawExchange(port, ['\x16\x03\x01'])));
        expect(answers).toEqual(['', '', '']);
        expect(metricSum((await metrics.render()).body, 'aviso_http_connections_refused_total')).toBe(3);
        const refusals = lines.filter((line) => line.event_name === 'http.connection.refused');
        expect(refusals).toEqual([expect.objectContaining({ level: 40, max_connections: 2, refused: 1 })]);
      } finally {
        for (const socket of sockets) socket.destroy();
        await app.close();
      }
    },
  );
});
