import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { formatUtcSeconds } from '../time/time-format.js';
import { createBoundedStdout } from './bounded-stdout.js';
import { EventRateLimit, RATE_LIMIT_WINDOW_MS } from './event-rate-limit.js';
import { redactField, redactText } from './redact.js';

/**
 * pino configured for OpenTelemetry-shaped JSON lines (docs/design/rules/operations.md §3.4.1): `timestamp`,
 * `severityText`/`severityNumber`, `body`, `resource`, and every event field under `attributes`.
 */

const SEVERITY: Readonly<Record<string, number>> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 };

/** Attribute renames: our field names to the OpenTelemetry semantic names the lines carry. */
const RENAMES: Readonly<Record<string, string>> = {
  event_name: 'event.name',
  error_type: 'error.type',
  error_message: 'exception.message',
};

export interface LoggerOptions {
  /** An effective level (see `log-level.ts`). */
  readonly level: LevelWithSilent;
  readonly serviceVersion: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly destination?: DestinationStream;
  /**
   * A second sink receiving every line too (the OTLP export, docs/design/rules/reference-0.13.md §7). stdout (or
   * `destination`) is written first and exactly as without it.
   */
  readonly tee?: DestinationStream;
  /**
   * Attributes every line carries, under `attributes` like any event field: `worker_id` in a
   * server of several processes (D36, docs/logging.md).
   */
  readonly attributes?: Readonly<Record<string, unknown>>;
  /**
   * `logging.max_buffered_bytes` (D45): what stdout may hold for a reader slower than the server;
   * a line past it is dropped whole and counted. Unbounded unless given; not for `destination`.
   */
  readonly maxBufferedBytes?: number;
  /**
   * Events written at most `linesPerSecond` times a second each, the others counted and reported
   * once a second (D45, `logging.client_error_lines_per_second`).
   */
  readonly rateLimited?: { readonly events: ReadonlySet<string>; readonly linesPerSecond: number };
}

/** What a logger did not write (`aviso_log_lines_*_total`, docs/metrics.md): totals since the process started. */
export interface LogOutputStats {
  /** Lines stdout dropped because `logging.max_buffered_bytes` were waiting for its reader. */
  readonly droppedLines: number;
  /** Lines the rate limit of client-error events held back. */
  readonly rateLimitedLines: number;
}

/** The identity block of every line (service name and version, the Kubernetes namespace and pod), also the OTLP resource. */
export function logResource(
  serviceVersion: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const resource: Record<string, string> = {
    'service.name': 'aviso-server',
    'service.version': serviceVersion,
  };
  const namespace = env.K8S_NAMESPACE_NAME;
  const pod = env.K8S_POD_NAME ?? env.HOSTNAME;
  if (namespace) resource['k8s.namespace.name'] = namespace;
  if (pod) resource['k8s.pod.name'] = pod;
  return resource;
}

/** The stdout writer of each logger `createLogger` made without a destination of its own. */
const STDOUT_WRITERS = new WeakMap<Logger, ReturnType<typeof pino.destination>>();
/** What each logger `createLogger` made did not write. */
const OUTPUT_STATS = new WeakMap<Logger, () => LogOutputStats>();

