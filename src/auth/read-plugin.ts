import type { Logger } from 'pino';
import type { AuthUser } from './auth-user.js';

/** What a read-authorization plugin sees of a validated watch/replay request. */
export interface ReadCheckContext {
  readonly eventType: string;
  /** The verified caller; plugins run only on streams that require auth, so it is always set. */
  readonly user: AuthUser;
  /** Whether the caller holds one of `auth.admin_roles`. */
  readonly isAdmin: boolean;
  /**
   * The canonical value the request gives for an identifier field, or `undefined` when the field
   * was omitted or given as a wildcard or constraint rather than one exact value.
   */
  canonicalValue(field: string): string | undefined;
  readonly logger: Logger;
}

/**
 * An extra authorization step for reads, listed per schema in `auth.plugins` (
 * docs/design/rules/operations.md §2.10). It runs after validation; it resolves to allow and throws an `AuthError` to deny.
 */
export interface ReadAuthorizationPlugin {
  readonly name: string;
  check(context: ReadCheckContext): Promise<void>;
}
