import type { LiveSink, StoredNotification } from '../backend/backend.js';
import type { StreamDependencies } from './stream-dependencies.js';
import type { StreamOutput } from './stream-output.js';
import type { SlowConsumerTrigger, StreamRequest } from './stream-request.js';

/** What the live phase needs of its stream session. */
/**
 * The stream a live phase belongs to. The session itself, through methods of its class: every
 * delivery calls these, and calls through one class's methods stay cheap where per-session
 * closures (one function per stream) would make each call site see thousands of targets.
 */
export interface LiveStreamOwner {
  /** The stream's output, once the response began. */
  currentOutput(): StreamOutput | undefined;
  isClosed(): boolean;
  closeSlowConsumer(trigger: SlowConsumerTrigger): void;
  /** The live subscription cannot go on (D23), with the error when it failed. */
  liveEnded(error?: Error): void;
}

/**
 * A watch's live notifications: the sink its subscription delivers into, holding back what
 * arrives before the live phase (during the replay, or before the opening frame) and sending it,
 * in order, when the phase begins.
 */
export class LivePhase {
  /** The sink the backend's subscription delivers into. */
  readonly sink: LiveSink = {
    deliver: (notification) => this.onNotification(notification),
    end: (error) => this.owner.liveEnded(error),
  };
  private live = false;
  private backlog: StoredNotification[] = [];
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
  ) {}

  /**
   * The history is delivered: what was held back goes out, then each notification as it comes.
   * False when the stream ended on the way (a slow consumer).
   */
  enter(): boolean {
    this.live = true;
    const waiting = this.backlog;
    this.backlog = [];
    for (const notification of waiting) {
      if (!this.deliver(notification)) return false;
    }
    return true;
  }

  /** Lets go of what was held back (the stream is over). */
  clear(): void {
    this.backlog = [];
  }

  /** Runs inside the publisher's call: it must neither block nor throw (D9). */
  private onNotification(notification: StoredNotification): void {
    try {
      this.accept(notification);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.logger.error({ event_name: 'stream.live.delivery.failed', error: message }, 'Live delivery failed');
      this.owner.liveEnded(error instanceof Error ? error : new Error(message));
    }
  }

  private accept(notification: StoredNotification): void {
    if (this.owner.isClosed() || notification.sequence < this.floor || !this.request.predicate(notification)) return;
    if (this.live) {
      this.deliver(notification);
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
  private deliver(notification: StoredNotification): boolean {
    if (!this.owner.currentOutput()?.sendNotification('live-notification', notification)) return false;
    this.deps.deliveryLag(notification.timestampNs);
    return true;
  }
}