export function createLogger(options: LoggerOptions): Logger {
  const resource = logResource(options.serviceVersion, options.env ?? process.env);
  const processAttributes = { ...options.attributes };

  // Asynchronous writes (the libuv thread pool), as pino does by default, kept so `endLogger` can wait for them.
  const bounded = options.destination ? undefined : createBoundedStdout(options.maxBufferedBytes);
  const stdout = bounded?.stream;
  const primary = options.destination ?? stdout;
  const limited = options.rateLimited?.events ?? new Set<string>();
  const rateLimit =
    options.rateLimited &&
    new EventRateLimit({
      linesPerSecond: options.rateLimited.linesPerSecond,
      report: (eventName, lines) => {
        try {
          logger.warn(
            { event_name: 'logging.lines.rate_limited', limited_event: eventName, lines, interval_ms: RATE_LIMIT_WINDOW_MS },
            `${lines} lines of ${eventName} were not written in the last second (logging.client_error_lines_per_second)`,
          );
        } catch {
          // Called from a timer: stdout may have been closed for the exit since (endLogger), and the report goes with it.
        }
      },
    });
  // Every stream at `trace`: the logger's own level is the one filter, for both sinks alike.
  const streams =
    options.tee && primary
      ? pino.multistream([
          { level: 'trace', stream: primary },
          { level: 'trace', stream: options.tee },
        ])
      : primary;
  const logger: Logger = pino(
    {
      level: options.level,
      messageKey: 'body',
      base: { resource },
      timestamp: () => `,"timestamp":"${formatUtcSeconds(Date.now())}"`,
      formatters: {
        level: (label) => ({ severityText: label.toUpperCase(), severityNumber: SEVERITY[label] ?? 9 }),
        log: (object) => ({ attributes: renameAttributes(object) }),
      },
      // A copy: pino merges each event's fields into the object mixin returns.
      mixin: (_object, _level, logger) => ({ ...processAttributes, ...CONTEXTS.get(logger) }),
      hooks: {
        // The message is free text too: it may quote a URL or a header, so it is redacted like the attributes.
        // `args` is pino's own array for this call, so it is redacted in place.
        logMethod(args, method) {
          if (rateLimit && isLimited(args[0], limited) && !rateLimit.admit((args[0] as { event_name: string }).event_name)) return;
          for (let i = 0; i < args.length; i++) {
            const arg: unknown = args[i];
            if (typeof arg === 'string') args[i] = redactText(arg);
          }
          method.apply(this, args);
        },
      },
    },
    streams,
  );
  if (stdout) STDOUT_WRITERS.set(logger, stdout);
  OUTPUT_STATS.set(logger, () => ({ droppedLines: bounded?.droppedLines() ?? 0, rateLimitedLines: rateLimit?.suppressedLines ?? 0 }));
  return logger;
}

/** Whether a log call's fields name an event of `limited`. */
function isLimited(fields: unknown, limited: ReadonlySet<string>): boolean {
  if (typeof fields !== 'object' || fields === null) return false;
  const name = (fields as { event_name?: unknown }).event_name;
  return typeof name === 'string' && limited.has(name);
}

/** What a logger made by `createLogger` did not write; zeros for any other. */
export function logOutputStats(logger: Logger): LogOutputStats {
  return OUTPUT_STATS.get(logger)?.() ?? { droppedLines: 0, rateLimitedLines: 0 };
}

/** Where a process writes lines that other processes logged; `write` answers false when it is behind. */
export interface ForwardedLines {
  write(text: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/**
 * The stdout writer of this logger, for the lines of the workers of a primary (D36): writing them
 * through it keeps each write whole, as its own lines are (each text must be whole lines).
 */
export function forwardedLines(logger: Logger): ForwardedLines {
  return STDOUT_WRITERS.get(logger) ?? process.stdout;
}

/**
 * Writes out every line logged so far, then closes stdout logging; resolves when done or after
 * `graceMs` (nobody reading stdout). For the last step before `process.exit`: pino's own exit hook
 * writes what is buffered synchronously but does not wait for a write already in flight, which
 * then lands after the later lines, or not at all.
 */
export function endLogger(logger: Logger, graceMs: number): Promise<void> {
  const stdout = STDOUT_WRITERS.get(logger);
  if (!stdout) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, graceMs);
    timer.unref();
    stdout.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    stdout.end();
  });
}

/**
 * pino writes child bindings at the top level of a line, but the lines keep request context
 * (`request_id`, `event_type`, `topic`) under `attributes`. So children carry no bindings; their
 * context lives here and `mixin` adds it to every event, where the log formatter nests it.
 */
const CONTEXTS = new WeakMap<object, Readonly<Record<string, unknown>>>();

export function childLogger(logger: Logger, context: Readonly<Record<string, unknown>>): Logger {
  const child = logger.child({});
  CONTEXTS.set(child, { ...CONTEXTS.get(logger), ...context });
  return child;
}

/**
 * Adds fields to a request logger's context once they are known (`event_type`, `topic`), without
 * the cost of another child logger per request. Only for loggers made by `childLogger`.
 */
export function addLogContext(logger: Logger, context: Readonly<Record<string, unknown>>): void {
  CONTEXTS.set(logger, { ...CONTEXTS.get(logger), ...context });
}

/** Renames and redacts in one pass: the attributes object is built once per line. */
function renameAttributes(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    if (key === 'resource') continue;
    const value = object[key];
    const name = RENAMES[key] ?? key;
    out[name] = redactField(name, value instanceof Error ? value.message : value);
  }
  return out;
}
