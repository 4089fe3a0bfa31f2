import type { FastifyInstance } from 'fastify';
import type { NotificationBackend } from '../backend/backend.js';
import type { StreamAccess } from '../auth/stream-access.js';
import type { Clock } from '../clock.js';
import { IdentifierError } from '../schema/identifier-error.js';
import { assertNoPointOnNotify, prepareNotification, type PreparedNotification } from '../schema/notify-identifier.js';
import type { SchemaRegistry } from '../schema/schema-registry.js';
import { formatUtcSeconds } from '../time-format.js';
import { storageFailedError, unknownEventTypeError, validationError } from './error-bodies.js';
import { sendOrderedJson } from './json-reply.js';
import { parseNotificationRequest } from './request-body.js';

export interface NotificationRouteDeps {
  readonly registry: SchemaRegistry;
  readonly backend: NotificationBackend;
  readonly clock: Clock;
  readonly access: StreamAccess;
}

/** `POST /api/v1/notification` (api.md §5): parse → gate → point → validate → topic → store → 200. */
export function registerNotificationRoute(app: FastifyInstance, deps: NotificationRouteDeps): void {
  const { registry, backend, clock, access } = deps;

  app.post('/api/v1/notification', async (request, reply) => {
    const body = parseNotificationRequest('notify', request.body as Buffer | undefined);
    if (registry.rejectsEventType(body.event_type)) {
      throw unknownEventTypeError(body.event_type, registry.eventTypes);
    }

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

    let sequence: number;
    try {
      ({ sequence } = await backend.publish(prepared));
    } catch (error) {
      request.log.error(
        { event_name: 'api.request.processing.failed', error_code: 'NOTIFICATION_STORAGE_FAILED', err: error },
        'Notification storage failed',
      );
      throw storageFailedError(error instanceof Error ? error.message : String(error));
    }
    request.log.info(
      { event_name: 'api.notification.processed', event_type: body.event_type, sequence },
      'Notification stored',
    );
    return sendOrderedJson(reply, 200, {
      status: 'success',
      request_id: request.id,
      processed_at: formatUtcSeconds(clock.now()),
    });
  });
}
