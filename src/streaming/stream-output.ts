import type { StoredNotification } from '../backend/backend.js';
import { displayTopic } from '../topic/percent-codec.js';
import { CloudEventRenderError, type CloudEventRenderer, type FrameStyle } from './cloudevent.js';
import { cloudEventCreationFailed, positionBlock, renderFrame, type Frame, type StreamIdentity } from './frames.js';
import type { Refusal, SseConnection } from './sse-connection.js';
import type { StreamTelemetry } from './stream-request.js';

/** What the output needs to know of its stream. */
export interface StreamOutputOptions {
  readonly identity: StreamIdentity;
  readonly renderer: CloudEventRenderer;
  /** GET streams' frames carry `id:` lines (read once per notification frame, so kept). */
  readonly style: FrameStyle;
  /** Set on a GET stream: the event type its `id:` lines name. */
  readonly browser: { readonly eventType: string } | undefined;
  readonly telemetry: StreamTelemetry;
  /** A frame did not fit the stream's buffer: the stream is ended as a slow consumer (D9). */
  readonly overflowed: (trigger: Refusal) => void;
}

/**
 * Frames onto one stream's bounded connection, each counted once it was queued. A frame the
 * connection refuses ends the stream instead of buffering more (D9); every answer `false` means the
 * stream is over. Stopped when the stream is released: nothing is queued after that.
 */
export class StreamOutput {
  private stopped = false;
  /** Notifications queued for the client, and the sequence of the last one (the admin list, D49). */
  delivered = 0;
  lastSequence: number | null = null;

  constructor(
    readonly connection: SseConnection,
    private readonly options: StreamOutputOptions,
  ) {}

  get style(): FrameStyle {
    return this.options.style;
  }

  stop(): void {
    this.stopped = true;
  }

  send(frame: Frame): boolean {
    if (this.stopped) return false;
    if (this.connection.send(renderFrame(frame))) {
      this.options.telemetry.frameSent(frame.kind);
      return true;
    }
    return this.refused();
  }

  /** Replay frames of one batch, queued together; `lastSequence` is the last one's notification's. */
  sendReplayFrames(frames: readonly Buffer[], lastSequence: number): boolean {
    if (this.stopped) return false;
    if (this.connection.sendAll(frames)) {
      const { telemetry } = this.options;
      for (let i = 0; i < frames.length; i++) telemetry.frameSent('notification');
      this.delivered += frames.length;
      if (frames.length > 0) this.lastSequence = lastSequence;
      return true;
    }
    return this.refused();
  }

  /** A GET stream's `id:`-only block; false when the stream ended instead (a slow consumer). */
  markPosition(sequence: bigint | number): boolean {
    const { browser } = this.options;
    if (!browser) return true;
    const block = positionBlock(browser.eventType, sequence);
    if (block === '') return true;
    if (this.stopped) return false;
    return this.connection.send(block) || this.refused();
  }

  /** Renders and queues one notification; a rendering failure is a non-fatal error frame (D23). */
  sendNotification(event: 'live-notification' | 'replay', notification: StoredNotification): boolean {
    let bytes: Buffer;
    try {
      bytes = this.options.renderer.frameBytes(notification, event, this.options.style);
    } catch (error) {
      if (!(error instanceof CloudEventRenderError)) throw error;
      return this.sendRenderFailure(notification, error);
    }
    if (!this.sendNotificationBytes(bytes)) return false;
    this.delivered++;
    this.lastSequence = notification.sequence;
    return true;
  }

  sendRenderFailure(notification: StoredNotification, error: CloudEventRenderError): boolean {
    return this.send(
      cloudEventCreationFailed(this.options.identity, {
        sequence: notification.sequence,
        notificationTopic: displayTopic(notification.topic),
        message: error.message,
      }),
    );
  }

  /**
   * What `send` does for a notification frame's bytes, without the frame object: this runs once per
   * watcher for every notification a fan-out delivers.
   */
  private sendNotificationBytes(bytes: Buffer): boolean {
    if (this.stopped) return false;
    if (this.connection.send(bytes)) {
      this.options.telemetry.frameSent('notification');
      return true;
    }
    return this.refused();
  }

  /** A refused frame: the stream is ended as a slow consumer, unless it was over already. */
  private refused(): false {
    const { connection } = this;
    if (connection.isOpen) this.options.overflowed(connection.lastRefusal ?? 'buffered_events');
    return false;
  }
}
