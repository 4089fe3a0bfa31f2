import { Writable } from 'node:stream';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { childLogger, createLogger, logResource } from '../../../../src/logging/logger.js';
import { createOtlpExporter, createOtlpLogExport, type OtlpLogExport } from '../../../../src/logging/otlp/otlp-export.js';

type Answer = (result: ExportResult) => void;

/** An exporter whose answers the test decides: `auto` answers at once, otherwise calls wait in `pending`. */
class ScriptedExporter implements LogRecordExporter {
  readonly batches: ReadableLogRecord[][] = [];
  readonly pending: Answer[] = [];
  mode: 'succeed' | 'fail' | 'hang' = 'succeed';
  shutdowns = 0;

  export(records: ReadableLogRecord[], answer: Answer): void {
    this.batches.push(records);
    if (this.mode === 'succeed') answer({ code: ExportResultCode.SUCCESS });
    else if (this.mode === 'fail') answer({ code: ExportResultCode.FAILED, error: new Error('collector said no') });
    else this.pending.push(answer);
  }

  records(): ReadableLogRecord[] {
    return this.batches.flat();
  }

  shutdown(): Promise<void> {
    this.shutdowns += 1;
    return Promise.resolve();
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

const nullStdout = () =>
  new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });

const exports: OtlpLogExport[] = [];
afterEach(async () => {
  await Promise.all(exports.splice(0).map((sink) => sink.shutdown(100)));
});

function pipeline(
  exporter: LogRecordExporter,
  tuning: Parameters<typeof createOtlpLogExport>[0] extends infer O ? Partial<O> : never = {},
) {
  const sink = createOtlpLogExport({
    exporter,
    resource: logResource('7.7.7', { K8S_NAMESPACE_NAME: 'ops', K8S_POD_NAME: 'pod-9' }),
    serviceVersion: '7.7.7',
    scheduledDelayMs: 5,
    ...tuning,
  });
  exports.push(sink);
  const logger = createLogger({ level: 'trace', serviceVersion: '7.7.7', env: {}, destination: nullStdout(), tee: sink });
  return { sink, logger };
}

describe('OTLP records mirror the stdout records', () => {
  it('keeps body, severity, attributes, event name and the resource identity', async () => {
    const exporter = new ScriptedExporter();
    const { logger } = pipeline(exporter);
    childLogger(logger, { request_id: 'req-1' }).warn(
      { event_name: 'api.request.validation.failed', error_message: 'bad', status: 400, nested: { a: [1, 'b'] } },
      'Request validation failed',
    );
    await vi.waitFor(() => expect(exporter.records()).toHaveLength(1));
    const [record] = exporter.records();
    expect(record?.body).toBe('Request validation failed');
    expect(record?.severityText).toBe('WARN');
    expect(record?.severityNumber).toBe(13);
    expect(record?.eventName).toBe('api.request.validation.failed');
    expect(record?.attributes).toEqual({
      request_id: 'req-1',
      'event.name': 'api.request.validation.failed',
      'exception.message': 'bad',
      status: 400,
      nested: { a: [1, 'b'] },
    });
    expect(record?.resource.attributes).toMatchObject({
      'service.name': 'aviso-server',
      'service.version': '7.7.7',
      'k8s.namespace.name': 'ops',
      'k8s.pod.name': 'pod-9',
    });
    expect(record?.hrTime[0]).toBeGreaterThan(1_700_000_000);
  });

  it('maps every pino level to its OpenTelemetry severity', async () => {
    const exporter = new ScriptedExporter();
    const { logger } = pipeline(exporter);
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) logger[level]({ event_name: level }, level);
    await vi.waitFor(() => expect(exporter.records()).toHaveLength(6));
    expect(exporter.records().map((r) => [r.body, r.severityNumber, r.severityText])).toEqual([
      ['trace', 1, 'TRACE'],
      ['debug', 5, 'DEBUG'],
      ['info', 9, 'INFO'],
      ['warn', 13, 'WARN'],
      ['error', 17, 'ERROR'],
      ['fatal', 21, 'FATAL'],
    ]);
  });

  it('exports redacted values only (the stdout redaction applies first)', async () => {
    const exporter = new ScriptedExporter();
    const { logger } = pipeline(exporter);
    logger.info({ event_name: 'x', jwt_secret: 'hunter2' }, 'see https://user:pw@host/path');
    await vi.waitFor(() => expect(exporter.records()).toHaveLength(1));
    expect(JSON.stringify(exporter.records()[0]?.attributes)).not.toContain('hunter2');
    expect(String(exporter.records()[0]?.body as string | undefined)).not.toContain('pw@');
  });

  it('leaves stdout unchanged: the same lines with or without the tee', async () => {
    const withTee: string[] = [];
    const without: string[] = [];
    const collect = (into: string[]) =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          into.push(...chunk.toString('utf8').split('\n').filter(Boolean));
          done();
        },
      });
    const sink = createOtlpLogExport({ exporter: new ScriptedExporter(), resource: logResource('1', {}), serviceVersion: '1' });
    exports.push(sink);
    const a = createLogger({ level: 'info', serviceVersion: '1', env: {}, destination: collect(withTee), tee: sink });
    const b = createLogger({ level: 'info', serviceVersion: '1', env: {}, destination: collect(without) });
    for (const logger of [a, b]) logger.info({ event_name: 'e', n: 1 }, 'same');
    await vi.waitFor(() => expect(withTee).toHaveLength(1));
    await vi.waitFor(() => expect(without).toHaveLength(1));
    const strip = (line: string) => ({ ...(JSON.parse(line) as object), timestamp: undefined });
    expect(strip(withTee[0] as string)).toEqual(strip(without[0] as string));
  });
});

