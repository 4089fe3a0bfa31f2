import type { LevelWithSilent } from 'pino';

const LEVELS: Readonly<Record<string, LevelWithSilent>> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  error: 'error',
  off: 'silent',
};

/** `logging.level` is lenient: anything unknown means `info` (docs/design/rules/operations.md §1.4.2). */
export function configuredLevel(level: string | undefined): LevelWithSilent {
  const lower = (level ?? '').trim().toLowerCase();
  return lower !== 'off' && LEVELS[lower] ? LEVELS[lower] : 'info';
}

export interface EffectiveLevel {
  readonly level: LevelWithSilent;
  /** One line for stderr when `RUST_LOG` could not be used. */
  readonly warning?: string;
}

/**
 * docs/design/rules/operations.md §3.4.2: `RUST_LOG`, when set and not blank, overrides `logging.level` with its bare
 * level (the last one wins); `target=level` directives and target selectors are accepted and
 * ignored. A value that does not parse falls back to `logging.level` with one warning.
 */
export function effectiveLevel(loggingLevel: string | undefined, rustLog: string | undefined): EffectiveLevel {
  const fallback = configuredLevel(loggingLevel);
  if (rustLog === undefined || rustLog.trim() === '') return { level: fallback };
  let global: LevelWithSilent | undefined;
  for (const directive of rustLog
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const equals = directive.indexOf('=');
    if (equals >= 0) {
      const target = directive.slice(0, equals).trim();
      const level = directive
        .slice(equals + 1)
        .trim()
        .toLowerCase();
      if (target === '' || !LEVELS[level]) return invalid(rustLog, fallback);
      continue;
    }
    const level = LEVELS[directive.toLowerCase()];
    if (level) global = level;
  }
  return { level: global ?? fallback };
}

function invalid(rustLog: string, fallback: LevelWithSilent): EffectiveLevel {
  const quoted = rustLog.length > 200 ? `${rustLog.slice(0, 200)}…` : rustLog;
  return {
    level: fallback,
    warning: `aviso-server: ignoring RUST_LOG '${quoted}': it does not parse; using logging.level (${fallback})`,
  };
}
