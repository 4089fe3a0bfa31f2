/** One plain line on stderr, the contract for failures before anything listens (D17). */
export function fatal(reason: string): never {
  process.stderr.write(`${FATAL_PREFIX}${reason}\n`);
  process.exit(1);
}

/** What every such line starts with; the primary of several workers looks for it (D36). */
export const FATAL_PREFIX = 'aviso-server: ';

export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
