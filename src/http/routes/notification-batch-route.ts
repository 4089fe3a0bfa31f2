import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BatchPublishOutcome } from '../../backend/backend.js';
import type { NotificationEndpointConfig } from '../../config/model.js';
import { canonicalJson } from '../../json/canonical-json.js';
import type { BatchStatus } from '../../metrics/aviso-metrics.js';
import { formatUtcSeconds } from '../../time/time-format.js';
import type { ApiError } from './api-error.js';
import { readBatchBody, type BatchItems } from './batch-body.js';
import { idempotencyConflictAnswer, notificationStatus, refusalOf, storeFailureAnswer } from './error-answers.js';
import { invalidIdempotencyKeyError, payloadTooLargeError } from './error-bodies.js';
import { readIdempotencyKey, type IdempotencyKeyHeader } from './idempotency-header.js';
import { storeManyOnce, type KeyedItem, type StoredManyOutcome } from '../../idempotency/store-many-once.js';
import type { NotificationRouteDeps } from './notification-route.js';
import { prepareNotifyItem } from './notify-item.js';
import { ALLOWED_REQUEST_FIELDS, parseRequestValue } from './request-body.js';
import { ROUTE_DOCS } from './route-docs.js';

export interface NotificationBatchRouteDeps extends NotificationRouteDeps {
  readonly limits: NotificationEndpointConfig;
  /** `application.max_body_bytes`: each item is held to it as if it were sent alone. */
  readonly maxBodyBytes: number;
}

/** One item's end: stored, or the single endpoint's refusal of it. `eventType` is its metric label. */
type ItemOutcome = { readonly index: number; readonly eventType: string } & (
  | {
      readonly stored: true;
      /** An `Idempotency-Key`'s item: when its first success was (absent: now). */
      readonly processedAt?: string;
      /** Answered from the first success of its record: nothing stored now. */
      readonly replayed?: boolean;
    }
  | { readonly stored: false; readonly answer: ApiError }
);

/** A valid item, ready to store. */
interface ValidItem extends KeyedItem {
  /** The metric label of its event type. */
  readonly label: string;
}

/**
 * `POST /api/v1/notification/batch` (docs/api.md#batch-notify-decision-d48, D48): the body read as a batch,
 * then each item through the single endpoint's steps, the valid ones stored in order with one
 * `publishMany`, and one answer listing every item's outcome in request order.
 */
export function registerNotificationBatchRoute(app: FastifyInstance, deps: NotificationBatchRouteDeps): void {
  const { metrics, limits } = deps;
  app.post('/api/v1/notification/batch', { schema: ROUTE_DOCS.notifyBatch, bodyLimit: limits.max_batch_bytes }, async (request, reply) => {
    let batch: BatchItems;
    let idempotency: IdempotencyKeyHeader;
    try {
      // The key's form before the body, as on the single endpoint (docs/api.md "Idempotent notify").
      idempotency = readIdempotencyKey(request.raw.rawHeaders, request.headers);
      if (idempotency.kind === 'malformed') throw invalidIdempotencyKeyError();
      batch = readBatchBody(request.body as Buffer | undefined, request.rawContentType, limits.max_batch_items);
    } catch (error) {
      metrics.notificationBatch('refused');
      throw error;
    }
    const outcomes: (ItemOutcome | undefined)[] = new Array<ItemOutcome | undefined>(batch.items.length);
    const valid = judgeEach(deps, request, batch, outcomes);
    if (idempotency.kind === 'key') {
      await storeKeyed(deps, idempotency.key, valid, outcomes);
      const stored = outcomes.filter((outcome) => outcome?.stored === true);
      reply.header(
        'idempotent-replayed',
        String(stored.length > 0 && stored.every((outcome) => outcome?.stored === true && outcome.replayed === true)),
      );
    } else {
      await store(deps, valid, outcomes);
    }
    return answer(deps, request, reply, outcomes as ItemOutcome[]);
  });
}

/** Each item through the single endpoint's steps; the refused ones get their outcome now. */
function judgeEach(
  deps: NotificationBatchRouteDeps,
  request: FastifyRequest,
  batch: BatchItems,
  outcomes: (ItemOutcome | undefined)[],
): ValidItem[] {
  const valid: ValidItem[] = [];
  batch.items.forEach((item, index) => {
    let label = 'unknown';
    try {
      // Sent alone, a notification over the body limit would be refused before anything else.
      if ((batch.bytes[index] ?? 0) > deps.maxBodyBytes) throw payloadTooLargeError(deps.maxBodyBytes);
      const body = parseRequestValue('notify', item, ALLOWED_REQUEST_FIELDS);
      const prepared = prepareNotifyItem(deps, body, request.authUser, (gated) => (label = gated));
      valid.push({ index, label, eventType: prepared.eventType, notification: prepared.notification });
    } catch (error) {
      const refusal = refusalOf(error);
      // Anything but a refusal is a bug: the error handler answers it 500, and nothing was stored.
      if (!refusal) throw error;
      deps.metrics.notification(label, notificationStatus(error));
      outcomes[index] = { index, eventType: label, stored: false, answer: refusal };
    }
  });
  return valid;
}

