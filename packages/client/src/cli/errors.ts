/**
 * Errors the command itself raises. A UsageError is the user's mistake in flags or files and
 * exits 2 before anything is sent; everything else that escapes a command exits 1.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A template that cannot be rendered: the same notification would fail again (deterministic). */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
  constructor(
    readonly kind: 'Missing' | 'EnvNotSet' | 'BadSyntax' | 'ValueInUrlAuthority' | 'ValueAfterUnsupportedShellSyntax',
    readonly context: string,
    readonly field: string,
  ) {
    // The message names the place and the path, never the template text, which may hold secrets.
    super(`template error in ${context}: ${kind} (${field})`);
  }
}

export const EXIT_OK = 0;
export const EXIT_RUNTIME = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERRUPTED = 130;
