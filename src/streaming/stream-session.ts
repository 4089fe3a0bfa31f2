import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type {
  LiveSink,
  LiveSubscription,
  NotificationBackend,
  ReplayCursor,
  StartCursor,
  StoredNotification,
} from '../backend/backend.js';
import { setTimeoutAt, type Clock, type TimerHandle } from '../clock.js';
import type { DueQueue } from './due-queue.js';
import { displayTopic } from '../topic/percent-codec.js';
import { CloudEventRenderError, type CloudEventRenderer, type FrameStyle } from './cloudevent.js';
import {
  cloudEventCreationFailed,
  connectionClosing,
  connectionEstablished,
  heartbeat,
  positionBlock,
  renderFrame,
  replayCompleted,
  replayLimitReached,
  replayStarted,
  retryBlock,
  streamProcessingFailed,
  type CloseReason,
  type Frame,
  type StreamEnding,
  type StreamIdentity,
} from './frames.js';
import { SseConnection, sseHeaders, type ConnectionGuards } from './sse-connection.js';
import { resolveReplayEnd } from './end-point.js';
import { formatFromDateEcho, type StartCursorRequest } from './start-cursor.js';
import type { SlowConsumerTrigger, StreamRequest, StreamSettings } from './stream-request.js';
import { deliverHistory, type ReplayBatchHost, type ReplayBatchOptions } from './replay-batches.js';

export interface StreamDependencies {
  readonly backend: NotificationBackend;
  readonly renderer: CloudEventRenderer;
  readonly clock: Clock;
  readonly settings: StreamSettings;
  readonly logger: Logger;
  /** The process's byte budget and stall watchdog, shared by every stream. */
  readonly guards: ConnectionGuards;
  /** The process's heartbeat and maximum-duration queues (stream-supervisor.ts). */
  readonly schedule: StreamSchedule;
  /** Records a live delivery's lag from its acceptance (storage time, ns) to now (`aviso_delivery_lag_seconds`). */
  readonly deliveryLag: (acceptedAtNs: bigint) => void;
  /** Called once when the stream is over, whatever ended it. */
  readonly onReleased: (session: StreamSession) => void;
}

type Phase = 'setup' | 'replay' | 'live' | 'closed';

/** One queue for every stream's heartbeats, one for every watch's maximum duration. */
export interface StreamSchedule {
  readonly heartbeats: DueQueue<StreamSession>;
  readonly lifetimes: DueQueue<StreamSession>;
}

/**
 * One watch or replay stream from setup to release: the lifecycle of streaming.md §7–§12 in one
 * place. Setup happens before any byte is sent; afterwards every frame goes through the bounded
 * connection, and every way a stream ends (completion, cap, failure, max duration, shutdown, slow
 * consumer, expired credentials, client gone) releases the subscription and timers exactly once.
 */
export class StreamSession {
  private phase: Phase = 'setup';
  private subscription: LiveSubscription | undefined;
  private historyBound = 0;
  /** The last sequence the replay phase reads: H, or the resolved end point (D25). */
  private replayEnd = 0;
  /** Live notifications that arrived before the live phase (during replay, or before the opening frame). */
  private backlog: StoredNotification[] = [];
  private connection: SseConnection | undefined;
  private readonly timers: TimerHandle[] = [];
  private readonly identity: StreamIdentity;
  /** GET streams' frames carry `id:` lines (read once per notification frame, so kept). */
  private readonly frameStyle: FrameStyle;
  /** Set when the live subscription ended before the response began. */
  private endedBeforeBegin: { readonly error?: Error } | undefined;

  constructor(
    private readonly request: StreamRequest,
    private readonly deps: StreamDependencies,
  ) {
    this.identity = { topic: request.selection.pattern.display, requestId: request.requestId };
    this.frameStyle = request.browser ? 'with-id' : 'plain';
  }

  get topic(): string {
    return this.identity.topic;
  }

  /** The last sequence the stream's replay phase reads, known once `setup` resolved. */
  get endSequence(): number {
    return this.replayEnd;
  }


  /**
   * Backend setup (§2.2 step 7): a watch subscribes and takes H from the subscription in the same
   * step; a replay only captures H. The replay's end is resolved right after, against that H.
   * Rejects when the backend fails; nothing has been sent then.
   */
  async setup(): Promise<void> {
    const { backend } = this.deps;
    const { pattern } = this.request.selection;
    if (this.request.endpoint === 'watch') {
      const sink: LiveSink = {
        deliver: (notification) => this.onLiveNotification(notification),
        end: (error) => this.onLiveEnded(error),
      };
      this.subscription = await backend.subscribe(pattern, sink);
      this.historyBound = this.subscription.historyBound;
    } else {
      this.historyBound = await backend.captureHistoryBound(pattern);
    }
    this.replayEnd = await resolveReplayEnd(backend, pattern, this.request.end, this.historyBound);
  }

