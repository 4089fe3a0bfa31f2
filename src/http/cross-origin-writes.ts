import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CorsConfig } from '../config/model.js';
import { originGrants } from './cors.js';
import { crossOriginRefusedError } from './error-bodies.js';
import { echo } from '../text/echo.js';

/** Methods that change nothing (RFC 9110 §9.2.1). */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * POSTed, but reads: a stream changes nothing, and its GET form is open to any page anyway
 * (EventSource; docs/security.md, "Cross-site writes").
 */
const STREAM_ROUTES: ReadonlySet<string> = new Set(['/api/v1/watch', '/api/v1/replay']);

/** What a browser says of a request: its `Origin` and `Sec-Fetch-Site` headers, as sent. */
export interface BrowserContext {
  readonly origin: string | undefined;
  readonly fetchSite: string | undefined;
}

/**
 * Whether a state-changing request comes from a page that may not make it. Bodies are parsed as
 * JSON whatever their `Content-Type` (api.md), so a page anywhere can send one without a CORS
 * preflight (a `text/plain` POST, a form): CORS would only hide the answer, after the change.
 *
 * Allowed: `Sec-Fetch-Site` `same-origin` or `none` (the browser vouches for it, which also holds
 * behind a proxy that terminates TLS); an `Origin` that is the request's own (`ownOrigin`) or that
 * the CORS policy allows (`allows`, `"*"` included). Refused: any other `Origin` (`null` too), and
 * `Sec-Fetch-Site` `cross-site` or `same-site` without one. A request with neither header (every
 * client that is not a browser) is allowed.
 */
export function isRefusedCrossOrigin(context: BrowserContext, ownOrigin: string | undefined, allows: (origin: string) => boolean): boolean {
  const fetchSite = context.fetchSite?.trim().toLowerCase();
  if (fetchSite === 'same-origin' || fetchSite === 'none') return false;
  const origin = context.origin;
  if (origin !== undefined) return origin !== ownOrigin && !allows(origin);
  return fetchSite === 'cross-site' || fetchSite === 'same-site';
}

/** The origin a browser would name for this server as the request reached it: scheme and `Host`. */
export function ownOriginOf(protocol: string, host: string): string | undefined {
  if (host === '') return undefined;
  try {
    return new URL(`${protocol}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * Refuses, with `403 CROSS_ORIGIN_REQUEST_REFUSED`, every request other than GET, HEAD, OPTIONS
 * and the POST streams that `isRefusedCrossOrigin` judges cross-origin. An `onRequest` hook
 * registered before authentication: nothing is parsed, authenticated or stored for it.
 */
export function registerCrossOriginWriteGuard(app: FastifyInstance, cors: CorsConfig): void {
  const grantOf = originGrants(cors);
  const allows = (origin: string): boolean => grantOf(origin) !== undefined;
  app.addHook('onRequest', async (request) => {
    if (!changesState(request)) return;
    const context = browserContext(request);
    if (!isRefusedCrossOrigin(context, ownOriginOf(request.protocol, request.host), allows)) return;
    request.log.warn(
      {
        event_name: 'http.request.cross_origin.refused',
        method: request.method,
        path: echo(request.url.split('?')[0] ?? ''),
        // A browser's `Origin` is short; a made-up one may fill the head (docs/api.md#echoed-values-decision-d45).
        origin: context.origin === undefined ? undefined : echo(context.origin),
        sec_fetch_site: context.fetchSite === undefined ? undefined : echo(context.fetchSite),
      },
      'Cross-origin request refused',
    );
    throw crossOriginRefusedError();
  });
}

function changesState(request: FastifyRequest): boolean {
  if (SAFE_METHODS.has(request.method)) return false;
  return !(request.method === 'POST' && STREAM_ROUTES.has(request.routeOptions.url ?? ''));
}

function browserContext(request: FastifyRequest): BrowserContext {
  const single = (name: string): string | undefined => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  return { origin: single('origin'), fetchSite: single('sec-fetch-site') };
}
