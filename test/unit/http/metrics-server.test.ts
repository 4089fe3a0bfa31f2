import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logging/logger.js';
import type { AvisoMetrics } from '../../../src/metrics/aviso-metrics.js';
import { startMetricsServer, type MetricsServer } from '../../../src/http/transport/metrics-server.js';
import { createDisabledMetrics, createPrometheusMetrics } from '../../../src/metrics/prometheus-metrics.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type LogLine = { severityText: string; attributes: Record<string, unknown> };

function capture() {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'debug', serviceVersion: 'test', env: {}, destination }) };
}

const flushLogs = () => new Promise((resolve) => setImmediate(resolve));

describe('startMetricsServer', () => {
  let server: MetricsServer | undefined;
  let lines: LogLine[] = [];

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(metrics: AvisoMetrics = createPrometheusMetrics({ version: '1.2.3', backendKind: 'in_memory', eventTypes: [] })) {
    const captured = capture();
    lines = captured.lines;
    server = await startMetricsServer({ host: '127.0.0.1', port: 0, metrics, logger: captured.logger });
    return `http://127.0.0.1:${server.port}`;
  }

  it('serves the exposition on GET /metrics with the Prometheus content type', async () => {
    const base = await start();
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4(; charset=utf-8)?$/);
    const body = await response.text();
    expect(body).toContain('# TYPE aviso_build_info gauge\naviso_build_info{version="1.2.3"} 1\n');
    expect(body).toContain('process_cpu_seconds_total');
  });

  it('answers 404 for any other path or method', async () => {
    const base = await start();
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/metrics/'],
      ['GET', '/health'],
      ['POST', '/metrics'],
      ['HEAD', '/metrics'],
    ] as const) {
      const response = await fetch(`${base}${path}`, { method });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
      expect(await response.text()).toBe('');
      expect(response.headers.get('x-request-id')).toMatch(UUID);
    }
  });

  it('gives every response a fresh request id and ignores an incoming one', async () => {
    const base = await start();
    const incoming = '11111111-1111-4111-8111-111111111111';
    const ids = [];
    for (const path of ['/metrics', '/metrics', '/nope']) {
      const response = await fetch(`${base}${path}`, { headers: { 'x-request-id': incoming } });
      await response.arrayBuffer();
      ids.push(response.headers.get('x-request-id'));
    }
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(3);
    expect(ids).not.toContain(incoming);
  });

  it('answers 500 with an empty body when rendering fails', async () => {
    const failing: AvisoMetrics = { ...createDisabledMetrics(), render: () => Promise.reject(new Error('collector broke')) };
    const base = await start(failing);
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe('');
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    await flushLogs();
    expect(lines.find((line) => line.attributes['event.name'] === 'metrics.render.failed')).toMatchObject({
      severityText: 'ERROR',
      attributes: { error: 'collector broke', request_id: response.headers.get('x-request-id') },
    });
  });

  it('logs the binding with host and the bound port, and nothing per request at info', async () => {
    const base = await start();
    await (await fetch(`${base}/metrics`)).text();
    await (await fetch(`${base}/elsewhere`)).text();
    await flushLogs();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      severityText: 'INFO',
      attributes: { 'event.name': 'startup.metrics.server.binding', host: '127.0.0.1', port: server?.port },
    });
    expect(server?.port).toBeGreaterThan(0);
  });

  it('releases the port when closed', async () => {
    const base = await start();
    await server?.close();
    server = undefined;
    await expect(fetch(`${base}/metrics`)).rejects.toThrow();
  });
});
