import type { AnyValueMap, Logger as OtelLogger } from '@opentelemetry/api-logs';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as HttpJsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from '@opentelemetry/sdk-logs';
import { ExportGate, type OtlpExportStats, type OtlpHealthListener } from './export-gate.js';
import type { OtlpTarget } from './otlp-target.js';

/**
 * The OTLP sink of docs/design/rules/reference-0.13.md §7: a pino stream (one JSON line per `write`) that turns each
 * stdout record into an OpenTelemetry log record and hands it to the SDK's batch processor. The
 * stdout line is the source, so both sinks carry the same body, severity, attributes (redacted
 * already) and resource. Nothing here waits on the network: `write` is a parse and an array push,
 * export runs on the processor's timer.
 */
export interface OtlpLogExport {
  write(line: string): void;
  stats(): OtlpExportStats;
  onHealthChange(listener: OtlpHealthListener): void;
  /** Flushes what is queued, then closes the exporter; resolves after at most `graceMs` whatever the collector does. */
  shutdown(graceMs: number): Promise<void>;
}

/** Tuning of the pipeline; the defaults are the production values. */
export interface OtlpExportTuning {
  readonly maxQueueSize?: number;
  /** Characters of line text the queue may hold (D45). */
  readonly maxQueueCharacters?: number;
  readonly maxExportBatchSize?: number;
  readonly scheduledDelayMs?: number;
  /** Per batch, for the transport and for the gate's own bound alike. */
  readonly exportTimeoutMs?: number;
  readonly failureBackoffMs?: number;
  readonly now?: () => number;
}

const OTLP_DEFAULTS = {
  maxQueueSize: 2048,
  maxQueueCharacters: 8 * 1024 * 1024,
  maxExportBatchSize: 512,
  scheduledDelayMs: 1000,
  exportTimeoutMs: 5000,
  failureBackoffMs: 5000,
} as const;

export interface OtlpExportOptions extends OtlpExportTuning {
  readonly exporter: LogRecordExporter;
  /** Same identity as the stdout `resource` block (`service.name`, `service.version`, `k8s.*`). */
  readonly resource: Readonly<Record<string, string>>;
  readonly serviceVersion: string;
}

/** The SDK exporter for a target: OTLP/gRPC, or OTLP/HTTP with JSON bodies. */
export function createOtlpExporter(target: OtlpTarget, timeoutMillis: number = OTLP_DEFAULTS.exportTimeoutMs): LogRecordExporter {
  return target.protocol === 'grpc'
    ? new GrpcLogExporter({ url: target.url, timeoutMillis })
    : new HttpJsonLogExporter({ url: target.url, timeoutMillis });
}

export function createOtlpLogExport(options: OtlpExportOptions): OtlpLogExport {
  const tuning = { ...OTLP_DEFAULTS, ...withoutUndefined(options) };
  const gate = new ExportGate({
    maxQueueSize: tuning.maxQueueSize,
    maxQueueCharacters: tuning.maxQueueCharacters,
    failureBackoffMs: tuning.failureBackoffMs,
    exportTimeoutMs: tuning.exportTimeoutMs,
    ...(options.now ? { now: options.now } : {}),
  });
  const processor = new BatchLogRecordProcessor({
    exporter: gate.wrap(options.exporter),
    maxQueueSize: tuning.maxQueueSize,
    maxExportBatchSize: Math.min(tuning.maxExportBatchSize, tuning.maxQueueSize),
    scheduledDelayMillis: tuning.scheduledDelayMs,
    // Longer than the gate's bound, so the gate (which counts) always answers first.
    exportTimeoutMillis: tuning.exportTimeoutMs + 1000,
  });
  // OTEL_RESOURCE_ATTRIBUTES is merged in (collector routing keys); our own identity wins on a clash.
  const resource = detectResources({ detectors: [envDetector] }).merge(resourceFromAttributes({ ...options.resource }));
  const provider = new LoggerProvider({ resource, processors: [processor] });
  const logger = provider.getLogger('aviso-server', options.serviceVersion);
  let closed = false;
  let shutdown: Promise<void> | undefined;

  return {
    write(line) {
      if (closed || !gate.admit(line.length)) return;
      emit(logger, line);
    },
    stats: () => gate.stats(),
    onHealthChange: (listener) => gate.onHealthChange(listener),
    shutdown(graceMs) {
      closed = true;
      shutdown ??= new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        timer.unref();
        provider.shutdown().then(
          () => (clearTimeout(timer), resolve()),
          () => (clearTimeout(timer), resolve()),
        );
      });
      return shutdown;
    },
  };
}

interface StdoutRecord {
  readonly body?: unknown;
  readonly severityText?: unknown;
  readonly severityNumber?: unknown;
  readonly attributes?: unknown;
}

/** One pino line → one OTel record. pino writes valid JSON; anything else is still exported, as its text. */
function emit(logger: OtelLogger, line: string): void {
  const timestamp = Date.now(); // millisecond precision; the stdout line's timestamp has whole seconds
  let record: StdoutRecord;
  try {
    record = JSON.parse(line) as StdoutRecord;
  } catch {
    logger.emit({ timestamp, body: line.trimEnd() });
    return;
  }
  const attributes = isObject(record.attributes) ? (record.attributes as AnyValueMap) : {};
  const eventName = attributes['event.name'];
  logger.emit({
    timestamp,
    observedTimestamp: timestamp,
    ...(typeof record.severityNumber === 'number' ? { severityNumber: record.severityNumber } : {}),
    ...(typeof record.severityText === 'string' ? { severityText: record.severityText } : {}),
    body: typeof record.body === 'string' ? record.body : '',
    attributes,
    ...(typeof eventName === 'string' ? { eventName } : {}),
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutUndefined(tuning: OtlpExportTuning): Partial<typeof OTLP_DEFAULTS> {
  const out: Record<string, number> = {};
  for (const key of Object.keys(OTLP_DEFAULTS) as (keyof typeof OTLP_DEFAULTS)[]) {
    const value = tuning[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
