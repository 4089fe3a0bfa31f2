import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addLogContext } from '../../logging/logger.js';
import type { AvisoMetrics } from '../../metrics/aviso-metrics.js';
import { displayTopic } from '../../topic/percent-codec.js';
import type { NotificationBackend } from '../../backend/backend.js';
import type { StreamAccess } from '../../auth/stream-access.js';
import type { Clock } from '../../time/clock.js';
import type { SchemaRegistry } from '../../schema/schema-registry.js';
import { formatUtcSeconds } from '../../time/time-format.js';
import { IdempotencyConflictError, storeOnce } from '../../idempotency/store-once.js';
import { notificationStatus, storeFailureAnswer } from './error-answers.js';
import { invalidIdempotencyKeyError } from './error-bodies.js';
import { readIdempotencyKey } from './idempotency-header.js';
import { sendOrderedJson } from './json-reply.js';
import { requestLog } from './request-log.js';
import { parseNotificationRequest } from './request-body.js';
import { ROUTE_DOCS } from './route-docs.js';
import { prepareNotifyItem } from './notify-item.js';

export interface NotificationRouteDeps {
  readonly registry: SchemaRegistry;
  readonly backend: NotificationBackend;
  readonly clock: Clock;
  readonly access: StreamAccess;
  readonly metrics: AvisoMetrics;
}

/** `POST /api/v1/notification` (docs/design/rules/api.md §5): parse → gate → point → validate → topic → store → 200. */
export function registerNotificationRoute(app: FastifyInstance, deps: NotificationRouteDeps): void {
  const { metrics } = deps;

  app.post('/api/v1/notification', { schema: ROUTE_DOCS.notify }, async (request, reply) => {
    // `unknown` until the body parsed and strict mode accepted the event type (docs/design/rules/operations.md §3.3.4).
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

async function notify(
  deps: NotificationRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  labels: { eventType: string },
): Promise<FastifyReply> {
  const { backend, clock } = deps;
  // The key's form is checked before the body: its 400 wins over a body error (docs/api.md "Idempotent notify").
  const idempotency = readIdempotencyKey(request.raw.rawHeaders, request.headers);
  if (idempotency.kind === 'malformed') throw invalidIdempotencyKeyError();
  const body = parseNotificationRequest('notify', request.body as Buffer | undefined);
  const { notification: prepared } = prepareNotifyItem(deps, body, request.authUser, (label) => {
    labels.eventType = label;
    addLogContext(requestLog(request), { event_type: label });
  });
  addLogContext(requestLog(request), { topic: displayTopic(prepared.topic) });
  if (idempotency.kind === 'key') {
    const outcome = await stored(() =>
      storeOnce(backend, clock, { eventType: body.event_type, key: idempotency.key, notification: prepared }).catch((error: unknown) => {
        if (error instanceof IdempotencyConflictError) deps.metrics.idempotency.conflict(labels.eventType, error.reason);
        throw error;
      }),
    );
    if (outcome.replayed) deps.metrics.idempotency.replayed(labels.eventType);
    request.log.info(
      {
        event_name: 'api.notification.processed',
        sequence: outcome.sequence,
        idempotent_replayed: outcome.replayed,
        idempotency_record: outcome.recordHash,
      },
      outcome.replayed ? 'Notification already stored: answered from the first success' : 'Notification stored',
    );
    reply.header('idempotent-replayed', String(outcome.replayed));
    return sendSuccess(reply, request.id, outcome.processedAt);
  }
  const { sequence } = await stored(() => backend.publish(prepared));
  request.log.info({ event_name: 'api.notification.processed', sequence }, 'Notification stored');
  return sendSuccess(reply, request.id, formatUtcSeconds(clock.now()));
}

/** The store step's failures as notify answers them, the key's conflicts among them (error-answers.ts). */
async function stored<T>(store: () => Promise<T>): Promise<T> {
  try {
    return await store();
  } catch (error) {
    throw storeFailureAnswer(error);
  }
}

function sendSuccess(reply: FastifyReply, requestId: string, processedAt: string): FastifyReply {
  return sendOrderedJson(reply, 200, { status: 'success', request_id: requestId, processed_at: processedAt });
}
