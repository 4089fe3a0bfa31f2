import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The `Content-Type` header as the client sent it; removed from `headers` (see below). */
    rawContentType: string | undefined;
  }
}

/**
 * notify/watch/replay read the raw body whatever the Content-Type says (docs/design/rules/api.md §2.2). fastify
 * answers 415 by itself, before any route runs, when it cannot parse the header (an empty value,
 * `;;;`), so the header is moved aside in `onRequest` and every body is read as a buffer. Routes
 * that care about the media type (wipe-stream) read `request.rawContentType`.
 */
export function registerRawBodyReading(app: FastifyInstance): void {
  app.decorateRequest('rawContentType', undefined);
  app.addHook('onRequest', async (request) => {
    request.rawContentType = request.headers['content-type'];
    if (request.rawContentType !== undefined) delete request.headers['content-type'];
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}
