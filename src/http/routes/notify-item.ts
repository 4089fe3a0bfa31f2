import { AuthError } from '../../auth/auth-error.js';
import { NotificationTooLargeError } from '../../backend/backend.js';
import type { AuthUser } from '../../auth/auth-user.js';
import type { StreamAccess } from '../../auth/stream-access.js';
import type { NotificationStatus } from '../../metrics/aviso-metrics.js';
import { IdentifierError } from '../../schema/identifier-error.js';
import { assertNoPointOnNotify, prepareNotification, type PreparedNotification } from '../../schema/notify-identifier.js';
import type { SchemaRegistry } from '../../schema/schema-registry.js';
import { ApiError } from './api-error.js';
import {
  authErrorResponse,
  notificationTooLargeError,
  storageFailedError,
  unknownEventTypeError,
  validationError,
} from './error-bodies.js';
import { endPointNotSupported, hasEndPoint } from './request-range.js';
import type { NotificationRequest } from './request-body.js';

/**
 * The steps of one notification after parsing, shared by notify and batch notify (D48) so that an
 * item of a batch is refused exactly as the same notification sent alone: gate → end point →
 * point → write roles → validate and build the topic (docs/design/rules/api.md §5).
 */
export interface NotifyItemDeps {
  readonly registry: SchemaRegistry;
  readonly access: StreamAccess;
}

export interface PreparedItem {
  /** As the client sent it (the idempotency record's scope). */
  readonly eventType: string;
  readonly notification: PreparedNotification;
}

/**
 * Throws the `ApiError` (or `AuthError`) the single endpoint answers. `onGated` hears the event
 * type's metric label as soon as strict mode accepted it, so that a later refusal is counted and
 * logged under it.
 */
export function prepareNotifyItem(
  deps: NotifyItemDeps,
  body: NotificationRequest,
  authUser: AuthUser | undefined,
  onGated: (eventTypeLabel: string) => void,
): PreparedItem {
  const { registry, access } = deps;
  if (registry.rejectsEventType(body.event_type)) {
    throw unknownEventTypeError(body.event_type, registry.eventTypes);
  }
  onGated(registry.eventTypeLabel(body.event_type));
  // An end point belongs to replays (docs/design/rules/reference-0.13.md §1); refused before the point check.
  if (hasEndPoint(body)) throw validationError('notify', endPointNotSupported('/notification'));

  const asValidationError = (error: unknown): unknown =>
    error instanceof IdentifierError ? validationError('notify', error.message, error.details) : error;
  try {
    assertNoPointOnNotify(body.identifier);
  } catch (error) {
    throw asValidationError(error);
  }
  // The write check comes after the point check and before validation (docs/design/rules/operations.md §2.7).
  access.checkWrite(registry.get(body.event_type), authUser);
  try {
    return { eventType: body.event_type, notification: prepareNotification(registry, body) };
  } catch (error) {
    throw asValidationError(error);
  }
}

/** What a refused notify answers: an `AuthError` as the error handler renders it; other errors as they are. */
export function asAnswer(error: unknown): unknown {
  return error instanceof AuthError ? authErrorResponse(error) : error;
}

/** Strict-mode and stream-level auth refusals are `rejected`; everything else that fails is `error`. */
export function notificationStatus(error: unknown): NotificationStatus {
  const answer = asAnswer(error);
  const code = answer instanceof ApiError ? answer.body.code : undefined;
  return code === 'UNKNOWN_EVENT_TYPE' ||
    code === 'UNAUTHORIZED' ||
    code === 'FORBIDDEN' ||
    code === 'IDEMPOTENCY_KEY_REUSED' ||
    code === 'IDEMPOTENCY_KEY_IN_PROGRESS'
    ? 'rejected'
    : 'error';
}

/** A store failure as notify answers it: 413 for a notification too large, else 500; batch notify answers each of its items so. */
export function storeFailureAnswer(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof NotificationTooLargeError) return notificationTooLargeError(error.message);
  return storageFailedError(error instanceof Error ? error.message : String(error));
}
