import type { StoredNotification } from '../notification/stored-notification.js';
import type { Constraint } from '../schema/handlers/field-handler.js';
import type { StoredIdentityReader } from '../schema/stored-identifier.js';
import type { TopicPattern } from '../topic/topic-pattern.js';
import { compileSpatialFilter, type SpatialFilter } from './spatial-filter.js';

/** One identifier filter of a watch/replay request: an exact canonical value or a constraint. */
export type FieldFilter =
  | { readonly field: string; readonly kind: 'exact'; readonly value: string }
  | {
      readonly field: string;
      readonly kind: 'constraint';
      readonly constraint: Constraint;
      /** The constraint object as canonical JSON: two filters with the same source select the same. */
      readonly source: string;
    };

/** What a validated watch/replay request selects (docs/design/rules/schema-and-validation.md §8). */
export interface WatchSelection {
  readonly eventType: string;
  /** Coarse backend filter and exact token match (stages 1–2). */
  readonly pattern: TopicPattern;
  /** Every declared field the request constrained, in key_order or not (D18). */
  readonly fieldFilters: readonly FieldFilter[];
  readonly spatial: SpatialFilter | undefined;
}

export type NotificationPredicate = (notification: StoredNotification) => boolean;

/**
 * Combines the stages into one predicate (docs/design/architecture.md "WatchFilter"): exact topic pattern, then
 * every field filter against the stored canonical identifier (D7, D18), then geometry. Built once
 * per request; everything it reads from a notification is cached per notification.
 */
export function compileWatchFilter(selection: WatchSelection, identities: StoredIdentityReader): NotificationPredicate {
  const { pattern, fieldFilters } = selection;
  const spatial = selection.spatial ? compileSpatialFilter(selection.spatial) : undefined;
  return (notification) => {
    const identity = identities.read(notification);
    if (!identity || !pattern.matchesTokens(identity.tokens)) return false;
    if (fieldFilters.length > 0) {
      const { identifier } = identity;
      for (const filter of fieldFilters) {
        const value = identifier[filter.field];
        if (typeof value !== 'string') return false;
        if (filter.kind === 'exact' ? value !== filter.value : !filter.constraint.matches(value)) return false;
      }
    }
    return spatial ? spatial(notification) : true;
  };
}
