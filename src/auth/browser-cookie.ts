import type { FastifyRequest } from 'fastify';

/** The GET stream routes, the only ones that read `auth.browser_cookie` (docs/design/rules/browser.md §1). */
const BROWSER_STREAM_ROUTES: ReadonlySet<string> = new Set(['/api/v1/watch', '/api/v1/replay']);

/**
 * The `Authorization` value a request presents. `EventSource` cannot send headers, so when
 * `auth.browser_cookie` names a cookie, a GET stream without the header presents that cookie's
 * token as `Bearer <token>`; every other request (POST streams, notify, admin) reads the header
 * only. A header, when sent, always wins.
 */
export function presentedAuthorization(request: FastifyRequest, browserCookie: string | undefined): string | undefined {
  const header = request.headers.authorization;
  if (header !== undefined || browserCookie === undefined) return header;
  if (request.method !== 'GET' || !BROWSER_STREAM_ROUTES.has(request.routeOptions.url ?? '')) return undefined;
  const token = cookieValue(request.headers.cookie, browserCookie);
  return token === undefined || token === '' ? undefined : `Bearer ${token}`;
}

/** One cookie of a `Cookie` header (RFC 6265 §5.4: `name=value` pairs split on `;`), unquoted. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals < 0 || pair.slice(0, equals).trim() !== name) continue;
    const value = pair.slice(equals + 1).trim();
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  }
  return undefined;
}
