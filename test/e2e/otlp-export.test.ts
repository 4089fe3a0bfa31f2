import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson, request } from '../support/http.js';
import { eventually } from '../support/eventually.js';
import { findFreePort } from '../support/ports.js';
import { MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { runServerToExit, startServer, type LogLine, type RunningServer } from '../support/server-process.js';

/**
 * OTLP log export of the real server process (docs/design/rules/reference-0.13.md §7) against receivers started
 * here: an OTLP/HTTP one (node:http collecting the JSON bodies of POST /v1/logs), an OTLP/gRPC one
 * (@grpc/grpc-js serving LogsService/Export), a port that refuses connections and a receiver that
 * accepts a request and never answers. Timing is never measured: "does not slow requests" is
 * shown by requests completing while an export is still pending, with the counters rising.
 */

// ---------------------------------------------------------------------------------------------
// OTLP/JSON (the protobuf JSON mapping): just what these assertions need.

interface JsonAnyValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly doubleValue?: number;
  readonly boolValue?: boolean;
  readonly kvlistValue?: { readonly values?: readonly JsonKeyValue[] };
  readonly arrayValue?: { readonly values?: readonly JsonAnyValue[] };
}
interface JsonKeyValue {
  readonly key: string;
  readonly value: JsonAnyValue;
}
interface JsonLogRecord {
  readonly timeUnixNano?: string | number;
  readonly severityNumber?: number;
  readonly severityText?: string;
  readonly body?: JsonAnyValue;
  readonly attributes?: readonly JsonKeyValue[];
  readonly eventName?: string;
}
interface JsonExportRequest {
  readonly resourceLogs: readonly {
    readonly resource?: { readonly attributes?: readonly JsonKeyValue[] };
    readonly scopeLogs: readonly { readonly logRecords?: readonly JsonLogRecord[] }[];
  }[];
}

function plain(value: JsonAnyValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.kvlistValue) return attributes(value.kvlistValue.values);
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  return null;
}

function attributes(list: readonly JsonKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]));
}

interface Received {
  readonly resource: Record<string, unknown>;
  readonly body: unknown;
  readonly severityNumber: number | undefined;
  readonly severityText: string | undefined;
  readonly eventName: string | undefined;
  readonly attributes: Record<string, unknown>;
}

function flatten(request: JsonExportRequest): Received[] {
  return request.resourceLogs.flatMap((rl) =>
    rl.scopeLogs.flatMap((sl) =>
      (sl.logRecords ?? []).map((record) => ({
        resource: attributes(rl.resource?.attributes),
        body: plain(record.body),
        severityNumber: record.severityNumber,
        severityText: record.severityText,
        eventName: record.eventName,
        attributes: attributes(record.attributes),
      })),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// receivers

interface HttpReceiver {
  readonly port: number;
  readonly paths: string[];
  readonly contentTypes: string[];
  readonly records: Received[];
  /** Requests received and deliberately never answered (`hang` mode). */
  readonly pending: ServerResponse[];
  close(): Promise<void>;
}

async function startHttpReceiver(mode: 'answer' | 'hang'): Promise<HttpReceiver> {
  const paths: string[] = [];
  const contentTypes: string[] = [];
  const records: Received[] = [];
  const pending: ServerResponse[] = [];
  const server: Server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url}`);
      contentTypes.push(String(req.headers['content-type']));
      if (mode === 'hang') {
        pending.push(res);
        return;
      }
      records.push(...flatten(JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonExportRequest));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    paths,
    contentTypes,
    records,
    pending,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/**
 * LogsService/Export over gRPC. The request is kept as raw protobuf bytes: strings (bodies,
 * attribute keys and values, the resource) are stored in it as plain UTF-8, which is enough to
 * check they arrived; the empty response is a valid empty ExportLogsServiceResponse.
 */
async function startGrpcReceiver(): Promise<{ port: number; requests: Buffer[]; close(): Promise<void> }> {
  const requests: Buffer[] = [];
  const server = new grpc.Server();
  const identity = (buffer: Buffer) => buffer;
  server.addService(
    {
      Export: {
        path: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        requests.push(call.request);
        callback(null, Buffer.alloc(0));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { port, requests, close: () => new Promise<void>((done) => server.tryShutdown(() => done())) };
}

// ---------------------------------------------------------------------------------------------

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(otlp: Record<string, unknown>, metricsPort?: number): Promise<RunningServer> {
  const running = await startServer({
    config: serverConfig({
      logging: { level: 'info', otlp: { enabled: true, ...otlp } },
      ...(metricsPort ? { metrics: { enabled: true, host: '127.0.0.1', port: metricsPort } } : {}),
    }),
  });
  cleanups.push(() => running.stop());
  return running;
}

async function notifyMany(url: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) statuses.push((await postJson(`${url}/api/v1/notification`, MARS_EXAMPLE)).status);
  return statuses;
}

async function counters(metricsPort: number): Promise<{ failures: number; suppressed: number }> {
  const body = (await request(`http://127.0.0.1:${metricsPort}/metrics`)).text;
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1] ?? NaN);
  return { failures: read('aviso_otlp_export_failures_total'), suppressed: read('aviso_otlp_suppressed_log_records_total') };
}

