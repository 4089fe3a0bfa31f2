/** The caller, as derived from a verified JWT (the one presented, or the one auth-o-tron returned for it). */
export interface AuthUser {
  readonly username: string;
  readonly realm: string | undefined;
  readonly roles: readonly string[];
  readonly attributes: Readonly<Record<string, string>>;
  /**
   * The first instant (epoch ms) at which the server refuses the token: its `exp` plus the 60 s
   * leeway the verifier allows for clock skew. A stream opened with it ends then. Absent for a
   * user not derived from a JWT.
   */
  readonly expiresAt?: number;
}

/** Realm → role names, as in `admin_roles`, `read_roles`, `write_roles`. */
export type RoleMap = Readonly<Record<string, readonly string[]>>;

/**
 * Roles are realm-scoped, exact and case-sensitive; `"*"` grants every user of that
 * realm and never crosses realms.
 */
export function hasAnyRole(user: AuthUser, roles: RoleMap): boolean {
  if (Object.keys(roles).length === 0) return true;
  if (user.realm === undefined) return false;
  const granted = Object.hasOwn(roles, user.realm) ? roles[user.realm] : undefined;
  if (!granted) return false;
  if (granted.includes('*')) return true;
  return user.roles.some((role) => granted.includes(role));
}
