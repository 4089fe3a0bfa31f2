import type { LiveSink, StoredNotification } from '../backend/backend.js';
import type { StreamDependencies } from './stream-dependencies.js';
import type { StreamOutput } from './stream-output.js';
import type { SlowConsumerTrigger, StreamRequest } from './stream-request.js';

/** What the live phase asks of its stream session, on the rare paths that end the stream. */
export interface LiveStreamOwner {
  closeSlowConsumer(trigger: SlowConsumerTrigger): void;
  /** The live subscription cannot go on (D23), with the error when it failed. */
  liveEnded(error?: Error): void;
}

/**
 * A watch's live notifications: the sink its subscription delivers into, holding back what
 * arrives before the live phase (during the replay, or before the opening frame) and sending it,
 * in order, when the phase begins.
 *
 * Every notification a fan-out delivers runs `deliver` once per watcher, so the path reads this
 * object's own fields (the output once live, whether the stream stopped) rather than asking the
 * session: each call more on it costs V8's inlining budget for the whole fan-out loop, which
 * showed as a tenth more CPU per delivery at 10,000 watchers (bench/HISTORY.md "The live phase's fan-out cost").
 */
export class LivePhase implements LiveSink {
  /** Where live notifications go once the phase began; undefined while they are held back. */
  private output: StreamOutput | undefined;
  private stopped = false;
  private backlog: StoredNotification[] = [];
  private readonly deliveryLag: (acceptedAtNs: bigint) => void;
  /**
   * Live notifications below this sequence were already the client's: its `from_id` said so. A
   * watch's H can trail the store (a JetStream feed behind its stream), and what lies between H and
   * `from_id` must not reach the client twice.
   */
  floor = 0;

  constructor(
    private readonly owner: LiveStreamOwner,
    private readonly request: StreamRequest,
    private readonly deps: Pick<StreamDependencies, 'logger' | 'settings' | 'deliveryLag'>,
  ) {
    this.deliveryLag = deps.deliveryLag;
  }

  /**
   * The history is delivered: what was held back goes out on `output`, then each notification as
   * it comes. False when the stream ended on the way (a slow consumer).
   */
  enter(output: StreamOutput): boolean {
    this.output = output;
    const waiting = this.backlog;
    this.backlog = [];
    for (const notification of waiting) {
      if (!this.send(output, notification)) return false;
    }
    return true;
  }

  /** The stream is over: nothing more is delivered, and what was held back is let go. */
  stop(): void {
    this.stopped = true;
    this.backlog = [];
  }

  /** Runs inside the publisher's call: it must neither block nor throw (D9). */
  deliver(notification: StoredNotification): void {
    try {
      this.accept(notification);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.logger.error({ event_name: 'stream.live.delivery.failed', error: message }, 'Live delivery failed');
      this.owner.liveEnded(error instanceof Error ? error : new Error(message));
    }
  }

  end(error?: Error): void {
    this.owner.liveEnded(error);
  }

  private accept(notification: StoredNotification): void {
    if (this.stopped || notification.sequence < this.floor || !this.request.predicate(notification)) return;
    const { output } = this;
    if (output !== undefined) {
      this.send(output, notification);
      return;
    }
    // A backlog as long as the stream's queue is a client that could not keep up either (D9).
    if (this.backlog.length >= this.deps.settings.maxBufferedEvents) {
      this.owner.closeSlowConsumer('buffered_events');
      return;
    }
    this.backlog.push(notification);
  }

  /** A live notification onto the stream, its lag from acceptance recorded (docs/metrics.md). */
  private send(output: StreamOutput, notification: StoredNotification): boolean {
    if (!output.sendNotification('live-notification', notification)) return false;
    this.deliveryLag(notification.timestampNs);
    return true;
  }
}