  /** Abandons a stream whose setup succeeded but that will not be started. */
  discard(): void {
    this.release();
  }

  /**
   * Starts the response: headers and the opening frame at once, then heartbeats and the phases.
   * `corsHeaders` replace the default `Access-Control-Allow-Origin: *` when CORS applies.
   */
  begin(response: ServerResponse, corsHeaders?: Readonly<Record<string, string>>): void {
    const { settings, clock } = this.deps;
    const connection = new SseConnection(
      response,
      { maxQueuedFrames: settings.maxBufferedEvents, maxHeldBytes: settings.maxBufferedBytes },
      this.deps.guards,
      {
        stalled: (stalledMs) => this.closeSlowConsumer('stalled', stalledMs),
        reset: () => this.onReset(),
      },
    );
    this.connection = connection;
    connection.onOver(() => this.release());
    connection.open(sseHeaders(this.request.requestId, corsHeaders));
    if (this.request.browser) connection.send(retryBlock());

    const { cursor, end } = this.request;
    if (cursor.kind === 'live') {
      this.send(connectionEstablished(this.identity, clock.now(), settings.connectionMaxDurationSec));
    } else {
      this.send(
        replayStarted(this.identity, clock.now(), {
          batchSize: settings.replayBatchSize,
          fromSequence: cursor.kind === 'sequence' ? cursor.requested : null,
          fromDate: cursor.kind === 'date' ? formatFromDateEcho(cursor.atNs) : null,
          endSequence: end.kind === 'latest' ? null : this.replayEnd,
          toDate: end.kind === 'date' ? formatFromDateEcho(end.atNs) : null,
        }),
      );
    }
    // The first heartbeat follows the opening frame at once (streaming.md §8.2, D2).
    this.send(heartbeat(this.identity, clock.now()));
    // Heartbeats and the maximum duration come from the process's queues (due-queue.ts), not a timer each.
    this.timers.push({ cancel: this.deps.schedule.heartbeats.add(this) });
    if (this.request.endpoint === 'watch') this.timers.push({ cancel: this.deps.schedule.lifetimes.add(this) });
    const expiresAt = this.request.credentialsExpireAt;
    if (expiresAt !== undefined) this.timers.push(setTimeoutAt(clock, expiresAt, () => this.closeTokenExpired()));

    if (this.endedBeforeBegin) this.onLiveEnded(this.endedBeforeBegin.error);
    else if (cursor.kind === 'live') this.enterLive();
    else void this.runReplay(cursor);
  }

  /** The heartbeat interval passed (streaming.md §8.2): called by the process's heartbeat queue. */
  heartbeatDue(): void {
    this.send(heartbeat(this.identity, this.deps.clock.now()));
  }

  /** Ends the stream deliberately with its final frame (§5.8). */
  close(reason: CloseReason, finalFrames: readonly Frame[] = []): void {
    this.end({ reason }, finalFrames);
  }

  private end(ending: StreamEnding, finalFrames: readonly Frame[] = [], closeConnection = false): void {
    if (this.phase === 'closed') return;
    const frames = [...finalFrames, connectionClosing(this.identity, this.deps.clock.now(), ending)];
    const lastFrames = frames.map((frame) => renderFrame(frame).toString()).join('');
    // A stream that completes keeps what it already queued; an interrupted one drops it (§7), and
    // so does a slow consumer, whose queue is what overflowed.
    const keepQueued = ending.reason === 'end_of_stream' && ending.cause === undefined;
    if (this.connection) for (const frame of frames) this.request.telemetry.frameSent(frame.kind);
    this.release();
    this.connection?.finish(lastFrames, keepQueued, closeConnection);
  }

