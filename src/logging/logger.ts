import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { formatUtcSeconds } from '../time/time-format.js';
import { redactField, redactText } from './redact.js';

/**
 * pino configured for the OpenTelemetry-shaped JSON lines of docs/design/rules/operations.md §3.4.1: `timestamp`,
 * `severityText`/`severityNumber`, `body`, `resource`, and every event field under `attributes`.
 */

const SEVERITY: Readonly<Record<string, number>> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 };

/** Attribute renames of docs/design/rules/operations.md §3.4.1. */
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
}

/** The identity block of every line (docs/design/rules/operations.md §3.4.1), also the OTLP resource. */
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

export function createLogger(options: LoggerOptions): Logger {
  const resource = logResource(options.serviceVersion, options.env ?? process.env);
  const processAttributes = { ...options.attributes };

  // Asynchronous writes (the libuv thread pool), as pino does by default, kept so `endLogger` can wait for them.
  const stdout = options.destination ? undefined : pino.destination({ dest: 1, sync: false });
  const primary = options.destination ?? stdout;
  // Every stream at `trace`: the logger's own level is the one filter, for both sinks alike.
  const streams =
    options.tee && primary
      ? pino.multistream([
          { level: 'trace', stream: primary },
          { level: 'trace', stream: options.tee },
        ])
      : primary;
  const logger = pino(
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
        // The message is free text too: it may quote a URL or a header (docs/design/rules/operations.md §3.4.1 redaction).
        // `args` is pino's own array for this call, so it is redacted in place.
        logMethod(args, method) {
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
  return logger;
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
 * pino writes child bindings at the top level of a line, but docs/design/rules/operations.md §3.4.1 wants request context
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