/** The valid items in order, with one `publishMany`. */
async function store(deps: NotificationBatchRouteDeps, valid: readonly ValidItem[], outcomes: (ItemOutcome | undefined)[]): Promise<void> {
  if (valid.length === 0) return;
  const published: readonly BatchPublishOutcome[] = await deps.backend.publishMany(valid.map((item) => item.notification));
  published.forEach((outcome, position) => {
    const { index, label } = valid[position] as ValidItem;
    if (outcome.stored) {
      deps.metrics.notification(label, 'success');
      outcomes[index] = { index, eventType: label, stored: true };
    } else {
      deps.metrics.notification(label, 'error');
      outcomes[index] = { index, eventType: label, stored: false, answer: storeFailureAnswer(outcome.error) };
    }
  });
}

/** The valid items under the batch's `Idempotency-Key`, each item under its own record (store-many-once.ts). */
async function storeKeyed(
  deps: NotificationBatchRouteDeps,
  key: string,
  valid: readonly ValidItem[],
  outcomes: (ItemOutcome | undefined)[],
): Promise<void> {
  if (valid.length === 0) return;
  let stored: StoredManyOutcome[];
  try {
    stored = await storeManyOnce(deps.backend, deps.clock, key, valid);
  } catch (error) {
    // The record store failed (NATS away while claiming or recording): as notify answers that.
    stored = valid.map(() => ({ kind: 'failed' as const, error }));
  }
  stored.forEach((outcome, position) => {
    const { index, label } = valid[position] as ValidItem;
    if (outcome.kind === 'stored') {
      if (outcome.replayed) deps.metrics.idempotency.replayed(label);
      deps.metrics.notification(label, 'success');
      outcomes[index] = { index, eventType: label, stored: true, processedAt: outcome.processedAt, replayed: outcome.replayed };
    } else if (outcome.kind === 'conflict') {
      deps.metrics.idempotency.conflict(label, outcome.reason);
      deps.metrics.notification(label, 'rejected');
      outcomes[index] = { index, eventType: label, stored: false, answer: idempotencyConflictAnswer(outcome.reason) };
    } else {
      deps.metrics.notification(label, 'error');
      outcomes[index] = { index, eventType: label, stored: false, answer: storeFailureAnswer(outcome.error) };
    }
  });
}

function answer(
  deps: NotificationBatchRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  outcomes: readonly ItemOutcome[],
): FastifyReply {
  const processedAt = formatUtcSeconds(deps.clock.now());
  const requestId = request.id;
  let stored = 0;
  let replayed = 0;
  let serverFailure: number | undefined;
  const results: string[] = [];
  for (const outcome of outcomes) {
    if (outcome.stored) {
      stored++;
      if (outcome.replayed === true) replayed++;
      results.push(
        JSON.stringify({
          index: outcome.index,
          status: 'success',
          request_id: requestId,
          processed_at: outcome.processedAt ?? processedAt,
        }),
      );
      continue;
    }
    const { answer: refusal } = outcome;
    if (refusal.statusCode >= 500) serverFailure ??= refusal.statusCode;
    logItemFailure(request, outcome.index, outcome.eventType, refusal);
    // The single endpoint's error body (keys sorted, D1), its index first.
    results.push(`{"index":${outcome.index},${canonicalJson({ ...refusal.body, request_id: requestId }).slice(1)}`);
  }
  const failed = outcomes.length - stored;
  const status: BatchStatus = failed === 0 ? 'success' : stored > 0 ? 'partial' : 'error';
  const httpStatus = status === 'success' ? 200 : status === 'partial' ? 207 : (serverFailure ?? 400);
  deps.metrics.notificationBatch(status);
  request.log.info(
    {
      event_name: 'api.notification.batch.processed',
      outcome: status,
      items: outcomes.length,
      stored,
      failed,
      status_code: httpStatus,
      ...(reply.hasHeader('idempotent-replayed') ? { idempotent_replayed: replayed } : {}),
    },
    `Batch of ${outcomes.length} notifications: ${stored} stored, ${failed} failed`,
  );
  const head = JSON.stringify({ request_id: requestId, status, stored, failed });
  return reply
    .code(httpStatus)
    .type('application/json')
    .send(`${head.slice(0, -1)},"results":[${results.join(',')}]}`);
}

/** A refused item (the client's, rate limited as other client errors, D45) or one the store failed. */
function logItemFailure(request: FastifyRequest, index: number, eventType: string, refusal: ApiError): void {
  const { code, message, details } = refusal.body;
  const fields = {
    index,
    event_type: eventType,
    error_code: code,
    error_message: message,
    ...(typeof details === 'string' && details !== message ? { details } : {}),
  };
  if (refusal.statusCode >= 500) {
    request.log.error({ event_name: 'api.notification.batch.item.failed', ...fields }, 'Batch item not stored');
  } else {
    request.log.warn({ event_name: 'api.notification.batch.item.refused', ...fields }, 'Batch item refused');
  }
}
