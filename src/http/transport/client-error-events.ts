/**
 * The log events a client causes with a request the server refuses (D45). Each is written at most
 * `logging.client_error_lines_per_second` times a second per process (src/logging/event-rate-limit.ts),
 * so a flood of bad requests costs the log a few lines a second and a count instead of a line per
 * request. Events of the server's own work (a stored notification, a stream set up, a failure of
 * the backend) are never limited.
 */
export const CLIENT_ERROR_EVENTS: ReadonlySet<string> = new Set([
  'api.request.parse.failed',
  'api.request.validation.failed',
  'api.notification.idempotency.conflict',
  'api.notification.batch.item.refused',
  'api.schema.get.not_found',
  'http.request.url.rejected',
  'http.request.cross_origin.refused',
  'auth.middleware.request.denied',
  'auth.ecpds.check.denied',
  'admin.notification.delete.invalid_id',
  'admin.notification.delete.not_found',
  'admin.stream.wipe.not_found',
  'admin.stream.close.not_found',
]);
