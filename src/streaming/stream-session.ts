import type { Logger } from 'pino';
import type { StreamEndpoint } from '../schema/watch-identifier.js';
import type { LiveSink, LiveSubscription, NotificationBackend, StoredNotification } from '../backend/backend.js';
import { setTimeoutAt, type Clock, type TimerHandle } from '../time/clock.js';
import type { DueQueue } from './due-queue.js';
import type { CloudEventRenderer } from './cloudevent.js';
import type { ConnectionGuards } from './connection-watch.js';
import {
  connectionClosing,
  connectionEstablished,
  heartbeat,
  renderFrame,
  replayStarted,
  retryBlock,
  sequenceReset,
  streamProcessingFailed,
  type CloseReason,
  type Frame,
  type StreamEnding,
  type StreamIdentity,
} from './frames.js';
import { SseConnection } from './sse-connection.js';
import { sseHeaders } from './sse-headers.js';
import { logSlowConsumerClose, logStreamReset, logTokenExpiryClose } from './stream-close-log.js';
import { StreamOutput } from './stream-output.js';
import type { StreamSink } from './stream-sink.js';
import { resolveReplayEnd } from './stream-range.js';
import { formatFromDateEcho } from '../time/time-format.js';
import type { SlowConsumerTrigger, StreamRequest, StreamSettings } from './stream-request.js';
import { runReplay, type ReplayStart } from './replay-phase.js';

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

/** What the admin streams list reads of an open stream (open-streams.ts). */
export interface StreamProgress {
  readonly phase: 'replaying' | 'live';
  readonly lastSequence: number | null;
  readonly delivered: number;
  readonly bufferedBytes: number;
  readonly lagMs: number;
}

/** Where a stream whose numbering was reset under its client starts again (D41). */
const FROM_FIRST_SEQUENCE: ReplayStart = { kind: 'sequence', sequence: 1, requested: 1n };

/** One queue for every stream's heartbeats, one for every watch's maximum duration. */
export interface StreamSchedule {
  readonly heartbeats: DueQueue<StreamSession>;
  readonly lifetimes: DueQueue<StreamSession>;
}

