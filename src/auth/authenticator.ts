import type { Logger } from 'pino';
import type { AuthConfig } from '../config/model.js';
import { AuthError } from './auth-error.js';
import { AuthOTronClient } from './auth-o-tron.js';
import { hasAnyRole, type AuthUser, type RoleMap } from './auth-user.js';
import { parseDirectHeader, parseTrustedProxyHeader, type PresentedCredentials } from './authorization-header.js';
import { JwtVerifier, TokenRejected } from './jwt-verifier.js';

export type AuthMode = 'direct' | 'trusted_proxy';

const UNAVAILABLE = 'Authentication service temporarily unavailable';

/**
 * Who is calling: parses the `Authorization` header for the mode,
 * verifies presented credentials — on public routes too (D12) — and enforces the admin rule.
 * Throws `AuthError`s; knows nothing about HTTP.
 */
export class Authenticator {
  readonly mode: AuthMode;
  private adminRoles: RoleMap;
  private readonly verifier: JwtVerifier;
  private readonly authOTron: AuthOTronClient | undefined;

  constructor(
    config: AuthConfig,
    nowMs: () => number,
    private readonly logger: Logger,
  ) {
    this.mode = config.mode;
    this.adminRoles = config.admin_roles;
    this.verifier = new JwtVerifier(config.jwt_secret, nowMs);
    this.authOTron = config.mode === 'direct' ? new AuthOTronClient(config.auth_o_tron_url, config.timeout_ms) : undefined;
  }

  /** `WWW-Authenticate` values of every 401, in order: `Bearer` and `Basic` in direct mode, `Bearer` behind a proxy. */
  get challenges(): readonly string[] {
    return this.mode === 'direct' ? ['Bearer', 'Basic'] : ['Bearer'];
  }

  /**
   * A configuration reload's `auth.admin_roles` (one assignment: a request checks one list or the
   * other). Mode, secret and auth-o-tron URL are fixed at startup.
   */
  replaceAdminRoles(roles: RoleMap): void {
    this.adminRoles = roles;
  }

  isAdmin(user: AuthUser): boolean {
    return hasAnyRole(user, this.adminRoles);
  }

  /**
   * One request under `/api/v1` (schema routes excluded): credentials, when presented, are verified
   * on every path; a malformed header is ignored except on admin paths, which need an admin user.
   */
  async authenticate(isAdminPath: boolean, header: string | undefined): Promise<AuthUser | undefined> {
    let credentials: PresentedCredentials = this.mode === 'direct' ? parseDirectHeader(header) : parseTrustedProxyHeader(header);
    if (credentials.kind === 'malformed') {
      if (isAdminPath) throw new AuthError(401, credentials.message, this.challenges);
      credentials = { kind: 'none' };
    }
    const user = credentials.kind === 'present' ? await this.resolve(credentials) : undefined;
    if (!user && isAdminPath) throw new AuthError(401, 'Authorization header is required', this.challenges);
    if (user && isAdminPath && !this.isAdmin(user)) {
      throw new AuthError(403, 'User does not have required administrative role', [], { username: user.username });
    }
    return user;
  }

  private async resolve(credentials: Extract<PresentedCredentials, { kind: 'present' }>): Promise<AuthUser> {
    let token = credentials.token;
    if (this.authOTron) {
      const answer = await this.authOTron.authenticate(credentials.header);
      switch (answer.kind) {
        case 'rejected':
          throw new AuthError(401, 'Invalid or expired token', this.challenges);
        case 'denied':
          throw new AuthError(403, 'Token validation was denied');
        case 'unavailable':
          this.logger.warn(
            { event_name: 'auth.middleware.remote.validation.failed', error: answer.reason },
            'auth-o-tron could not validate the credentials',
          );
          throw new AuthError(503, UNAVAILABLE);
        case 'token':
          token = answer.token;
      }
    }
    try {
      return await this.verifier.verify(token);
    } catch (error) {
      if (error instanceof TokenRejected) throw new AuthError(401, error.message, this.challenges);
      throw error;
    }
  }
}