  private release(): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    for (const timer of this.timers) timer.cancel();
    this.timers.length = 0;
    this.subscription?.close();
    this.backlog = [];
    this.deps.onReleased(this);
    this.request.telemetry.released();
  }

  private get closed(): boolean {
    return this.phase === 'closed';
  }

  /** Queues a frame; a stream whose client cannot keep up is ended instead of buffering more (D9). */
  private send(frame: Frame): boolean {
    return this.enqueue((connection) => connection.send(renderFrame(frame)), frame.kind, 1);
  }

  /** Replay frames of one batch, queued together. */
  private sendReplayFrames(frames: readonly Buffer[]): boolean {
    return this.enqueue((connection) => connection.sendAll(frames), 'notification', frames.length);
  }

  /** Queues through `write`; a queue that is full ends the stream with the slow-consumer close. */
  private enqueue(write: (connection: SseConnection) => boolean, kind: Frame['kind'], count: number): boolean {
    const connection = this.connection;
    if (!connection || this.closed) return false;
    if (write(connection)) {
      for (let i = 0; i < count; i++) this.request.telemetry.frameSent(kind);
      return true;
    }
    if (connection.isOpen) this.closeSlowConsumer(connection.lastRefusal ?? 'buffered_events');
    return false;
  }

  /**
   * D9/D32, D37: the stream's buffer overflowed one of its bounds (`trigger`), or its client took no
   * byte for the watchdog's bound. The client is told `end_of_stream` with the cause
   * `slow_consumer` (a reason it resumes on); operators see the cause and the trigger in the log.
   * The connection ends with the response: a client that fell this far behind gets a fresh one.
   */
  private closeSlowConsumer(trigger: SlowConsumerTrigger, stalledMs?: number): void {
    if (this.closed) return;
    const { settings } = this.deps;
    this.deps.logger.warn(
      {
        event_name: 'stream.slow_consumer.closed',
        topic: this.identity.topic,
        endpoint: this.request.endpoint,
        reason: 'end_of_stream',
        cause: 'slow_consumer',
        trigger,
        buffered_bytes: this.connection?.heldBytes ?? 0,
        max_buffered_events: settings.maxBufferedEvents,
        max_buffered_bytes: settings.maxBufferedBytes,
        ...(stalledMs === undefined ? {} : { stalled_ms: stalledMs }),
      },
      'Stream closed: the client did not keep up',
    );
    this.request.telemetry.slowConsumerClosed(trigger);
    this.end({ reason: 'end_of_stream', cause: 'slow_consumer' }, [], true);
  }

  /** D37: the stream was closed but its client did not read the end within the bound. */
  private onReset(): void {
    this.deps.logger.warn(
      {
        event_name: 'stream.end.reset',
        topic: this.identity.topic,
        endpoint: this.request.endpoint,
        bound_ms: this.deps.guards.watchdog.boundMs,
      },
      'Stream reset: its client did not read the end of the stream in time',
    );
    this.request.telemetry.streamReset();
  }

  /**
   * browser.md §6: the JWT the stream was opened with is now refused. `end_of_stream` with the
   * cause `token_expired` (D32: no new reason); the client reconnects with fresh credentials or
   * gets its 401. An expected end, so logged at info.
   */
  private closeTokenExpired(): void {
    if (this.closed) return;
    this.deps.logger.info(
      {
        event_name: 'stream.token_expired.closed',
        topic: this.identity.topic,
        endpoint: this.request.endpoint,
        reason: 'end_of_stream',
        cause: 'token_expired',
      },
      'Stream closed: its credentials expired',
    );
    this.request.telemetry.tokenExpiryClosed();
    this.end({ reason: 'end_of_stream', cause: 'token_expired' });
  }

  /** Runs inside the publisher's call: it must neither block nor throw (D9). */
  private onLiveNotification(notification: StoredNotification): void {
    try {
      this.acceptLive(notification);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.logger.error({ event_name: 'stream.live.delivery.failed', error: message }, 'Live delivery failed');
      this.onLiveEnded(error instanceof Error ? error : new Error(message));
    }
  }

  private acceptLive(notification: StoredNotification): void {
    if (this.closed || !this.request.predicate(notification)) return;
    if (this.phase === 'live') {
      this.deliverLive(notification);
      return;
    }
    if (this.backlog.length >= this.deps.settings.maxBufferedEvents) {
      this.closeSlowConsumer('buffered_events');
      return;
    }
    this.backlog.push(notification);
  }

  /** D23: a live subscription that cannot continue ends the stream, with an error frame if it failed. */
  private onLiveEnded(error?: Error): void {
    if (this.closed) return;
    if (!this.connection) {
      this.endedBeforeBegin = error ? { error } : {};
      return;
    }
    this.close('end_of_stream', error ? [streamProcessingFailed(this.identity, error.message)] : []);
  }

  /**
   * Everything a completed replay was asked for up to here was delivered: its end, or just below
   * its `from_id` when that lies past the end.
   */
  private completedReplayPosition(cursor: Exclude<StartCursorRequest, { kind: 'live' }>): bigint {
    const end = BigInt(this.replayEnd);
    return cursor.kind === 'sequence' && cursor.requested - 1n > end ? cursor.requested - 1n : end;
  }

  /** A GET stream's `id:`-only block; false when the stream ended instead (a slow consumer). */
  private markPosition(sequence: bigint | number): boolean {
    const browser = this.request.browser;
    if (!browser) return true;
    const block = positionBlock(browser.eventType, sequence);
    return block === '' || this.enqueue((connection) => connection.send(block), 'control', 0);
  }

  private enterLive(): void {
    // A GET watch has covered everything up to H: a reconnect before any live notification resumes after it.
    if (!this.markPosition(this.historyBound)) return;
    this.phase = 'live';
    const waiting = this.backlog;
    this.backlog = [];
    for (const notification of waiting) {
      if (!this.deliverLive(notification)) return;
    }
  }

  /** A live notification onto the stream, its lag from acceptance recorded (docs/metrics.md). */
  private deliverLive(notification: StoredNotification): boolean {
    if (!this.sendNotification('live-notification', notification)) return false;
    this.deps.deliveryLag(notification.timestampNs);
    return true;
  }

  /** Renders and queues one notification; a rendering failure is a non-fatal error frame (§6.3). */
  private sendNotification(event: 'live-notification' | 'replay', notification: StoredNotification): boolean {
    let bytes: Buffer;
    try {
      bytes = this.deps.renderer.frameBytes(notification, event, this.frameStyle);
    } catch (error) {
      if (!(error instanceof CloudEventRenderError)) throw error;
      return this.sendRenderFailure(notification, error);
    }
    return this.sendNotificationBytes(bytes);
  }

  private sendRenderFailure(notification: StoredNotification, error: CloudEventRenderError): boolean {
    return this.send(
      cloudEventCreationFailed(this.identity, {
        sequence: notification.sequence,
        notificationTopic: displayTopic(notification.topic),
        message: error.message,
      }),
    );
  }

  /**
   * What `send` does for a notification frame's bytes, without the frame object and the closure: this
   * runs once per watcher for every notification a fan-out delivers.
   */
  private sendNotificationBytes(bytes: Buffer): boolean {
    const connection = this.connection;
    if (!connection || this.closed) return false;
    if (connection.send(bytes)) {
      this.request.telemetry.frameSent('notification');
      return true;
    }
    if (connection.isOpen) this.closeSlowConsumer(connection.lastRefusal ?? 'buffered_events');
    return false;
  }

  /** The replay algorithm of streaming.md §9.2, with the lookahead of §9.5 and the bound H of §10. */
  private async runReplay(cursor: Exclude<StartCursorRequest, { kind: 'live' }>): Promise<void> {
    this.phase = 'replay';
    const start: StartCursor = cursor.kind === 'sequence' ? { kind: 'sequence', sequence: cursor.sequence } : cursor;
    let history: ReplayCursor;
    try {
      history = await this.deps.backend.openReplay({
        pattern: this.request.selection.pattern,
        start,
        upperBound: this.replayEnd,
      });
    } catch (error) {
      this.failReplay(error);
      return;
    }
    try {
      if (!(await deliverHistory(history, this.replayOptions(), this.replayHost()))) return;
    } finally {
      history.close();
    }
    if (this.request.endpoint === 'replay') {
      // A GET replay's reconnect then names its end and is answered 204 (streaming.md, "Browsers").
      if (!this.markPosition(this.completedReplayPosition(cursor))) return;
      this.close('end_of_stream', [replayCompleted(this.identity, this.deps.clock.now())]);
      return;
    }
    if (!this.send(replayCompleted(this.identity, this.deps.clock.now()))) return;
    this.enterLive();
  }

  private replayOptions(): ReplayBatchOptions {
    const { renderer, settings } = this.deps;
    return {
      connection: this.connection as SseConnection,
      renderer,
      predicate: this.request.predicate,
      quota: this.request.quota,
      style: this.frameStyle,
      batchSize: settings.replayBatchSize,
      batchDelayMs: settings.replayBatchDelayMs,
      maxBufferedEvents: settings.maxBufferedEvents,
      maxBufferedBytes: settings.maxBufferedBytes,
    };
  }

  private replayHost(): ReplayBatchHost {
    return {
      isClosed: () => this.closed,
      sendFrames: (frames) => this.sendReplayFrames(frames),
      sendRenderFailure: (notification, error) => this.sendRenderFailure(notification, error),
      closeAtLimit: () => this.close('end_of_stream', [replayLimitReached(this.identity, this.deps.clock.now(), this.request.quota)]),
      fail: (error) => this.failReplay(error),
      sleep: (ms) => this.sleep(ms),
    };
  }

  /** A backend failure during replay: the `error` frame, then `end_of_stream` (§9.6). */
  private failReplay(error: unknown): void {
    if (this.closed) return;
    const message = error instanceof Error ? error.message : String(error);
    this.deps.logger.error({ event_name: 'stream.replay.fetch.failed', error: message }, 'Replay batch failed');
    this.close('end_of_stream', [streamProcessingFailed(this.identity, message)]);
  }

  /** Waits between replay batches; ends early when the stream does. */
  private sleep(ms: number): Promise<void> {
    const connection = this.connection as SseConnection;
    return new Promise((resolve) => {
      const wake = (): void => {
        timer.cancel();
        forget();
        resolve();
      };
      const timer = this.deps.clock.setTimeout(wake, ms);
      const forget = connection.onOver(wake);
    });
  }
}
