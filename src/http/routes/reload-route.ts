import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../../auth/authenticator.js';
import type { ReloadOutcome, ReloadSource } from '../../config/reload-outcome.js';
import { invalidConfigurationError } from './error-bodies.js';
import { sendOrderedJson } from './json-reply.js';
import { requestLog } from './request-log.js';
import { ROUTE_DOCS } from './route-docs.js';

/** What the admin route and the signal handler need: `POST /api/v1/admin/reload` and `SIGHUP`. */
export interface ConfigurationReload {
  /** `logger`: where its lines go (the admin route passes the request's, for `request_id`). */
  reload(source: ReloadSource, logger?: Logger): Promise<ReloadOutcome>;
  /** The app's authenticator (absent when auth is off), whose admin roles a reload replaces. */
  attachAuthenticator(authenticator: Authenticator | undefined): void;
}

/**
 * `POST /api/v1/admin/reload` (docs/design/rules/browser.md §5, docs/design/rules/api.md §8.6): the same reload as `SIGHUP`. The auth
 * hook requires the admin role as on every admin path; any request body is ignored.
 */
export function registerReloadRoute(app: FastifyInstance, reloader: ConfigurationReload): void {
  app.post('/api/v1/admin/reload', { schema: ROUTE_DOCS.reload }, async (request, reply) => {
    const outcome = await reloader.reload('admin', requestLog(request));
    if (!outcome.ok) {
      throw invalidConfigurationError(outcome.message);
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
