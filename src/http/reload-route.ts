import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ConfigurationReload } from '../config/reload.js';
import { ApiError } from './api-error.js';
import { sendOrderedJson } from './json-reply.js';
import { ROUTE_DOCS } from './route-docs.js';

/** The `code` of a refused reload (api.md §8.6): the configuration on disk would not start. */
export const INVALID_CONFIGURATION = 'INVALID_CONFIGURATION';

/**
 * `POST /api/v1/admin/reload` (browser.md §5, api.md §8.6): the same reload as `SIGHUP`. The auth
 * hook requires the admin role as on every admin path; any request body is ignored.
 */
export function registerReloadRoute(app: FastifyInstance, reloader: ConfigurationReload): void {
  app.post('/api/v1/admin/reload', { schema: ROUTE_DOCS.reload }, async (request, reply) => {
    const outcome = await reloader.reload('admin', request.log as Logger);
    if (!outcome.ok) {
      throw new ApiError(400, { code: INVALID_CONFIGURATION, error: 'invalid_configuration', message: outcome.message });
    }
    return sendOrderedJson(reply, 200, {
      success: true,
      message: 'Configuration reloaded',
      event_types_added: outcome.changes.added,
      event_types_removed: outcome.changes.removed,
      event_types_changed: outcome.changes.changed,
      restart_required: outcome.restartRequired,
      request_id: request.id,
    });
  });
}
