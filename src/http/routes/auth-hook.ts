import type { FastifyInstance } from 'fastify';
import { AuthError } from '../../auth/auth-error.js';
import type { AuthUser } from '../../auth/auth-user.js';
import type { Authenticator } from '../../auth/authenticator.js';
import { presentedAuthorization } from '../../auth/browser-cookie.js';
import type { AuthOutcome, AvisoMetrics } from '../../metrics/aviso-metrics.js';
import { authErrorResponse } from './error-bodies.js';
import { echo } from '../../text/echo.js';

/** `outcome` of `aviso_auth_requests_total` for each rejection status. */
const AUTH_OUTCOMES: Readonly<Record<number, AuthOutcome>> = {
  401: 'unauthorized',
  403: 'forbidden',
  503: 'service_unavailable',
};

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller, when credentials were presented and auth is on. */
    authUser: AuthUser | undefined;
  }
}

/**
 * The paths a request can be judged by: the route pattern the router matched (if any) and the
 * request path percent-decoded as the router decodes it. A request is authenticated, or an admin
 * request, when either says so — judging the raw path alone would let `/api/v1/%61dmin/wipe/all`
 * reach the admin route unauthenticated.
 */
function requestPaths(routePattern: string | undefined, rawUrl: string): { decoded: string; candidates: string[] } {
  const raw = rawUrl.split('?')[0] ?? '/';
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Malformed escapes: the router refuses such paths too; judge the raw text.
  }
  return { decoded, candidates: routePattern ? [routePattern, decoded] : [decoded] };
}

/** Only `/api/v1` is authenticated, and the schema routes never are: a client reads a schema before it has a token. */
export function isAuthenticatedPath(path: string): boolean {
  const underApi = path === '/api/v1' || path.startsWith('/api/v1/');
  return underApi && !path.startsWith('/api/v1/schema');
}

/** A plain prefix, as in the reference: `/api/v1/administrator` is an admin path too. */
export function isAdminPath(path: string): boolean {
  return path.startsWith('/api/v1/admin');
}

/**
 * Runs the middleware before the body is read, for every request under `/api/v1` (unknown admin
 * paths included, so they answer 401 rather than 404), and logs each rejection.
 */
export function registerAuthHook(
  app: FastifyInstance,
  authenticator: Authenticator | undefined,
  metrics: AvisoMetrics,
  /** `auth.browser_cookie`: also read the bearer token from this cookie on GET streams. */
  browserCookie?: string,
): void {
  app.decorateRequest('authUser', undefined);
  if (!authenticator) return;
  app.addHook('onRequest', async (request) => {
    const { decoded: path, candidates } = requestPaths(request.routeOptions.url, request.url);
    if (!candidates.some(isAuthenticatedPath)) return;
    try {
      request.authUser = await authenticator.authenticate(candidates.some(isAdminPath), presentedAuthorization(request, browserCookie));
    } catch (error) {
      if (!(error instanceof AuthError)) throw error;
      const refusal = authErrorResponse(error);
      metrics.authRequest(authenticator.mode, AUTH_OUTCOMES[refusal.statusCode] ?? 'unauthorized');
      request.log.warn(
        {
          event_name: 'auth.middleware.request.denied',
          outcome: 'error',
          status_code: refusal.statusCode,
          reason: refusal.body.error,
          username: refusal.logContext.username ?? '-',
          path: echo(path),
        },
        String(refusal.body.message),
      );
      throw refusal;
    }
    if (request.authUser) {
      metrics.authRequest(authenticator.mode, 'success');
      request.log.debug({ event_name: 'auth.middleware.user.resolved', username: request.authUser.username, path }, 'User resolved');
    }
  });
}