describe('export health accounting', () => {
  it('counts a failed batch once and suppresses records during the back-off', async () => {
    const exporter = new ScriptedExporter();
    exporter.mode = 'fail';
    const { sink, logger } = pipeline(exporter, { failureBackoffMs: 60_000 });
    logger.info({ event_name: 'first' }, 'first');
    await vi.waitFor(() => expect(sink.stats().exportFailures).toBe(1));
    for (let i = 0; i < 5; i += 1) logger.info({ event_name: 'later' }, 'later');
    expect(sink.stats()).toEqual({ exportFailures: 1, suppressedRecords: 5 });
    expect(exporter.batches).toHaveLength(1);
  });

  it('resumes after the back-off and reports the transitions once each', async () => {
    let now = 1_000;
    const exporter = new ScriptedExporter();
    exporter.mode = 'fail';
    const { sink, logger } = pipeline(exporter, { failureBackoffMs: 500, now: () => now });
    const changes: unknown[] = [];
    sink.onHealthChange((change) => changes.push(change));
    logger.info('a');
    await vi.waitFor(() => expect(sink.stats().exportFailures).toBe(1));
    logger.info('suppressed');
    now += 501;
    exporter.mode = 'succeed';
    logger.info('b');
    await vi.waitFor(() => expect(exporter.records().map((r) => r.body)).toEqual(['a', 'b']));
    logger.info('c');
    await vi.waitFor(() => expect(exporter.records()).toHaveLength(3));
    expect(sink.stats()).toEqual({ exportFailures: 1, suppressedRecords: 1 });
    expect(changes).toEqual([{ healthy: false, reason: 'collector said no' }, { healthy: true }]);
  });

  it('never blocks logging while an export hangs: the queue fills, the rest is counted, the export times out', async () => {
    const exporter = new ScriptedExporter();
    exporter.mode = 'hang';
    const { sink, logger } = pipeline(exporter, { maxQueueSize: 4, maxExportBatchSize: 2, exportTimeoutMs: 200, failureBackoffMs: 60_000 });
    logger.info('1');
    logger.info('2'); // a full batch: exported at once, and that export hangs
    await vi.waitFor(() => expect(exporter.pending).toHaveLength(1));
    for (let i = 0; i < 10; i += 1) logger.info(`more ${i}`);
    // All 10 calls returned while the export is still pending: 4 queued, 6 suppressed.
    expect(exporter.pending).toHaveLength(1);
    expect(sink.stats()).toEqual({ exportFailures: 0, suppressedRecords: 6 });
    await vi.waitFor(() => expect(sink.stats().exportFailures).toBe(1));
  });

  it('bounds the queue in characters of line text too (D45): long lines are refused before the record count is reached', async () => {
    const exporter = new ScriptedExporter();
    exporter.mode = 'hang';
    const { sink, logger } = pipeline(exporter, { maxQueueCharacters: 20_000, maxExportBatchSize: 2, exportTimeoutMs: 60_000 });
    logger.info('1');
    logger.info('2'); // a full batch: exported at once, and that export hangs
    await vi.waitFor(() => expect(exporter.pending).toHaveLength(1));
    // Each line is about 5,200 characters with its resource and attributes: three fit in 20,000.
    for (let i = 0; i < 10; i += 1) logger.info({ event_name: 'x', filler: 'f'.repeat(5_000) }, `long ${i}`);
    expect(sink.stats()).toEqual({ exportFailures: 0, suppressedRecords: 7 });
    // The queue takes short lines again once an export has taken the long ones.
    exporter.pending[0]?.({ code: ExportResultCode.SUCCESS });
    await vi.waitFor(() => expect(exporter.batches.length).toBeGreaterThanOrEqual(2));
    exporter.mode = 'succeed';
    for (const answer of exporter.pending.splice(0)) answer({ code: ExportResultCode.SUCCESS });
    await vi.waitFor(() => expect(exporter.records().filter((r) => String(r.body as string).startsWith('long'))).toHaveLength(3));
    logger.info('short');
    await vi.waitFor(() => expect(exporter.records().map((r) => r.body)).toContain('short'));
    expect(sink.stats().suppressedRecords).toBe(7);
  });

  it('counts a late answer after the timeout only once', async () => {
    const exporter = new ScriptedExporter();
    exporter.mode = 'hang';
    const { sink, logger } = pipeline(exporter, { exportTimeoutMs: 50 });
    logger.info('x');
    await vi.waitFor(() => expect(sink.stats().exportFailures).toBe(1));
    exporter.pending[0]?.({ code: ExportResultCode.FAILED });
    expect(sink.stats().exportFailures).toBe(1);
  });

  it('shutdown flushes what is queued', async () => {
    const exporter = new ScriptedExporter();
    const { sink, logger } = pipeline(exporter, { scheduledDelayMs: 60_000 });
    logger.info('queued');
    expect(exporter.records()).toHaveLength(0);
    await sink.shutdown(1000);
    expect(exporter.records().map((r) => r.body)).toEqual(['queued']);
    expect(exporter.shutdowns).toBe(1);
    logger.info('after shutdown');
    expect(sink.stats().suppressedRecords).toBe(0);
  });

  it('shutdown is bounded when the collector never answers', async () => {
    const exporter = new ScriptedExporter();
    exporter.mode = 'hang';
    const { sink, logger } = pipeline(exporter, { exportTimeoutMs: 600_000 });
    logger.info('stuck');
    await vi.waitFor(() => expect(exporter.pending).toHaveLength(1));
    let done = false;
    const shutdown = sink.shutdown(50).then(() => (done = true));
    await shutdown;
    expect(done).toBe(true);
    expect(exporter.pending).toHaveLength(1); // the export never answered
  });
});

describe('createOtlpExporter', () => {
  it('builds the gRPC exporter for grpc and the OTLP/HTTP JSON exporter for http', async () => {
    const grpc = createOtlpExporter({ protocol: 'grpc', url: 'http://127.0.0.1:1' });
    const http = createOtlpExporter({ protocol: 'http', url: 'http://127.0.0.1:1/v1/logs' });
    const { OTLPLogExporter: Grpc } = await import('@opentelemetry/exporter-logs-otlp-grpc');
    const { OTLPLogExporter: Http } = await import('@opentelemetry/exporter-logs-otlp-http');
    expect(grpc).toBeInstanceOf(Grpc);
    expect(http).toBeInstanceOf(Http);
    await Promise.all([grpc.shutdown(), http.shutdown()]);
  });
});
