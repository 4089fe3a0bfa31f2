import { AuthError } from './auth-error.js';
import type { EventSchema } from '../schema/event-schema.js';
import { hasAnyRole, type AuthUser } from './auth-user.js';
import type { Authenticator } from './authenticator.js';

/**
 * Per-stream enforcement (docs/design/rules/operations.md §2.7): schemas with `auth.required: true` need a user;
 * admins may always read and write; otherwise `read_roles`/`write_roles` decide, and without
 * `write_roles` only admins write. Everything else is public.
 */
export class StreamAccess {
  constructor(private readonly authenticator: Authenticator | undefined) {}

  checkRead(schema: EventSchema | undefined, user: AuthUser | undefined): void {
    const auth = this.requiredAuth(schema);
    if (!auth) return;
    const caller = this.requireUser(user);
    if (this.isAdmin(caller)) return;
    if (auth.read_roles && !hasAnyRole(caller, auth.read_roles)) {
      throw new AuthError(403, 'User does not have required read role for this stream');
    }
  }

  checkWrite(schema: EventSchema | undefined, user: AuthUser | undefined): void {
    const auth = this.requiredAuth(schema);
    if (!auth) return;
    const caller = this.requireUser(user);
    if (this.isAdmin(caller)) return;
    if (!auth.write_roles) throw new AuthError(403, 'Only administrators can write to this stream');
    if (!hasAnyRole(caller, auth.write_roles)) {
      throw new AuthError(403, 'User does not have required write role for this stream');
    }
  }

  isAdmin(user: AuthUser): boolean {
    return this.authenticator?.isAdmin(user) ?? false;
  }

  private requiredAuth(schema: EventSchema | undefined) {
    if (!this.authenticator || !schema?.auth?.required) return undefined;
    return schema.auth;
  }

  private requireUser(user: AuthUser | undefined): AuthUser {
    if (user) return user;
    throw new AuthError(401, 'Authentication is required for this stream', this.authenticator?.challenges ?? []);
  }
}
