import { NotificationTooLargeError, type BatchPublishOutcome, type NotificationToStore, type PublishResult } from './backend.js';

/**
 * A batch's publishes in waves (D48): each wave is the longest run of the remaining notifications
 * whose topics differ, all sent at once, their acknowledgements then awaited in order. A topic
 * already in the wave starts the next one, because every publish on a topic names the sequence of
 * the one before it (topic-predecessors.ts, D42) and so cannot be sent before that one's ack; and
 * the whole next wave waits with it, so that no notification is sent before one that precedes it
 * in the batch. A failure other than "too large" (which is the notification's own) ends the batch:
 * the waves after it are not sent, so what is stored is what the answer says was stored.
 */
export async function publishInWaves(
  notifications: readonly NotificationToStore[],
  /** `index`: the notification's position in the batch. */
  publishOne: (notification: NotificationToStore, index: number) => Promise<PublishResult>,
  /**
   * Whether a notification's publish names its topic's predecessor; one that does not (a stream
   * that keeps every notification of a topic) may go out beside others of its topic.
   */
  chainedByTopic: (notification: NotificationToStore) => boolean = () => true,
): Promise<BatchPublishOutcome[]> {
  const outcomes: BatchPublishOutcome[] = [];
  let stoppedBy: { error: unknown } | undefined;
  let next = 0;
  while (next < notifications.length) {
    const waveEnd = endOfWave(notifications, next, chainedByTopic);
    if (stoppedBy) {
      for (let i = next; i < waveEnd; i++) outcomes.push({ stored: false, error: stoppedBy.error, sent: false });
      next = waveEnd;
      continue;
    }
    // Started before any is awaited: the sends leave in batch order.
    const sends = notifications.slice(next, waveEnd).map((notification, offset) => settle(publishOne(notification, next + offset)));
    for (const send of sends) {
      const outcome = await send;
      outcomes.push(outcome);
      if (!outcome.stored && !(outcome.error instanceof NotificationTooLargeError) && !stoppedBy) stoppedBy = { error: outcome.error };
    }
    next = waveEnd;
  }
  return outcomes;
}

/** The index after the wave that starts at `start`: where a chained topic repeats, or the end. */
function endOfWave(
  notifications: readonly NotificationToStore[],
  start: number,
  chainedByTopic: (notification: NotificationToStore) => boolean,
): number {
  const topics = new Set<string>();
  let end = start;
  for (; end < notifications.length; end++) {
    const notification = notifications[end] as NotificationToStore;
    if (!chainedByTopic(notification)) continue;
    if (topics.has(notification.topic)) break;
    topics.add(notification.topic);
  }
  return end;
}

async function settle(publish: Promise<PublishResult>): Promise<BatchPublishOutcome> {
  try {
    return { stored: true, ...(await publish) };
  } catch (error) {
    return { stored: false, error, sent: true };
  }
}
