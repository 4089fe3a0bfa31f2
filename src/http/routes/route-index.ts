import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

/**
 * The app's routes by method and path, for the answers fastify's own router cannot give: which
 * other methods a path has (the 405 of D3), and which route a CORS preflight asks about.
 */
export interface RouteIndex {
  /** The pattern of the route `method` reaches at `url`'s path (`/api/v1/schema/:event_type`), if any. */
  patternOf(method: string, url: string): string | undefined;
  /** Every method some route answers. */
  readonly methods: ReadonlySet<string>;
}

/** Indexes every route added from now on, so call it before the routes are registered. */
export function indexRoutes(app: FastifyInstance): RouteIndex {
  const router = FindMyWay();
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    // A catch-all (the CORS preflight route) would make every path "exist" for every method.
    if (route.url === '*') return;
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      router.on(method as HTTPMethod, route.url, () => undefined, { pattern: route.url });
      methods.add(method);
    }
  });
  return {
    patternOf(method, url) {
      const path = url.split('?')[0] ?? url;
      const found = router.find(method.toUpperCase() as HTTPMethod, path);
      return found === null ? undefined : (found.store as { pattern: string }).pattern;
    },
    methods,
  };
}
