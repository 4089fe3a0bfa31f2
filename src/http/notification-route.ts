import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { addLogContext } from '../logging/logger.js';
import type { AvisoMetrics, NotificationStatus } from '../metrics/aviso-metrics.js';
import { displayTopic } from '../topic/percent-codec.js';
import { ApiError } from './api-error.js';
import { NotificationTooLargeError, type NotificationBackend } from '../backend/backend.js';
import type { StreamAccess } from '../auth/stream-access.js';
import type { Clock } from '../clock.js';
import { IdentifierError } from '../schema/identifier-error.js';
import { assertNoPointOnNotify, prepareNotification, type PreparedNotification } from '../schema/notify-identifier.js';
import type { SchemaRegistry } from '../schema/schema-registry.js';
import { endPointNotSupported, hasEndPoint } from '../streaming/end-point.js';
import { formatUtcSeconds } from '../time-format.js';
import { notificationTooLargeError, storageFailedError, unknownEventTypeError, validationError } from './error-bodies.js';
import { sendOrderedJson } from './json-reply.js';
import { parseNotificationRequest } from './request-body.js';
import { ROUTE_DOCS } from './route-docs.js';

export interface NotificationRouteDeps {
  readonly registry: SchemaRegistry;
  readonly backend: NotificationBackend;
  readonly clock: Clock;
  readonly access: StreamAccess;
  readonly metrics: AvisoMetrics;
}

/** `POST /api/v1/notification` (api.md §5): parse → gate → point → validate → topic → store → 200. */
export function registerNotificationRoute(app: FastifyInstance, deps: NotificationRouteDeps): void {
  const { metrics } = deps;

  app.post('/api/v1/notification', { schema: ROUTE_DOCS.notify }, async (request, reply) => {
    // `unknown` until the body parsed and strict mode accepted the event type (operations.md §3.3.4).
    const labels = { eventType: 'unknown' };
    try {
      const response = await notify(deps, request, reply, labels);
      metrics.notification(labels.eventType, 'success');
      return response;
    } catch (error) {
      metrics.notification(labels.eventType, notificationStatus(error));
      throw error;
    }
  });
}

/** Strict-mode and stream-level auth refusals are `rejected`; everything else that fails is `error`. */
function notificationStatus(error: unknown): NotificationStatus {
  const code = error instanceof ApiError ? error.body.code : undefined;
  return code === 'UNKNOWN_EVENT_TYPE' || code === 'UNAUTHORIZED' || code === 'FORBIDDEN' ? 'rejected' : 'error';
}

async function notify(
  deps: NotificationRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  labels: { eventType: string },
): Promise<FastifyReply> {
  const { registry, backend, clock, access } = deps;
  const body = parseNotificationRequest('notify', request.body as Buffer | undefined);
  if (registry.rejectsEventType(body.event_type)) {
    throw unknownEventTypeError(body.event_type, registry.eventTypes);
  }
  labels.eventType = registry.eventTypeLabel(body.event_type);
  addLogContext(request.log as Logger, { event_type: labels.eventType });
  // An end point belongs to replays (reference-0.13.md §1); refused before the point check.
  if (hasEndPoint(body)) throw validationError('notify', endPointNotSupported('/notification'));

  const asValidationError = (error: unknown): unknown =>
    error instanceof IdentifierError ? validationError('notify', error.message, error.details) : error;
  try {
    assertNoPointOnNotify(body.identifier);
  } catch (error) {
    throw asValidationError(error);
  }
  // The write check comes after the point check and before validation (operations.md §2.7).
  access.checkWrite(registry.get(body.event_type), request.authUser);
  let prepared: PreparedNotification;
  try {
    prepared = prepareNotification(registry, body);
  } catch (error) {
    throw asValidationError(error);
  }

  addLogContext(request.log as Logger, { topic: displayTopic(prepared.topic) });
  let sequence: number;
  try {
    ({ sequence } = await backend.publish(prepared));
  } catch (error) {
    if (error instanceof NotificationTooLargeError) throw notificationTooLargeError(error.message);
    throw storageFailedError(error instanceof Error ? error.message : String(error));
  }
  request.log.info({ event_name: 'api.notification.processed', sequence }, 'Notification stored');
  return sendOrderedJson(reply, 200, {
    status: 'success',
    request_id: request.id,
    processed_at: formatUtcSeconds(clock.now()),
  });
}
