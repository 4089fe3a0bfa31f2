import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CorsConfig } from '../../config/model.js';
import { ownOrigins, type OwnOriginSettings } from '../../config/own-origins.js';
import { originGrants } from './cors.js';
import { crossOriginRefusedError } from './error-bodies.js';
import { echo } from '../../text/echo.js';

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
 * A request with an `Origin` is judged by it alone: allowed when it is one of the server's own
 * (`isOwn`: configured, never the request's `Host`, D46) or the CORS policy allows it (`allows`,
 * `"*"` included); any other, `null` too, is refused. `Sec-Fetch-Site` does not save it: a
 * browser's `same-origin` compares the page with the name the page asked for, which is the
 * attacker's after DNS rebinding. A request without `Origin` is refused only for
 * `Sec-Fetch-Site` `cross-site` or `same-site`; with neither header (every client that is not a
 * browser) it is allowed.
 */
export function isRefusedCrossOrigin(
  context: BrowserContext,
  isOwn: (origin: string) => boolean,
  allows: (origin: string) => boolean,
): boolean {
  const origin = context.origin;
  if (origin !== undefined) return !isOwn(origin) && !allows(origin);
  const fetchSite = context.fetchSite?.trim().toLowerCase();
  return fetchSite === 'cross-site' || fetchSite === 'same-site';
}

/**
 * Refuses, with `403 CROSS_ORIGIN_REQUEST_REFUSED`, every request other than GET, HEAD, OPTIONS
 * and the POST streams that `isRefusedCrossOrigin` judges cross-origin. An `onRequest` hook
 * registered before authentication: nothing is parsed, authenticated or stored for it.
 *
 * The own origins are computed from the configuration at the first write that names an origin
 * once the server listens: the listening port counts for a loopback `base_url`, and port 0 is only
 * picked then. Before that (`inject`), they are computed without it.
 */
export function registerCrossOriginWriteGuard(app: FastifyInstance, cors: CorsConfig, own: OwnOriginSettings): void {
  const grantOf = originGrants(cors);
  const allows = (origin: string): boolean => grantOf(origin) !== undefined;
  const unbound = ownOrigins(own, undefined);
  let bound: ReadonlySet<string> | undefined;
  const isOwn = (origin: string): boolean => {
    if (bound === undefined) {
      const port = listeningPort(app);
      if (port !== undefined) bound = ownOrigins(own, port);
    }
    return (bound ?? unbound).has(origin);
  };
  app.addHook('onRequest', async (request) => {
    if (!changesState(request)) return;
    const context = browserContext(request);
    if (!isRefusedCrossOrigin(context, isOwn, allows)) return;
    request.log.warn(
      {
        event_name: 'http.request.cross_origin.refused',
        method: request.method,
        path: echo(request.url.split('?')[0] ?? ''),
        // A browser's `Origin` is short; a made-up one may fill the head (docs/api.md#echoed-values-decision-d45).
        origin: context.origin === undefined ? undefined : echo(context.origin),
        sec_fetch_site: context.fetchSite === undefined ? undefined : echo(context.fetchSite),
        // An `Origin` naming the `Host` it came with is a rebinding or a name the configuration does not list yet.
        host: echo(request.host),
      },
      'Cross-origin request refused',
    );
    throw crossOriginRefusedError();
  });
}

function listeningPort(app: FastifyInstance): number | undefined {
  const address = app.server.address();
  return typeof address === 'object' && address !== null ? address.port : undefined;
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