/** How long the exporter and the log pipeline get, in the waits below. */
const EXPORT_WAIT = { timeoutMs: 25_000 };

function stdoutRecord(logs: readonly LogLine[], eventName: string): LogLine {
  const line = logs.find((l) => l.attributes?.['event.name'] === eventName);
  if (!line) throw new Error(`no ${eventName} on stdout`);
  return line;
}

describe('startup', () => {
  it('refuses logging.otlp.enabled without an endpoint, also when enabled through the environment', async () => {
    const viaFile = await runServerToExit({ config: serverConfig({ logging: { otlp: { enabled: true, protocol: 'http' } } }) });
    const viaEnv = await runServerToExit({ config: serverConfig(), env: { AVISOSERVER_LOGGING__OTLP__ENABLED: 'true' } });
    for (const result of [viaFile, viaEnv]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('aviso-server: configuration error: logging.otlp.enabled=true requires logging.otlp.endpoint\n');
    }
  });
});

describe('OTLP/HTTP export to a collector that answers', () => {
  it('exports every record with body, severity, attributes and the resource, beside unchanged stdout', async () => {
    const receiver = await startHttpReceiver('answer');
    cleanups.push(() => receiver.close());
    const metricsPort = await findFreePort();
    // Scheme-less: `http://` is assumed and `/v1/logs` appended.
    const running = await server({ endpoint: `127.0.0.1:${receiver.port}`, protocol: 'http' }, metricsPort);
    expect(await notifyMany(running.url, 3)).toEqual([200, 200, 200]);

    // stdout lines are written asynchronously: they may arrive just after the response.
    const processed = await eventually(
      'three api.notification.processed lines on stdout',
      () => {
        const lines = running.logs.filter((l) => l.attributes?.['event.name'] === 'api.notification.processed');
        return lines.length === 3 && lines;
      },
      EXPORT_WAIT,
    );
    const requestIds = processed.map((l) => l.attributes?.request_id);
    const exported = await eventually(
      'three exported api.notification.processed records',
      () => {
        const found = receiver.records.filter((r) => r.eventName === 'api.notification.processed');
        return found.length === 3 && found;
      },
      EXPORT_WAIT,
    );
    expect(receiver.paths.every((p) => p === 'POST /v1/logs')).toBe(true);
    expect(receiver.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
    expect(exported.map((r) => r.attributes.request_id)).toEqual(requestIds);
    for (const [index, record] of exported.entries()) {
      expect(record).toMatchObject({
        body: processed[index]?.body,
        severityNumber: 9,
        severityText: 'INFO',
        attributes: processed[index]?.attributes,
      });
      expect(record.resource).toMatchObject({ 'service.name': 'aviso-server', 'service.version': expect.any(String) });
      expect(record.resource['service.version']).toBe((processed[index]?.resource as Record<string, string>)['service.version']);
    }
    // The very first record is exported too: the sink exists before the logger writes anything.
    const first = stdoutRecord(running.logs, 'configuration.load.succeeded');
    await eventually('the first record', () => receiver.records.some((r) => r.eventName === 'configuration.load.succeeded'), EXPORT_WAIT);
    expect(running.logs[0]).toEqual(first);
    // stdout keeps its line format (docs/logging.md): nothing OTLP-specific was added to it.
    expect(Object.keys(processed[0] ?? {}).sort()).toEqual([
      'attributes',
      'body',
      'resource',
      'severityNumber',
      'severityText',
      'timestamp',
    ]);
    expect(await counters(metricsPort)).toEqual({ failures: 0, suppressed: 0 });
  });

  it('flushes records of the shutdown itself before exiting', async () => {
    const receiver = await startHttpReceiver('answer');
    cleanups.push(() => receiver.close());
    const running = await server({ endpoint: `http://127.0.0.1:${receiver.port}/`, protocol: 'http' });
    expect(await running.stop()).toBe(0);
    expect(receiver.records.map((r) => r.eventName)).toContain('startup.backend.shutdown.succeeded');
  });
});

describe('an unreachable collector never holds up requests', () => {
  it('connection refused: notifies answer, failures and suppressed records are counted, shutdown still exits', async () => {
    const metricsPort = await findFreePort();
    const running = await server({ endpoint: `127.0.0.1:${await findFreePort()}`, protocol: 'http' }, metricsPort);
    const statuses: number[] = [];
    const seen = await eventually(
      'both counters to rise',
      async () => {
        statuses.push(...(await notifyMany(running.url, 5)));
        const c = await counters(metricsPort);
        return c.failures >= 1 && c.suppressed >= 1 && c;
      },
      EXPORT_WAIT,
    );
    expect(seen.failures).toBeGreaterThanOrEqual(1);
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set([200]));
    await running.waitForLog('logging.otlp.export.failed', { from: 0, ...EXPORT_WAIT });
    expect(stdoutRecord(running.logs, 'logging.otlp.export.failed').severityText).toBe('WARN');
    expect(await running.stop()).toBe(0);
  }, 40_000);

  it('a collector that never answers: notifies complete while the export is pending; the export then counts as failed', async () => {
    const receiver = await startHttpReceiver('hang');
    cleanups.push(() => receiver.close());
    const metricsPort = await findFreePort();
    const running = await server({ endpoint: `127.0.0.1:${receiver.port}`, protocol: 'http' }, metricsPort);
    await eventually('an export request at the receiver', () => receiver.pending.length >= 1, EXPORT_WAIT);
    expect(await notifyMany(running.url, 20)).toEqual(Array.from({ length: 20 }, () => 200));
    // Those 20 completed while the first export was still waiting for its answer.
    expect(receiver.pending.every((res) => !res.writableEnded)).toBe(true);
    expect((await counters(metricsPort)).failures).toBe(0);
    await eventually('the pending export to count as failed', async () => (await counters(metricsPort)).failures >= 1, EXPORT_WAIT);
    expect(await running.stop()).toBe(0); // bounded flush: the collector still does not answer
  }, 40_000);
});

