import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ANY_ORIGIN } from '../../config/browser-access.js';
import type { CorsConfig } from '../../config/model.js';
import type { RouteIndex } from './route-index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** CORS is configured and this API request names an `Origin`: the policy decides its CORS headers. */
    corsApplies: boolean;
  }
}

const API_PREFIX = '/api/v1/';

/**
 * What a preflight grants (docs/design/rules/browser.md §2): JSON POSTs with a bearer token, GET streams' resume
 * header, and notify's `Idempotency-Key` with the answers a retrying page must read
 * (docs/api.md "Idempotent notify").
 */
const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'DELETE'];
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Last-Event-ID', 'Idempotency-Key'];
const EXPOSED_HEADERS = ['X-Request-ID', 'Idempotent-Replayed', 'Retry-After'];
/** Browsers cache a preflight this long (Chromium caps it at 2 h). */
const PREFLIGHT_MAX_AGE_SEC = 600;

/**
 * CORS for `/api/v1/*` (browser.md §2), with `@fastify/cors`, only when origins are listed.
 *
 * A listed origin is echoed with `Access-Control-Allow-Credentials: true`; `"*"` in the list
 * answers any other origin with `Access-Control-Allow-Origin: *` and no credentials (the CORS
 * protocol forbids both at once). Any other origin, a path outside `/api/v1/`, or an `OPTIONS`
 * that is no preflight gets no CORS header at all and is answered as without CORS: the browser
 * blocks the page, the server never fails.
 */
export async function registerCors(app: FastifyInstance, cors: CorsConfig, routes: RouteIndex): Promise<void> {
  app.decorateRequest('corsApplies', false);
  if (cors.allowed_origins.length === 0) return;
  const grantOf = originGrants(cors);
  const policyFor = (request: FastifyRequest): FastifyCorsOptions => {
    const origin = request.headers.origin;
    if (origin === undefined || !request.url.startsWith(API_PREFIX)) return { origin: false };
    request.corsApplies = true;
    // fastify-cors would answer such an OPTIONS with its own text/plain 400; ours is the 405 of D3.
    const preflightMethod = request.headers['access-control-request-method'];
    if (request.method === 'OPTIONS') {
      if (preflightMethod === undefined) return { origin: false };
      // Counted and logged under the route it asks about (`route="/api/v1/notification"`), not the catch-all.
      request.matchedPathPattern = routes.patternOf(preflightMethod, request.url);
    }
    const grant = grantOf(origin);
    if (grant === 'listed') return { ...GRANT, origin, credentials: true };
    if (grant === 'any') return { ...GRANT, origin: ANY_ORIGIN, credentials: false };
    return { origin: false };
  };
  await app.register(fastifyCors, {
    hideOptionsRoute: true,
    delegator: (request, callback) => callback(null, policyFor(request)),
  });
}

/** What the policy grants an origin: `listed` by name (with credentials), `any` through `"*"`, or nothing. */
export type OriginGrant = 'listed' | 'any' | undefined;

/** The policy of `application.cors.allowed_origins` for one `Origin` value, compared as text (config/browser-access.ts). */
export function originGrants(cors: CorsConfig): (origin: string) => OriginGrant {
  const listed = new Set(cors.allowed_origins.filter((origin) => origin !== ANY_ORIGIN));
  const anyOrigin = cors.allowed_origins.includes(ANY_ORIGIN);
  return (origin) => (listed.has(origin) ? 'listed' : anyOrigin ? 'any' : undefined);
}

const GRANT: FastifyCorsOptions = {
  methods: ALLOWED_METHODS,
  allowedHeaders: ALLOWED_HEADERS,
  exposedHeaders: EXPOSED_HEADERS,
  maxAge: PREFLIGHT_MAX_AGE_SEC,
  strictPreflight: false,
};

/**
 * The CORS headers of a stream response, which is written past fastify's reply (the stream
 * hijacks it): undefined when CORS does not apply, and the stream keeps the reference's
 * `Access-Control-Allow-Origin: *` (docs/design/rules/streaming.md §3.1); otherwise what the policy set on the
 * reply, which is nothing for a refused origin.
 */
export function streamCorsHeaders(request: FastifyRequest, reply: FastifyReply): Record<string, string> | undefined {
  if (!request.corsApplies) return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && (name.startsWith('access-control-') || name === 'vary')) headers[name] = String(value);
  }
  return headers;
}