/**
 * One watch or replay stream from setup to release: the lifecycle of docs/design/rules/streaming.md §7–§12 in one
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
  private output: StreamOutput | undefined;
  private readonly timers: TimerHandle[] = [];
  private readonly identity: StreamIdentity;
  /** Set when the live subscription ended before the response began. */
  private endedBeforeBegin: { readonly error?: Error } | undefined;
  /** Set when the request's start lies beyond the stream's last sequence + 1 (D41). */
  private reset: { readonly requested: bigint; readonly lastSequence: number } | undefined;
  /**
   * Live notifications below this sequence were already the client's: its `from_id` said so. A
   * watch's H can trail the store (a JetStream feed behind its stream), and what lies between H and
   * `from_id` must not reach the client twice.
   */
  private liveFloor = 0;

  constructor(
    readonly request: StreamRequest,
    private readonly deps: StreamDependencies,
  ) {
    this.identity = { topic: request.selection.pattern.display, requestId: request.requestId };
  }

  get topic(): string {
    return this.identity.topic;
  }

  /** The last sequence the stream's replay phase reads, known once `setup` resolved. */
  get endSequence(): number {
    return this.replayEnd;
  }

  /** How far the stream got, for the admin streams list (D49): read while it is open. */
  get progress(): StreamProgress {
    const output = this.output;
    return {
      phase: this.phase === 'live' ? 'live' : 'replaying',
      lastSequence: output?.lastSequence ?? null,
      delivered: output?.delivered ?? 0,
      bufferedBytes: output?.connection.heldBytes ?? 0,
      lagMs: output?.connection.queueAge(this.deps.clock.now()) ?? 0,
    };
  }

  /**
   * An admin closed the stream (D49): `end_of_stream` with the cause `operator_closed`, so the
   * client resumes from its cursor as after any interruption; what was still queued is dropped.
   */
  closeByOperator(): void {
    this.end({ reason: 'end_of_stream', cause: 'operator_closed' });
  }

  /** Whether the request's start was beyond the stream's end, so the stream starts again from its first sequence (D41). */
  get restartsNumbering(): boolean {
    return this.reset !== undefined;
  }


  /**
   * Backend setup (docs/design/rules/streaming.md §2.2 step 7): a watch subscribes and takes H from the subscription in the same
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
    this.reset = await this.findReset();
    const { cursor } = this.request;
    if (cursor.kind === 'sequence' && !this.reset) this.liveFloor = cursor.sequence;
    this.replayEnd = await resolveReplayEnd(backend, pattern, this.request.end, this.historyBound);
  }

  /**
   * D41: a start beyond the stream's last sequence + 1 means its numbering was reset under the
   * client. A watch's H is what its live feed delivered last, which can trail the store, so the
   * store's own last sequence decides.
   */
  private async findReset(): Promise<{ requested: bigint; lastSequence: number } | undefined> {
    const { cursor, endpoint, selection } = this.request;
    if (cursor.kind !== 'sequence' || cursor.requested <= BigInt(this.historyBound) + 1n) return undefined;
    const last = endpoint === 'watch' ? await this.deps.backend.captureHistoryBound(selection.pattern) : this.historyBound;
    if (cursor.requested <= BigInt(last) + 1n) return undefined;
    return { requested: cursor.requested, lastSequence: last };
  }

  /** Abandons a stream whose setup succeeded but that will not be started. */
  discard(): void {
    this.release();
  }

  /** Starts the response on `sink`: headers and the opening frame at once, then heartbeats and the phases. */
  begin(sink: StreamSink): void {
    const { settings, clock } = this.deps;
    const connection = new SseConnection(
      sink,
      { maxQueuedFrames: settings.maxBufferedEvents, maxHeldBytes: settings.maxBufferedBytes },
      this.deps.guards,
      {
        stalled: (stalledMs) => this.closeSlowConsumer('stalled', stalledMs),
        reset: () => this.onReset(),
      },
    );
    const { browser } = this.request;
    this.output = new StreamOutput(connection, {
      identity: this.identity,
      renderer: this.deps.renderer,
      style: browser ? 'with-id' : 'plain',
      browser,
      telemetry: this.request.telemetry,
      overflowed: (trigger) => this.closeSlowConsumer(trigger),
    });
    connection.onOver(() => this.release());
    connection.open(sseHeaders(this.request.requestId));
    if (browser) connection.send(retryBlock());

    const { cursor, end } = this.request;
    if (cursor.kind === 'live') {
      this.send(connectionEstablished(this.identity, clock.now(), settings.connectionMaxDurationSec, this.request.schemaVersion));
    } else {
      this.send(
        replayStarted(this.identity, clock.now(), {
          batchSize: settings.replayBatchSize,
          fromSequence: cursor.kind === 'sequence' ? cursor.requested : null,
          fromDate: cursor.kind === 'date' ? formatFromDateEcho(cursor.atNs) : null,
          endSequence: end.kind === 'latest' ? null : this.replayEnd,
          toDate: end.kind === 'date' ? formatFromDateEcho(end.atNs) : null,
          schemaVersion: this.request.schemaVersion,
        }),
      );
      if (this.reset) this.announceReset(this.reset);
    }
    // The first heartbeat follows the opening frame at once (docs/design/rules/streaming.md §8.2, D2).
    this.send(heartbeat(this.identity, clock.now()));
    // Heartbeats and the maximum duration come from the process's queues (due-queue.ts), not a timer each.
    this.timers.push({ cancel: this.deps.schedule.heartbeats.add(this) });
    if (this.request.endpoint === 'watch') this.timers.push({ cancel: this.deps.schedule.lifetimes.add(this) });
    const expiresAt = this.request.credentialsExpireAt;
    if (expiresAt !== undefined) this.timers.push(setTimeoutAt(clock, expiresAt, () => this.closeTokenExpired()));

    if (this.endedBeforeBegin) this.onLiveEnded(this.endedBeforeBegin.error);
    else if (cursor.kind === 'live') this.enterLive();
    else this.startReplay(this.reset ? FROM_FIRST_SEQUENCE : cursor);
  }

  /** D41: said, logged and counted; the replay then starts from the first sequence. */
  private announceReset(reset: { readonly requested: bigint; readonly lastSequence: number }): void {
    this.deps.logger.warn(
      {
        event_name: 'stream.cursor.beyond_end',
        endpoint: this.request.endpoint,
        topic: this.identity.topic,
        requested_sequence: reset.requested.toString(),
        last_sequence: reset.lastSequence,
      },
      'Stream start beyond the last sequence: the numbering was reset, replaying from the first sequence',
    );
    this.request.telemetry.sequenceReset();
    this.send(sequenceReset(this.identity, this.deps.clock.now(), reset));
  }

  /** The heartbeat interval passed (docs/design/rules/streaming.md §8.2): called by the process's heartbeat queue. */
  heartbeatDue(): void {
    this.send(heartbeat(this.identity, this.deps.clock.now()));
  }

  /** Ends the stream deliberately with its final frame (docs/design/rules/streaming.md §5.8). */
  close(reason: CloseReason, finalFrames: readonly Frame[] = []): void {
    this.end({ reason }, finalFrames);
  }

  private end(ending: StreamEnding, finalFrames: readonly Frame[] = [], closeConnection = false): void {
    if (this.phase === 'closed') return;
    const frames = [...finalFrames, connectionClosing(this.identity, this.deps.clock.now(), ending)];
    const lastFrames = frames.map((frame) => renderFrame(frame).toString()).join('');
    // A stream that completes keeps what it already queued; an interrupted one drops it (docs/design/rules/streaming.md §7), and
    // so does a slow consumer, whose queue is what overflowed.
    const keepQueued = ending.reason === 'end_of_stream' && ending.cause === undefined;
    if (this.output) for (const frame of frames) this.request.telemetry.frameSent(frame.kind);
    this.release();
    this.output?.connection.finish(lastFrames, keepQueued, closeConnection);
  }

  private release(): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    this.output?.stop();
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

  private get logged(): { topic: string; endpoint: StreamEndpoint } {
    return { topic: this.identity.topic, endpoint: this.request.endpoint };
  }

  /** Queues a frame; a stream whose client cannot keep up is ended instead of buffering more (D9). */
  private send(frame: Frame): boolean {
    return this.output?.send(frame) ?? false;
  }

  /**
   * D9/D32, D37: the stream's buffer overflowed one of its bounds (`trigger`), or its client took no
   * byte for the watchdog's bound. The client is told `end_of_stream` with the cause
   * `slow_consumer` (a reason it resumes on); operators see the cause and the trigger in the log.
   * The connection ends with the response: a client that fell this far behind gets a fresh one.
   */
  private closeSlowConsumer(trigger: SlowConsumerTrigger, stalledMs?: number): void {
    if (this.closed) return;
    const bufferedBytes = this.output?.connection.heldBytes ?? 0;
    logSlowConsumerClose(this.deps.logger, this.logged, trigger, bufferedBytes, this.deps.settings, stalledMs);
    this.request.telemetry.slowConsumerClosed(trigger);
    this.end({ reason: 'end_of_stream', cause: 'slow_consumer' }, [], true);
  }

  /** D37: the stream was closed but its client did not read the end within the bound. */
  private onReset(): void {
    logStreamReset(this.deps.logger, this.logged, this.deps.guards.watchdog.boundMs);
    this.request.telemetry.streamReset();
  }

  /**
   * docs/design/rules/browser.md §6: the JWT the stream was opened with is now refused. `end_of_stream` with the
   * cause `token_expired` (D32: no new reason); the client reconnects with fresh credentials or
   * gets its 401. An expected end, so logged at info.
   */
  private closeTokenExpired(): void {
    if (this.closed) return;
    logTokenExpiryClose(this.deps.logger, this.logged);
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
    if (this.closed || notification.sequence < this.liveFloor || !this.request.predicate(notification)) return;
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
    if (!this.output) {
      this.endedBeforeBegin = error ? { error } : {};
      return;
    }
    this.close('end_of_stream', error ? [streamProcessingFailed(this.identity, error.message)] : []);
  }

  /** A GET stream's `id:`-only block; false when the stream ended instead (a slow consumer). */
  private markPosition(sequence: bigint | number): boolean {
    return this.output?.markPosition(sequence) ?? false;
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
    if (!this.output?.sendNotification('live-notification', notification)) return false;
    this.deps.deliveryLag(notification.timestampNs);
    return true;
  }

  private startReplay(cursor: ReplayStart): void {
    this.phase = 'replay';
    const { backend, renderer, clock, settings, logger } = this.deps;
    void runReplay(
      {
        backend,
        renderer,
        clock,
        settings,
        logger,
        request: this.request,
        identity: this.identity,
        output: this.output as StreamOutput,
        replayEnd: this.replayEnd,
        isClosed: () => this.closed,
        close: (reason, finalFrames) => this.close(reason, finalFrames),
        enterLive: () => this.enterLive(),
      },
      cursor,
    );
  }
}
