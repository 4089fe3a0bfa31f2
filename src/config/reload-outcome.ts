import type { SchemaChanges } from './reload-changes.js';

/** Who asked for the reload, in its log lines. */
export type ReloadSource = 'signal' | 'admin';

export type ReloadOutcome =
  | { readonly ok: true; readonly changes: SchemaChanges; readonly restartRequired: readonly string[] }
  /** `message` is the one line startup would have printed for the same configuration (D17). */
  | { readonly ok: false; readonly message: string };
