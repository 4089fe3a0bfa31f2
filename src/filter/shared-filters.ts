import type { StoredNotification } from '../notification/stored-notification.js';
import type { EventSchema } from '../schema/event-schema.js';
import type { SpatialFilter } from './spatial-filter.js';
import type { NotificationPredicate, WatchSelection } from './watch-filter.js';

/**
 * One evaluation per notification for every stream with the same filter (docs/architecture.md
 * "Live dispatch"). Streams that select the same — the same event type, topic pattern, field
 * filters and geometry, under the same schema — share one compiled predicate, which remembers its
 * answer for the last notification it saw: a fan-out hands one notification object to every
 * watcher in turn, so a thousand watchers of ten distinct filters cost ten evaluations.
 *
 * A schema replaced by a reload is a different object, so streams opened before and after it never
 * share (their filters may differ although their requests read the same). A shared predicate lives
 * as long as one of its streams does.
 */
export class SharedFilters {
  private readonly byScope = new WeakMap<object, Map<string, SharedEntry>>();
  /** The scope of schema-less event types, whose filters depend on nothing but the request. */
  private readonly generic = {};

  /** The predicate for `selection`, shared with every open stream selecting the same; `release` once, when the stream ends. */
  acquire(
    selection: WatchSelection,
    schema: EventSchema | undefined,
    compile: () => NotificationPredicate,
  ): { readonly predicate: NotificationPredicate; readonly release: () => void } {
    const scope = schema ?? this.generic;
    let entries = this.byScope.get(scope);
    if (!entries) {
      entries = new Map();
      this.byScope.set(scope, entries);
    }
    const key = selectionKey(selection);
    let entry = entries.get(key);
    if (!entry) {
      entry = { predicate: rememberingLast(compile()), streams: 0 };
      entries.set(key, entry);
    }
    entry.streams++;
    const shared = entry;
    const held = entries;
    let released = false;
    return {
      predicate: shared.predicate,
      release: () => {
        if (released) return;
        released = true;
        if (--shared.streams === 0 && held.get(key) === shared) held.delete(key);
      },
    };
  }

  /** Distinct predicates held for open streams under `schema` (tests). */
  sizeOf(schema: EventSchema | undefined): number {
    return this.byScope.get(schema ?? this.generic)?.size ?? 0;
  }
}

interface SharedEntry {
  readonly predicate: NotificationPredicate;
  streams: number;
}

/** The predicate's answer for the notification it last saw, kept (it is pure in the notification). */
function rememberingLast(predicate: NotificationPredicate): NotificationPredicate {
  let last: StoredNotification | undefined;
  let answer = false;
  return (notification) => {
    if (notification === last) return answer;
    const result = predicate(notification);
    last = notification;
    answer = result;
    return result;
  };
}

/** Everything a selection's predicate reads, as one string. */
export function selectionKey(selection: WatchSelection): string {
  const fields = selection.fieldFilters.map((filter) =>
    filter.kind === 'exact' ? [filter.field, 'exact', filter.value] : [filter.field, 'constraint', filter.source],
  );
  return JSON.stringify([selection.eventType, selection.pattern.tokens, fields, spatialKey(selection.spatial)]);
}

function spatialKey(spatial: SpatialFilter | undefined): unknown {
  if (!spatial) return null;
  return spatial.kind === 'point_in_polygon' ? [spatial.kind, spatial.point] : [spatial.kind, spatial.polygon.ring];
}
