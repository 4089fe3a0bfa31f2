import type { LiveSink, StoredNotification } from '../backend/backend.js';
import type { StreamDependencies } from './stream-dependencies.js';
import type { StreamOutput } from './stream-output.js';
import type { SlowConsumerTrigger, StreamRequest } from './stream-request.js';

/** What the live phase needs of its stream session. */
export interface LivePhaseContext {
  readonly request: StreamRequest;
  readonly deps: Pick<StreamDependencies, 'logger' | 'settings' | 'deliveryLag'>;
  /** The stream's output, once the response began. */
  output(): StreamOutput | undefined;
  isClosed(): boolean;
  closeSlowConsumer(trigger: SlowConsumerTrigger): void;
  /** The live subscription cannot go on (D23), with the error when it failed. */
  ended(error?: Error): void;
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
    end: (error) => this.context.ended(error),
  };
  private live = false;
  private backlog: StoredNotification[] = [];
  /**
   * Live notifications below this sequence were already the client's: its `from_id` said so. A
   * watch's H can trail the store (a JetStream feed behind its stream), and what lies between H and
   * `from_id` must not reach the client twice.
   */
  floor = 0;

  constructor(private readonly context: LivePhaseContext) {}

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
      this.context.deps.logger.error({ event_name: 'stream.live.delivery.failed', error: message }, 'Live delivery failed');
      this.context.ended(error instanceof Error ? error : new Error(message));
    }
  }

  private accept(notification: StoredNotification): void {
    if (this.context.isClosed() || notification.sequence < this.floor || !this.context.request.predicate(notification)) return;
    if (this.live) {
      this.deliver(notification);
      return;
    }
    // A backlog as long as the stream's queue is a client that could not keep up either (D9).
    if (this.backlog.length >= this.context.deps.settings.maxBufferedEvents) {
      this.context.closeSlowConsumer('buffered_events');
      return;
    }
    this.backlog.push(notification);
  }

  /** A live notification onto the stream, its lag from acceptance recorded (docs/metrics.md). */
  private deliver(notification: StoredNotification): boolean {
    if (!this.context.output()?.sendNotification('live-notification', notification)) return false;
    this.context.deps.deliveryLag(notification.timestampNs);
    return true;
  }
}
