import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign, SignJWT } from 'jose';

/**
 * The minimal fake auth-o-tron of docs/design/rules/operations.md §6: a real HTTP server on an ephemeral loopback
 * port answering `GET /authenticate` only (anything else `404`).
 *
 * - The three Basic users get `200`, `Authorization: Bearer <jwt>` and the body
 *   `Authenticated successfully`; the JWT is HS256 with `test-jwt-secret` and carries
 *   `sub`, `username`, `realm: "localrealm"`, the user's roles, `attributes: {}`, `iat`, `exp = iat + 3600`.
 * - `Bearer <token>` with a JWT-shaped token (exactly two whitespace-separated parts) is echoed
 *   unchecked in the response's `Authorization` header.
 * - Anything else is `401` with an empty body.
 *
 * Knobs (`setKnob`) switch one behaviour of docs/design/rules/operations.md §2.3.3 per test: `forbid`, `fail`, `hang` and
 * `no_token` replace every answer; `body_token:<field>`, `body_string` and `body_raw` change only
 * how a successful answer delivers its token (no response header then); `no_username` issues the
 * Basic users' tokens without `username` and `sub`. `setIssuedExp` fixes the `exp` of the tokens
 * issued to Basic users. `reset()` clears the knob, that `exp` and the call log.
 */

export const JWT_SECRET = 'test-jwt-secret';
export const LOCAL_REALM = 'localrealm';

/**
 * A global `auth` section in `trusted_proxy` mode that accepts the tokens `signToken` makes (HS256
 * with JWT_SECRET) and grants admin to LOCAL_REALM's `admin` role; `extra` adds fields or replaces
 * these (e.g. `browser_cookie`, `auth_o_tron_url`, other `admin_roles`).
 */
export function trustedProxyAuth<Extra extends Record<string, unknown>>(extra: Extra = {} as Extra) {
  return {
    enabled: true,
    mode: 'trusted_proxy' as const,
    jwt_secret: JWT_SECRET,
    admin_roles: { [LOCAL_REALM]: ['admin'] },
    ...extra,
  };
}

export interface FakeUser {
  readonly username: string;
  readonly password: string;
  readonly roles: readonly string[];
  /** The `Authorization` value a client sends (and auth-o-tron receives). */
  readonly authorization: string;
}

function basicUser(username: string, password: string, roles: readonly string[]): FakeUser {
  return {
    username,
    password,
    roles,
    authorization: `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`,
  };
}

export const FAKE_USERS = {
  admin: basicUser('admin-user', 'admin-pass', ['admin']),
  reader: basicUser('reader-user', 'reader-pass', ['reader']),
  producer: basicUser('producer-user', 'producer-pass', ['producer']),
} as const;

export type BodyTokenField = 'token' | 'jwt' | 'access_token';
export type FakeKnob =
  'forbid' | 'fail' | 'hang' | 'no_token' | `body_token:${BodyTokenField}` | 'body_string' | 'body_raw' | 'no_username';

export interface FakeCall {
  readonly method: string;
  readonly path: string;
  /** The `Authorization` value as received, `undefined` when absent. */
  readonly authorization: string | undefined;
  /** Every received header (lower-case names), to check nothing else is forwarded. */
  readonly headers: IncomingHttpHeaders;
}

