import type { StreamEndpoint } from '../schema/watch-identifier.js';
import type { LiveSubscription } from '../backend/backend.js';
import { setTimeoutAt, type TimerHandle } from '../time/clock.js';
import type { DueQueue } from './due-queue.js';
import {
  connectionClosing,
  heartbeat,
  renderFrame,
  retryBlock,
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
import type { SlowConsumerTrigger, StreamRequest } from './stream-request.js';
import { LivePhase, type LiveStreamOwner } from './live-phase.js';
import { runReplay, type ReplayStart } from './replay-phase.js';
import type { StreamDependencies } from './stream-dependencies.js';
import { announceSequenceReset, findSequenceReset, FROM_FIRST_SEQUENCE, openingFrame, type SequenceReset } from './stream-opening.js';

/** What a session needs beyond what every stream works with: the process's queues and its release. */
export interface StreamSessionDependencies extends StreamDependencies {
  /** The process's heartbeat and maximum-duration queues (stream-supervisor.ts). */
  readonly schedule: StreamSchedule;
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

/** One queue for every stream's heartbeats, one for every watch's maximum duration. */
export interface StreamSchedule {
  readonly heartbeats: DueQueue<StreamSession>;
  readonly lifetimes: DueQueue<StreamSession>;
}

/**
 * One watch or replay stream from setup to release, its whole lifecycle in one place
 * (docs/design/rules/streaming.md §7–§12). Setup happens before any byte is sent; afterwards every frame goes through the bounded
 * connection, and every way a stream ends (completion, cap, failure, max duration, shutdown, slow
 * consumer, expired credentials, client gone) releases the subscription and timers exactly once.
 */
export class StreamSession implements LiveStreamOwner {
  private phase: Phase = 'setup';
  private subscription: LiveSubscription | undefined;
  private historyBound = 0;
  /** The last sequence the replay phase reads: H, or the request's `to_id` / `to_date` resolved against H. */
  private replayEnd = 0;
  private readonly live: LivePhase;
  private output: StreamOutput | undefined;
  private readonly timers: TimerHandle[] = [];
  private readonly identity: StreamIdentity;
  /** Set when the live subscription ended before the response began. */
  private endedBeforeBegin: { readonly error?: Error } | undefined;
  /** Set when the request's start lies beyond the stream's last sequence + 1: its numbering was reset. */
  private reset: SequenceReset | undefined;

  constructor(
    readonly request: StreamRequest,
    private readonly deps: StreamSessionDependencies,
  ) {
    this.identity = { topic: request.selection.pattern.display, requestId: request.requestId };
    this.live = new LivePhase(this, request, deps);
  }

  get topic(): string {
    return this.identity.topic;
  }

  /** The last sequence the stream's replay phase reads, known once `setup` resolved. */
  get endSequence(): number {
    return this.replayEnd;
  }

  /** How far the stream got, for the admin streams list: read while it is open. */
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
   * An admin closed the stream: `end_of_stream` with the cause `operator_closed`, so the
   * client resumes from its cursor as after any interruption; what was still queued is dropped.
   */
  closeByOperator(): void {
    this.end({ reason: 'end_of_stream', cause: 'operator_closed' });
  }

  /** Whether the request's start was beyond the stream's end, so the stream starts again from its first sequence. */
  get restartsNumbering(): boolean {
    return this.reset !== undefined;
  }

  /**
   * Backend setup, before any byte is sent: a watch subscribes and takes H from the subscription in the
   * same step, so no notification falls between its history and its live phase; a replay only captures H. The replay's end is resolved right after, against that H.
   * Rejects when the backend fails; nothing has been sent then.
   */
  async setup(): Promise<void> {
    const { backend } = this.deps;
    const { pattern } = this.request.selection;
    if (this.request.endpoint === 'watch') {
      this.subscription = await backend.subscribe(pattern, this.live);
      this.historyBound = this.subscription.historyBound;
    } else {
      this.historyBound = await backend.captureHistoryBound(pattern);
    }
    this.reset = await findSequenceReset(backend, this.request, this.historyBound);
    const { cursor } = this.request;
    if (cursor.kind === 'sequence' && !this.reset) this.live.floor = cursor.sequence;
    this.replayEnd = await resolveReplayEnd(backend, pattern, this.request.end, this.historyBound);
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

    this.send(openingFrame(this.request, this.identity, clock.now(), settings, this.replayEnd));
    if (this.reset) this.send(announceSequenceReset(this.deps.logger, this.request, this.identity, clock.now(), this.reset));
    // The first heartbeat follows the opening frame at once, and every stream has them, replays too: a
    // long history scan must not trip a client's silence watchdog.
    this.send(heartbeat(this.identity, clock.now()));
    // Heartbeats and the maximum duration come from the process's queues (due-queue.ts), not a timer each.
    this.timers.push({ cancel: this.deps.schedule.heartbeats.add(this) });
    if (this.request.endpoint === 'watch') this.timers.push({ cancel: this.deps.schedule.lifetimes.add(this) });
    const expiresAt = this.request.credentialsExpireAt;
    if (expiresAt !== undefined) this.timers.push(setTimeoutAt(clock, expiresAt, () => this.closeTokenExpired()));

    const { cursor } = this.request;
    if (this.endedBeforeBegin) this.liveEnded(this.endedBeforeBegin.error);
    else if (cursor.kind === 'live') this.enterLive();
    else this.startReplay(this.reset ? FROM_FIRST_SEQUENCE : cursor);
  }

  /** The heartbeat interval passed: called by the process's heartbeat queue. */
  heartbeatDue(): void {
    this.send(heartbeat(this.identity, this.deps.clock.now()));
  }

  /** Ends the stream deliberately: any final frames, then `connection-closing` with the reason. */
  close(reason: CloseReason, finalFrames: readonly Frame[] = []): void {
    this.end({ reason }, finalFrames);
  }

  private end(ending: StreamEnding, finalFrames: readonly Frame[] = [], closeConnection = false): void {
    if (this.phase === 'closed') return;
    const frames = [...finalFrames, connectionClosing(this.identity, this.deps.clock.now(), ending)];
    const lastFrames = frames.map((frame) => renderFrame(frame).toString()).join('');
    // A stream that completes keeps what it already queued; an interrupted one (shutdown, maximum
    // duration, an operator) drops it, and so does a slow consumer, whose queue is what overflowed.
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
    this.live.stop();
    this.deps.onReleased(this);
    this.request.telemetry.released();
  }

  isClosed(): boolean {
    return this.phase === 'closed';
  }

  private get logged(): { topic: string; endpoint: StreamEndpoint } {
    return { topic: this.identity.topic, endpoint: this.request.endpoint };
  }

  /** Queues a frame; a stream whose client cannot keep up is ended instead of buffering more. */
  private send(frame: Frame): boolean {
    return this.output?.send(frame) ?? false;
  }

  /**
   * The stream's buffer overflowed one of its bounds (`trigger`), or its client took no
   * byte for the watchdog's bound. The client is told `end_of_stream` with the cause
   * `slow_consumer` (a reason it resumes on); operators see the cause and the trigger in the log.
   * The connection ends with the response: a client that fell this far behind gets a fresh one.
   */
  closeSlowConsumer(trigger: SlowConsumerTrigger, stalledMs?: number): void {
    if (this.isClosed()) return;
    const bufferedBytes = this.output?.connection.heldBytes ?? 0;
    logSlowConsumerClose(this.deps.logger, this.logged, trigger, bufferedBytes, this.deps.settings, stalledMs);
    this.request.telemetry.slowConsumerClosed(trigger);
    this.end({ reason: 'end_of_stream', cause: 'slow_consumer' }, [], true);
  }

  /** The stream was closed but its client did not read the end within the stall bound: the connection was reset. */
  private onReset(): void {
    logStreamReset(this.deps.logger, this.logged, this.deps.guards.watchdog.boundMs);
    this.request.telemetry.streamReset();
  }

  /**
   * The JWT the stream was opened with is now refused (its expiry passed): `end_of_stream` with the cause `token_expired`
   * (the close reasons are fixed, so a cause says more); the client reconnects with fresh credentials or
   * gets its 401. An expected end, so logged at info.
   */
  private closeTokenExpired(): void {
    if (this.isClosed()) return;
    logTokenExpiryClose(this.deps.logger, this.logged);
    this.request.telemetry.tokenExpiryClosed();
    this.end({ reason: 'end_of_stream', cause: 'token_expired' });
  }

  /** A live subscription that cannot continue ends the stream, with an error frame if it failed. */
  liveEnded(error?: Error): void {
    if (this.isClosed()) return;
    if (!this.output) {
      this.endedBeforeBegin = error ? { error } : {};
      return;
    }
    this.close('end_of_stream', error ? [streamProcessingFailed(this.identity, error.message)] : []);
  }

  private enterLive(): void {
    // A GET watch has covered everything up to H: a reconnect before any live notification resumes after it.
    const { output } = this;
    if (output === undefined || !output.markPosition(this.historyBound)) return;
    this.phase = 'live';
    this.live.enter(output);
  }

  private startReplay(cursor: ReplayStart): void {
    this.phase = 'replay';
    const { backend, renderer, clock, settings, logger, guards, deliveryLag } = this.deps;
    // Field by field, as the supervisor builds the session's: a spread gives each stream's context a shape of its own.
    void runReplay(
      {
        backend,
        renderer,
        clock,
        settings,
        logger,
        guards,
        deliveryLag,
        request: this.request,
        identity: this.identity,
        output: this.output as StreamOutput,
        replayEnd: this.replayEnd,
        isClosed: () => this.isClosed(),
        close: (reason, finalFrames) => this.close(reason, finalFrames),
        enterLive: () => this.enterLive(),
      },
      cursor,
    );
  }
}
