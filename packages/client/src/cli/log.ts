/**
 * The command's diagnostic records on stderr, in the aviso client's two shapes: on a terminal a
 * compact line (`12:19:15.333  INFO body key=value`), otherwise one OpenTelemetry log record per
 * line (`timestamp`, `severityText`, `severityNumber`, `body`, `resource`, `attributes`), so a log
 * collector reads the same fields from both clients. The level comes from `-v`/`-vv`, or from
 * `AVISO_LOG` (an EnvFilter-style directive list), which wins when set.
 */

export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type Level = (typeof LEVELS)[number];
type Threshold = Level | 'off';

/** The OpenTelemetry severity numbers: the lowest of each level's band. */
const SEVERITY_NUMBER: Record<Level, number> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17 };
const LEVEL_COLOR: Record<Level, string> = { trace: '35', debug: '34', info: '32', warn: '33', error: '31' };
const THRESHOLDS: readonly Threshold[] = [...LEVELS, 'off'];

/** The directive target our records carry (the Rust client's crate name, so the same filters apply). */
const OWN_TARGET = 'aviso';

export type Attributes = Readonly<Record<string, unknown>>;

export interface Logger {
  enabled(level: Level): boolean;
  log(level: Level, body: string, attributes?: Attributes): void;
}

function parseThreshold(text: string): Threshold | undefined {
  const lower = text.trim().toLowerCase();
  return (THRESHOLDS as readonly string[]).includes(lower) ? (lower as Threshold) : undefined;
}

/**
 * The threshold for our records from an `AVISO_LOG` value: the most specific `target=level`
 * directive whose target our target starts with, else a bare `level`, else `warn` (the aviso
 * client's default directive when the variable is set). Directives that do not parse are skipped.
 */
export function thresholdFromDirectives(directives: string): Threshold {
  let bare: Threshold | undefined;
  let best: { length: number; level: Threshold } | undefined;
  for (const directive of directives.split(',')) {
    const at = directive.indexOf('=');
    if (at < 0) {
      bare = parseThreshold(directive) ?? bare;
      continue;
    }
    const target = directive.slice(0, at).trim();
    const level = parseThreshold(directive.slice(at + 1));
    if (level === undefined || target === '' || !OWN_TARGET.startsWith(target)) continue;
    if (best === undefined || target.length >= best.length) best = { length: target.length, level };
  }
  return best?.level ?? bare ?? 'warn';
}

/** `-v` is debug, `-vv` trace, nothing info; `AVISO_LOG` replaces all three. */
export function threshold(verbosity: number, avisoLog: string | undefined): Threshold {
  if (avisoLog !== undefined) return thresholdFromDirectives(avisoLog);
  return verbosity >= 2 ? 'trace' : verbosity === 1 ? 'debug' : 'info';
}

function clockText(at: Date): string {
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}.${pad(at.getUTCMilliseconds(), 3)}`;
}

/** RFC 3339 in UTC with microseconds, as the aviso client writes its `timestamp`. */
function timestampText(at: Date): string {
  return `${at.toISOString().slice(0, -1)}000Z`;
}

function fieldText(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

export interface RecordShape {
  readonly at: Date;
  readonly level: Level;
  readonly body: string;
  readonly attributes: Attributes;
}

/** A terminal line: short UTC clock, padded level (colored when asked), body, then `key=value` fields. */
export function textRecord(record: RecordShape, color: boolean): string {
  const label = record.level.toUpperCase().padStart(5);
  const level = color ? `\u001b[${LEVEL_COLOR[record.level]}m${label}\u001b[0m` : label;
  const fields = Object.entries(record.attributes).map(([k, v]) => ` ${k}=${fieldText(v)}`);
  return `${clockText(record.at)} ${level} ${record.body}${fields.join('')}\n`;
}

/** One OpenTelemetry log record; `deployment.environment` from `AVISO_DEPLOYMENT_ENV` when set. */
export function jsonRecord(record: RecordShape, version: string, environment: string | undefined): string {
  const resource: Record<string, string> = { 'service.name': 'aviso-cli', 'service.version': version };
  if (environment) resource['deployment.environment'] = environment;
  const line: Record<string, unknown> = {
    timestamp: timestampText(record.at),
    severityText: record.level.toUpperCase(),
    severityNumber: SEVERITY_NUMBER[record.level],
    body: record.body,
    resource,
  };
  if (Object.keys(record.attributes).length > 0) line.attributes = record.attributes;
  return `${JSON.stringify(line)}\n`;
}

export interface LoggerOptions {
  readonly stderr: Pick<NodeJS.WriteStream, 'write' | 'isTTY'>;
  readonly verbosity: number;
  readonly env: NodeJS.ProcessEnv;
  readonly color: boolean;
  readonly version: string;
  readonly now?: () => Date;
}

export function createLogger(options: LoggerOptions): Logger {
  const limit = threshold(options.verbosity, options.env.AVISO_LOG);
  const floor = limit === 'off' ? Number.POSITIVE_INFINITY : SEVERITY_NUMBER[limit];
  const terminal = options.stderr.isTTY === true;
  const now = options.now ?? (() => new Date());
  return {
    enabled: (level) => SEVERITY_NUMBER[level] >= floor,
    log(level, body, attributes = {}) {
      if (SEVERITY_NUMBER[level] < floor) return;
      const record = { at: now(), level, body, attributes };
      options.stderr.write(
        terminal ? textRecord(record, options.color) : jsonRecord(record, options.version, options.env.AVISO_DEPLOYMENT_ENV),
      );
    },
  };
}

/** `--color auto|always|never` for one stream: `always` wins over `NO_COLOR`, `auto` needs a terminal. */
export function colorEnabled(mode: 'auto' | 'always' | 'never', isTerminal: boolean, env: NodeJS.ProcessEnv): boolean {
  if (mode === 'always') return true;
  if (mode === 'never') return false;
  return isTerminal && env.NO_COLOR === undefined;
}
