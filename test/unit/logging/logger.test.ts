import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { configuredLevel } from '../../../src/logging/log-level.js';
import { childLogger, createLogger } from '../../../src/logging/logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination };
}

describe('createLogger', () => {
  it('writes OpenTelemetry-shaped lines with renamed attributes', async () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', serviceVersion: '9.9.9', env: { K8S_POD_NAME: 'pod-1' }, destination });
    logger.warn({ event_name: 'api.request.validation.failed', error_message: 'bad' }, 'Request validation failed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines[0]).toMatchObject({
      severityText: 'WARN',
      severityNumber: 13,
      body: 'Request validation failed',
      resource: { 'service.name': 'aviso-server', 'service.version': '9.9.9', 'k8s.pod.name': 'pod-1' },
      attributes: { 'event.name': 'api.request.validation.failed', 'exception.message': 'bad' },
    });
    expect(lines[0]?.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it('puts child context under attributes, never at the top level', async () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', serviceVersion: '1', env: {}, destination });
    childLogger(childLogger(logger, { request_id: 'r-1' }), { topic: 'mars.*' }).info({ event_name: 'x' }, 'y');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines[0]).not.toHaveProperty('request_id');
    expect(lines[0]?.attributes).toEqual({ request_id: 'r-1', topic: 'mars.*', 'event.name': 'x' });
  });

  it('adds the process attributes (a worker id, D36) to every line, its children and their context included', async () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', serviceVersion: '1', env: {}, destination, attributes: { worker_id: 3 } });
    logger.info({ event_name: 'a' }, 'one');
    childLogger(logger, { request_id: 'r-1' }).info({ event_name: 'b' }, 'two');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((line) => line.attributes)).toEqual([
      { worker_id: 3, 'event.name': 'a' },
      { worker_id: 3, request_id: 'r-1', 'event.name': 'b' },
    ]);
  });

  it('treats an unknown level as info', () => {
    expect(configuredLevel('LOUD')).toBe('info');
    expect(configuredLevel('Debug')).toBe('debug');
  });
});