describe('OTLP/gRPC export', () => {
  it('exports to a LogsService receiver', async () => {
    const receiver = await startGrpcReceiver();
    cleanups.push(() => receiver.close());
    const running = await server({ endpoint: `127.0.0.1:${receiver.port}` }); // protocol defaults to grpc
    expect(await notifyMany(running.url, 1)).toEqual([200]);
    await running.waitForLog('api.notification.processed', { from: 0, ...EXPORT_WAIT });
    const requestId = String(stdoutRecord(running.logs, 'api.notification.processed').attributes?.request_id);
    const bytes = await eventually(
      'the notify record at the gRPC receiver',
      () => {
        const text = Buffer.concat(receiver.requests).toString('latin1');
        return text.includes(requestId) && text;
      },
      EXPORT_WAIT,
    );
    for (const text of ['aviso-server', 'service.name', 'api.notification.processed', 'Notification stored', 'request_id']) {
      expect(bytes).toContain(text);
    }
  });

  it('a gRPC collector that is down does not hold up requests', async () => {
    const metricsPort = await findFreePort();
    const running = await server({ endpoint: `127.0.0.1:${await findFreePort()}`, protocol: 'grpc' }, metricsPort);
    const statuses: number[] = [];
    await eventually(
      'the failure counter to rise',
      async () => {
        statuses.push(...(await notifyMany(running.url, 5)));
        return (await counters(metricsPort)).failures >= 1;
      },
      EXPORT_WAIT,
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(await running.stop()).toBe(0);
  }, 40_000);
});
