import type { AuthUser } from '../../auth/auth-user.js';
import type { StreamAccess } from '../../auth/stream-access.js';
import { assertNoPointOnNotify, prepareNotification, type PreparedNotification } from '../../schema/notify-identifier.js';
import type { SchemaRegistry } from '../../schema/schema-registry.js';
import { asRefusal } from './error-answers.js';
import { unknownEventTypeError, validationError } from './error-bodies.js';
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

  try {
    assertNoPointOnNotify(body.identifier);
  } catch (error) {
    throw asRefusal(error, 'notify');
  }
  // The write check comes after the point check and before validation (docs/design/rules/operations.md §2.7).
  access.checkWrite(registry.get(body.event_type), authUser);
  try {
    return { eventType: body.event_type, notification: prepareNotification(registry, body) };
  } catch (error) {
    throw asRefusal(error, 'notify');
  }
}
