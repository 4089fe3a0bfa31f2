import { TopicDecodeError, decodeTopic } from '../topic/percent-codec.js';
import { SubscriptionIndex } from '../topic/subscription-index.js';
import type { TopicPattern } from '../topic/topic-pattern.js';
import type { LiveSink, StoredNotification } from './backend.js';

/**
 * The live watchers of a backend and the fan-out of each new notification to them, shared by the
 * in-memory backend (all bases) and every JetStream live feed (one stream). Watchers are indexed
 * by their pattern's tokens (`SubscriptionIndex`), so a notification reaches the watchers whose
 * pattern matches its topic without the others being visited; each of those then runs its own
 * precise predicate (fields against the stored identifier, geometry: D18) inside its sink.
 *
 * Delivery happens inside the caller's synchronous step, so every watcher sees notifications in
 * the order they are dispatched (ascending sequence). The watchers of one notification are fixed
 * when its dispatch starts: one removed meanwhile gets nothing more, one added meanwhile (whose
 * H already counts this notification, D10) gets it from its history, not live as well.
 */
export class LiveDispatch {
  private readonly index = new SubscriptionIndex<LiveSink>();

  get size(): number {
    return this.index.size;
  }

  /** Registers a watcher; the returned function removes it and is true only on its first call. */
  register(pattern: TopicPattern, sink: LiveSink): () => boolean {
    const entry = this.index.add(pattern.tokens, sink);
    return () => entry.remove();
  }

  dispatch(notification: StoredNotification): void {
    if (this.index.size === 0) return;
    let tokens: string[];
    try {
      tokens = decodeTopic(notification.topic);
    } catch (error) {
      if (error instanceof TopicDecodeError) return; // an undecodable topic never matches a watch (docs/design/rules/schema-and-validation.md §7.3)
      throw error;
    }
    for (const entry of this.index.match(tokens)) {
      if (entry.active) entry.value.deliver(notification);
    }
  }

  /** Removes every watcher and returns their sinks in registration order, for the caller to end. */
  removeAll(): LiveSink[] {
    return this.index.clear().map((entry) => entry.value);
  }
}
