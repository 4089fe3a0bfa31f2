import { compactVerify } from 'jose';
import type { AuthUser } from './auth-user.js';

/** A token that does not authenticate anyone; `message` is the 401 text. */
export class TokenRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenRejected';
  }
}

const INVALID = 'Invalid or expired token';
const MISSING_USER = 'Token is missing required user claims';
/** The reference's implicit clock-skew allowance on `exp`, kept so tokens expire at the same instant. */
const EXPIRY_LEEWAY_SECONDS = 60;

/**
 * HS256 only, keyed with the UTF-8 bytes of `auth.jwt_secret`; `exp` required; `nbf`, `iss`,
 * `aud` and `sub` are not validated. `compactVerify` checks the signature and pins the algorithm;
 * the claims are checked here because `jwtVerify` would also enforce `nbf`.
 */
export class JwtVerifier {
  private readonly key: Uint8Array;

  constructor(
    secret: string,
    private readonly nowMs: () => number,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  async verify(token: string): Promise<AuthUser> {
    let payload: Uint8Array;
    try {
      ({ payload } = await compactVerify(token, this.key, { algorithms: ['HS256'] }));
    } catch {
      throw new TokenRejected(INVALID);
    }
    let claims: unknown;
    try {
      claims = JSON.parse(new TextDecoder().decode(payload));
    } catch {
      throw new TokenRejected(INVALID);
    }
    if (!isRecord(claims) || !this.claimsValid(claims)) throw new TokenRejected(INVALID);
    const username = (claims.username ?? claims.sub) as string | null | undefined;
    if (typeof username !== 'string') throw new TokenRejected(MISSING_USER);
    return {
      username,
      realm: typeof claims.realm === 'string' ? claims.realm : undefined,
      roles: (claims.roles as string[] | undefined) ?? [],
      attributes: (claims.attributes as Record<string, string> | undefined) ?? {},
      expiresAt: refusedFromMs(claims.exp as number),
    };
  }

  private claimsValid(claims: Record<string, unknown>): boolean {
    const { exp } = claims;
    if (typeof exp !== 'number' || !Number.isInteger(exp) || exp < 0) return false;
    if (this.nowMs() >= refusedFromMs(exp)) return false;
    for (const name of ['username', 'sub', 'realm', 'iss']) {
      const value = claims[name];
      if (value !== undefined && value !== null && typeof value !== 'string') return false;
    }
    const { roles, attributes, iat } = claims;
    if (roles !== undefined && !(Array.isArray(roles) && roles.every((role) => typeof role === 'string'))) return false;
    if (attributes !== undefined && !(isRecord(attributes) && Object.values(attributes).every((v) => typeof v === 'string'))) {
      return false;
    }
    return iat === undefined || (typeof iat === 'number' && Number.isInteger(iat));
  }
}

/**
 * The first millisecond at which a token with this `exp` is refused. The rule is the reference's
 * whole-second one, `exp < floor(now / 1000) − 60`, which holds exactly from `(exp + 61) s` on;
 * requests and open streams both use this instant, so a stream ends when a reconnect with the same
 * token would get its 401.
 */
export function refusedFromMs(exp: number): number {
  return (exp + EXPIRY_LEEWAY_SECONDS + 1) * 1000;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
