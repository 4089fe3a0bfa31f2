import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createBoundedStdout } from '../../../src/logging/bounded-stdout.js';
import { configuredLevel } from '../../../src/logging/log-level.js';
import { childLogger, createLogger, logOutputStats } from '../../../src/logging/logger.js';

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

describe('rate-limited events (D45)', () => {
  it('writes at most N lines a second of a limited event, counts the rest and says how many in one line', async () => {
    const { lines, destination } = capture();
    const logger = createLogger({
      level: 'info',
      serviceVersion: '1',
      env: {},
      destination,
      rateLimited: { events: new Set(['api.request.validation.failed']), linesPerSecond: 3 },
    });
    const request = childLogger(logger, { request_id: 'r-1' });
    for (let i = 0; i < 50; i++) request.warn({ event_name: 'api.request.validation.failed', n: i }, 'Request validation failed');
    for (let i = 0; i < 5; i++) request.info({ event_name: 'api.notification.processed', n: i }, 'Notification stored');
    await new Promise((resolve) => setImmediate(resolve));
    const named = (name: string) => lines.filter((line) => (line.attributes as Record<string, unknown>)['event.name'] === name);
    expect(named('api.request.validation.failed').map((line) => (line.attributes as Record<string, unknown>).n)).toEqual([0, 1, 2]);
    expect(named('api.notification.processed')).toHaveLength(5);
    expect(logOutputStats(logger)).toEqual({ droppedLines: 0, rateLimitedLines: 47 });
    await vi.waitFor(() => expect(named('logging.lines.rate_limited')).toHaveLength(1), { timeout: 3_000 });
    expect(named('logging.lines.rate_limited')[0]).toMatchObject({
      severityText: 'WARN',
      attributes: { limited_event: 'api.request.validation.failed', lines: 47, interval_ms: 1000 },
    });
  });

  it('limits nothing when no events are named', async () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', serviceVersion: '1', env: {}, destination });
    for (let i = 0; i < 50; i++) logger.warn({ event_name: 'api.request.validation.failed' }, 'x');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(50);
    expect(logOutputStats(logger)).toEqual({ droppedLines: 0, rateLimitedLines: 0 });
  });
});

describe('bounded stdout (D45)', () => {
  /** A file as stdout; the writer closes it when it ends. */
  async function withStdoutFile(
    run: (fd: number) => { end(): void; once(event: 'close', listener: () => void): unknown },
  ): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'aviso-stdout-'));
    try {
      const stream = run(openSync(join(dir, 'out.log'), 'w'));
      await new Promise<void>((resolve) => {
        stream.once('close', resolve);
        stream.end();
      });
      return readFileSync(join(dir, 'out.log'), 'utf8');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('drops whole lines once the bound is held for the reader, and counts them', async () => {
    const line = `${'x'.repeat(99)}\n`;
    let dropped = 0;
    const written = await withStdoutFile((fd) => {
      const { stream, droppedLines } = createBoundedStdout(1_000, fd);
      // The first write goes to the file in the background; until it is done everything else waits in memory.
      for (let i = 0; i < 100; i++) stream.write(line);
      dropped = droppedLines();
      return stream;
    });
    expect(dropped).toBe(90);
    expect(written).toBe(line.repeat(10));
  });

  it('counts a dropped write of several forwarded lines as that many lines', async () => {
    let dropped = 0;
    const written = await withStdoutFile((fd) => {
      const { stream, droppedLines } = createBoundedStdout(100, fd);
      stream.write('first\n');
      stream.write(`${'a'.repeat(60)}\n${'b'.repeat(60)}\n${'c'.repeat(10)}`);
      dropped = droppedLines();
      return stream;
    });
    expect(dropped).toBe(3);
    expect(written).toBe('first\n');
  });
});