const JWT_SHAPED = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export class FakeAuthOTron {
  private server: Server | undefined;
  private knob: FakeKnob | undefined;
  private issuedExp: number | undefined;
  private readonly log: FakeCall[] = [];
  private readonly hanging = new Set<ServerResponse>();
  private port = 0;

  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  get url(): string {
    if (!this.server) throw new Error('fake auth-o-tron is not started');
    return `http://127.0.0.1:${this.port}`;
  }

  /** Every request received, in order (any path). */
  get calls(): readonly FakeCall[] {
    return this.log;
  }

  /** The `Authorization` values received, in order. */
  get authorizations(): readonly (string | undefined)[] {
    return this.log.map((call) => call.authorization);
  }

  get callCount(): number {
    return this.log.length;
  }

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      void this.handle(request, response).catch((error: unknown) => {
        response.statusCode = 599;
        response.end(String(error));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const response of this.hanging) response.destroy();
    this.hanging.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  setKnob(knob: FakeKnob | undefined): void {
    this.knob = knob;
  }

  /** The `exp` (seconds) of the tokens issued to Basic users from now on; `undefined`: `iat + 3600`. */
  setIssuedExp(exp: number | undefined): void {
    this.issuedExp = exp;
  }

  /** No knob, default `exp`, empty call log. */
  reset(): void {
    this.knob = undefined;
    this.issuedExp = undefined;
    this.log.length = 0;
    for (const response of this.hanging) response.destroy();
    this.hanging.clear();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const authorization = request.headers.authorization;
    this.log.push({ method: request.method ?? '', path, authorization, headers: { ...request.headers } });
    // Drain any body so the connection stays reusable.
    request.resume();

    if (request.method !== 'GET' || path !== '/authenticate') return end(response, 404);
    switch (this.knob) {
      case 'forbid':
        return end(response, 403);
      case 'fail':
        return end(response, 500, 'internal failure');
      case 'hang':
        // Never answer; the connection is destroyed by reset() or stop().
        this.hanging.add(response);
        return;
      case 'no_token':
        return end(response, 200, 'ok');
      default:
        break;
    }

    const token = await this.tokenFor(authorization);
    if (token === undefined) return end(response, 401);
    switch (this.knob) {
      case 'body_token:token':
      case 'body_token:jwt':
      case 'body_token:access_token': {
        const field = this.knob.slice('body_token:'.length);
        return end(response, 200, JSON.stringify({ [field]: token }), 'application/json');
      }
      case 'body_string':
        return end(response, 200, JSON.stringify(token), 'application/json');
      case 'body_raw':
        return end(response, 200, token, 'text/plain');
      default:
        response.setHeader('Authorization', `Bearer ${token}`);
        return end(response, 200, 'Authenticated successfully', 'text/plain');
    }
  }

  /** The token a successful answer carries, or `undefined` for a `401`. */
  private async tokenFor(authorization: string | undefined): Promise<string | undefined> {
    if (authorization === undefined) return undefined;
    const value = authorization.trim();
    const parts = value.split(/\s+/);
    const scheme = parts[0]?.toLowerCase();
    if (scheme === 'bearer' && parts.length === 2) {
      const token = parts[1] as string;
      return JWT_SHAPED.test(token) ? token : undefined;
    }
    if (scheme === 'basic' && parts.length === 2) {
      const user = Object.values(FAKE_USERS).find((candidate) => candidate.authorization === `Basic ${parts[1]}`);
      return user ? this.issue(user) : undefined;
    }
    return undefined;
  }

  private async issue(user: FakeUser): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      sub: user.username,
      username: user.username,
      realm: LOCAL_REALM,
      roles: [...user.roles],
      attributes: {},
    };
    if (this.knob === 'no_username') {
      delete claims.sub;
      delete claims.username;
    }
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(now)
      .setExpirationTime(this.issuedExp ?? now + 3600)
      .sign(new TextEncoder().encode(JWT_SECRET));
  }
}

function end(response: ServerResponse, status: number, body = '', contentType?: string): void {
  response.statusCode = status;
  if (contentType) response.setHeader('Content-Type', contentType);
  response.end(body);
}

export type TokenAlgorithm = 'HS256' | 'HS384' | 'none';

export interface SignOptions {
  /** Defaults to `test-jwt-secret`. */
  readonly secret?: string;
  /** Defaults to `HS256`. `none` still carries an HS256 signature, so only the algorithm is wrong. */
  readonly alg?: TokenAlgorithm;
  /**
   * Sets `exp` to now + this many seconds (negative for the past); default 3600. `null` leaves
   * `exp` out. Ignored when `claims` has an `exp` of its own (any value, for type tests).
   */
  readonly expiresInSeconds?: number | null;
}

/**
 * A compact JWS over exactly these claims (any JSON, so claim-type mismatches can be built), with
 * `{"alg":…,"typ":"JWT"}` as header.
 */
export async function signToken(claims: Readonly<Record<string, unknown>>, options: SignOptions = {}): Promise<string> {
  const secret = new TextEncoder().encode(options.secret ?? JWT_SECRET);
  const alg = options.alg ?? 'HS256';
  const payload: Record<string, unknown> = { ...claims };
  const expiresIn = options.expiresInSeconds === undefined ? 3600 : options.expiresInSeconds;
  if (!Object.hasOwn(claims, 'exp') && expiresIn !== null) payload.exp = Math.floor(Date.now() / 1000) + expiresIn;
  const payloadBytes = new TextEncoder().encode(JSON.stringify(payload));
  if (alg !== 'none') {
    return new CompactSign(payloadBytes).setProtectedHeader({ alg, typ: 'JWT' }).sign(secret);
  }
  const signingInput = `${base64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${Buffer.from(payloadBytes).toString('base64url')}`;
  const signature = createHmac('sha256', secret).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
