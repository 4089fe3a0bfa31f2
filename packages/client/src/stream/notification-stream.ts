import { sleep, type TimerHandle } from '../clock.js';
import type { StreamContext } from './stream-context.js';
import { AvisoError, ConfigError, describeNetworkFailure, TransportError } from '../errors.js';
import type { StateStore } from '../state/store.js';
import type { Notification, StreamNotice, StreamOpening, WatchRequest, WatchStatus } from '../types.js';
import { backoffDelay, DEFAULT_HEARTBEAT_INTERVAL_MS, OPENING_DEADLINE_MS, watchdogTimeout } from './backoff.js';
import { decodeNotification } from './frames.js';
import { frameAction, openingAction } from './frame-rules.js';
import { closeOutcome, responseOutcome, type Outcome } from './outcomes.js';
import { watchBody } from './watch-body.js';
import { BoundedQueue } from './queue.js';
import { SseReader, type SseFrame } from './sse-reader.js';
import { WatchCursor } from './watch-cursor.js';
import { WireSequence } from './wire-sequence.js';

interface ConnectionState {
  opened: boolean;
  openedAt: number;
  readonly expectReplay: boolean;
  readonly cancelDeadline: () => void;
}

/**
 * What the supervisor hands over, in stream order: a notification, or a notice the consumer
 * meets just before the notification that follows it.
 */
type QueueEntry = { readonly notification: Notification } | { readonly notice: StreamNotice };

const DEFAULT_QUEUE = 128;

/**
 * A supervised watch (docs/design/rules/client.md §3): an async iterator of notifications that reconnects and
 * resumes by itself and ends only when the stream is complete, closed, or hits a terminal error.
 */
export class NotificationStream implements AsyncIterableIterator<Notification> {
  /** Resolves at the first confirmed opening; rejects if the stream fails or closes before. */
  readonly ready: Promise<StreamOpening>;
  private resolveReady!: (opening: StreamOpening) => void;
  private rejectReady!: (error: unknown) => void;
  private readonly abort = new AbortController();
  private readonly queue: BoundedQueue<QueueEntry>;
  private readonly store: StateStore | undefined;
  private readonly replay: boolean;
  private readonly ranged: boolean;
  private readonly heartbeatMs: number;
  /** Repeats and gaps on the wire; an unfiltered watch's sequences are consecutive. */
  private readonly wire: WireSequence;
  /** The consumer's position and its state store. */
  private readonly cursor: WatchCursor;
  private failure: unknown;
  private failureReported = false;
  private finished = false;
  private confirmedEver = false;
  private attempt = 0;
  private refreshedThisCycle = false;
  /** Notices the consumer met since the last notification handed, for the next one. */
  private notices: StreamNotice[] = [];
  private pinnedEnd: number | undefined;
  private exitFlush: Promise<void> | undefined;

  constructor(
    private readonly client: StreamContext,
    private readonly request: WatchRequest,
  ) {
    this.ranged = request.to !== undefined;
    this.replay = request.replayOnly === true || this.ranged;
    this.store = request.stateStore;
    this.wire = new WireSequence(Object.keys(request.identifier ?? {}).length === 0);
    this.cursor = new WatchCursor(this.store, request.from !== undefined);
    this.heartbeatMs = request.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.queue = new BoundedQueue(request.queueSize ?? (this.store ? 1 : DEFAULT_QUEUE));
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    // Callers that only iterate must not see an unhandled rejection of `ready`.
    this.ready.catch(() => undefined);
    if (request.signal) {
      if (request.signal.aborted) this.abort.abort(request.signal.reason);
      else request.signal.addEventListener('abort', this.closeOnAbort, { once: true });
    }
    void this.run();
  }

  private readonly closeOnAbort = (): void => this.close();

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Highest sequence handed to the consumer so far, in the stream's current numbering. */
  get lastSequence(): number | undefined {
    return this.cursor.lastHanded;
  }

  async next(): Promise<IteratorResult<Notification>> {
    for (;;) {
      await this.commitPending();
      const entry = this.queue.shift();
      if (entry !== undefined && 'notice' in entry) {
        await this.meetNotice(entry.notice);
        continue;
      }
      if (entry !== undefined) {
        const item = this.notices.length === 0 ? entry.notification : { ...entry.notification, notices: this.notices.splice(0) };
        this.cursor.handOver(item);
        return { value: item, done: false };
      }
      if (this.failure !== undefined && !this.failureReported) {
        this.failureReported = true;
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the failure that ended the stream, thrown to the caller as it was
        throw this.failure;
      }
      if (this.finished) return { value: undefined, done: true };
      await this.queue.waitForItem();
    }
  }

  /**
   * Stops iterating (a `break` out of `for await`). The last handed notification is committed only
   * with the client's `flushCursorOnExit` (or by calling `commit()`): as in the aviso client,
   * leaving it uncommitted means a restart may deliver it again rather than skip work the
   * consumer did not finish.
   */
  return(): Promise<IteratorResult<Notification>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Commits the last handed notification to the state store now (a graceful exit's flush). */
  async commit(): Promise<void> {
    await this.exitFlush;
    await this.commitPending();
  }

  /** Ends the stream: the socket is released and iteration finishes after nothing more. */
  close(): void {
    if (this.client.flushCursorOnExit && this.exitFlush === undefined) {
      // A failure here only means the next run may deliver this notification again.
      this.exitFlush = this.commitPending().catch((error: unknown) => this.status({ type: 'flushFailed', error }));
    }
    if (!this.abort.signal.aborted) this.abort.abort(new DOMException('the stream was closed', 'AbortError'));
    this.finished = true;
    this.queue.clear();
    this.queue.wake();
    this.rejectReady(new TransportError('the stream was closed before it opened'));
  }

  private status(status: WatchStatus): void {
    this.request.onStatus?.(status);
  }

  /**
   * A notice reaches the consumer in stream order: after the notifications before it were handed
   * (and, with a store, the last of them committed), before the one after it. It is reported
   * then, so a consumer sees it even when no notification follows (a gap at the end of a replay).
   */
  private async meetNotice(notice: StreamNotice): Promise<void> {
    this.notices.push(notice);
    if (notice.type === 'history_gap') {
      this.status({ type: 'historyGap', gap: notice });
      return;
    }
    await this.storeStep(() => this.cursor.moveToNewNumbering());
    this.status({ type: 'sequenceReset', reset: notice });
  }

  /** A store failure ends the stream; the caller sees it thrown here, not again from `next()`. */
  private async storeStep(step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      this.fail(error);
      this.failureReported = true;
      throw error;
    }
  }

  private commitPending(): Promise<void> {
    return this.storeStep(() => this.cursor.commitPending());
  }

  private fail(error: unknown): void {
    if (this.failure === undefined) this.failure = error;
    this.rejectReady(error);
    if (!this.abort.signal.aborted) this.abort.abort(error);
    this.finished = true;
    this.queue.wake();
  }

  private validate(): void {
    const { request } = this;
    if (request.to !== undefined && request.from === undefined && !this.store) {
      throw new ConfigError('a replay range needs a start (from)');
    }
    if (this.replay && request.from === undefined && !this.store) throw new ConfigError('replayOnly needs a start (from)');
  }

  private async run(): Promise<void> {
    try {
      this.validate();
      await this.cursor.load(this.client.baseUrlInput, this.request.eventType, this.request.identifier ?? {});
      this.wire.restart(this.cursor.wireBaseline);
      if (this.replay && this.request.from === undefined && !this.cursor.hasStoredCursor) {
        throw new ConfigError('replayOnly needs a start (from) or a stored cursor');
      }
      const startupDeadline =
        this.request.startupTimeoutMs === undefined ? undefined : this.client.clock.now() + this.request.startupTimeoutMs;
      for (;;) {
        if (this.abort.signal.aborted) return;
        const resumeAfter = this.receivedThrough() ?? this.cursor.resumeAfter();
        if (this.pinnedEnd !== undefined && resumeAfter !== undefined && resumeAfter >= this.pinnedEnd) return;
        const outcome = await this.connect(this.body(resumeAfter));
        if (outcome.kind === 'finished') return;
        // A range whose pinned end already came off the wire is complete: what is queued is handed over, nothing is asked again.
        const received = this.wire.lastAccepted;
        if (this.pinnedEnd !== undefined && received !== undefined && received >= this.pinnedEnd) return;
        // What was received stays queued for the consumer (the server may no longer hold it: an
        // in-memory restart), and the next connection resumes after it.
        this.wire.restart(this.receivedThrough() ?? this.cursor.wireBaseline);
        const wait =
          outcome.wait === 'now'
            ? 0
            : outcome.wait === 'backoff'
              ? backoffDelay(this.attempt++, () => this.client.clock.random())
              : outcome.wait;
        if (!this.confirmedEver && startupDeadline !== undefined && this.client.clock.now() + wait > startupDeadline) {
          throw new TransportError(
            `listener startup timeout exceeded: no stream confirmed open within ${this.request.startupTimeoutMs} ms (last: ${outcome.reason})`,
          );
        }
        this.status({ type: 'reconnecting', delayMs: wait, attempt: this.attempt, reason: outcome.reason });
        if (wait > 0) await sleep(this.client.clock, wait, this.abort.signal);
      }
    } catch (error) {
      if (!this.abort.signal.aborted) this.fail(error);
    } finally {
      // A caller's signal may serve many streams (the CLI's interrupt): leave nothing on it.
      this.request.signal?.removeEventListener('abort', this.closeOnAbort);
      this.finished = true;
      this.queue.wake();
      this.rejectReady(this.failure ?? new TransportError('the stream ended before it opened'));
      this.status({ type: 'ended', reason: this.failure === undefined ? 'finished' : String((this.failure as Error).name) });
    }
  }

  /**
   * The last sequence received but not yet taken by the consumer, in the numbering the stream is in
   * (after a queued `sequence_reset`, 0 until the new numbering's first); undefined when nothing waits.
   */
  private receivedThrough(): number | undefined {
    let through: number | undefined;
    for (const entry of this.queue.waiting()) {
      if ('notification' in entry) through = entry.notification.sequence;
      else if (entry.notice.type === 'sequence_reset') through = 0;
    }
    return through;
  }

  private body(resumeAfter: number | undefined): Record<string, unknown> {
    return watchBody(this.request, resumeAfter, this.pinnedEnd);
  }

  private async connect(body: Record<string, unknown>): Promise<Outcome> {
    const clock = this.client.clock;
    const connection = new AbortController();
    const onAbort = (): void => connection.abort();
    this.abort.signal.addEventListener('abort', onAbort, { once: true });
    let cause: 'deadline' | 'silence' | undefined;
    const deadline = clock.setTimeout(() => {
      cause = 'deadline';
      connection.abort();
    }, OPENING_DEADLINE_MS);
    let watchdog: TimerHandle | undefined;
    const armWatchdog = (): void => {
      watchdog?.cancel();
      watchdog = clock.setTimeout(() => {
        cause ??= 'silence';
        connection.abort();
      }, watchdogTimeout(this.heartbeatMs));
    };
    const state: ConnectionState = {
      opened: false,
      openedAt: 0,
      expectReplay: 'from_id' in body || 'from_date' in body,
      cancelDeadline: () => deadline.cancel(),
    };
    const path = this.replay ? 'api/v1/replay' : 'api/v1/watch';
    try {
      const headers = await this.client.transport.headers({ accept: 'text/event-stream', 'content-type': 'application/json' });
      armWatchdog();
      const response = await this.client.transport.options.fetch(this.client.transport.url(path), {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: connection.signal,
        redirect: 'manual',
      });
      const rejected = await this.checkResponse(response);
      if (rejected) return rejected;
      const reader = new SseReader();
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        // Off while frames are handled: a consumer that is slow to take them is no dead connection.
        watchdog?.cancel();
        for (const frame of reader.feed(chunk)) {
          const outcome = await this.handleFrame(frame, state);
          if (outcome) return outcome;
        }
        armWatchdog();
      }
      return { kind: 'reconnect', wait: 'backoff', reason: 'the connection ended without a close frame' };
    } catch (error) {
      if (this.abort.signal.aborted) return { kind: 'finished' };
      if (cause === 'deadline' && !state.opened) {
        if (!this.confirmedEver) throw new TransportError(`no opening control within ${OPENING_DEADLINE_MS / 1000} s`, { cause: error });
        return { kind: 'reconnect', wait: 'backoff', reason: 'opening deadline expired' };
      }
      if (cause === 'silence') return { kind: 'reconnect', wait: 'backoff', reason: 'no bytes within the heartbeat watchdog' };
      if (error instanceof AvisoError && !(error instanceof TransportError)) throw error;
      return { kind: 'reconnect', wait: 'backoff', reason: `transport error: ${describeNetworkFailure(error)}` };
    } finally {
      deadline.cancel();
      watchdog?.cancel();
      this.abort.signal.removeEventListener('abort', onAbort);
      connection.abort();
    }
  }

  /** `undefined` when the response is an event stream to read; otherwise a reconnect or a throw. */
  private checkResponse(response: Response): Promise<Outcome | undefined> {
    const auth = this.client.transport.options.auth !== undefined;
    return responseOutcome(response, {
      canRefresh: auth && !this.refreshedThisCycle,
      refresh: async () => {
        this.refreshedThisCycle = true;
        await this.client.transport.refresh();
      },
      now: this.client.clock.now(),
    });
  }

  private async handleFrame(frame: SseFrame, state: ConnectionState): Promise<Outcome | undefined> {
    if (!state.opened) {
      const action = openingAction(frame, state.expectReplay);
      if (action.kind === 'opened') this.handleOpening(action.data, state);
      return undefined;
    }
    const action = frameAction(frame);
    switch (action.kind) {
      case 'skip':
        return undefined;
      case 'close':
        return this.handleClose(action.data, state);
      case 'control':
        this.status({ type: 'control', frame: action.data });
        return undefined;
      case 'notification':
        await this.handleNotification(action.data);
        return undefined;
      case 'notice':
        if (action.notice.type === 'history_gap') this.wire.historyGap(action.notice);
        else {
          this.wire.sequenceReset();
          this.cursor.resetQueued();
        }
        await this.queue.push({ notice: action.notice }, this.abort.signal);
        return undefined;
      case 'opened':
        return undefined;
    }
  }

  private handleOpening(data: Record<string, unknown>, state: ConnectionState): void {
    const expected = state.expectReplay ? 'replay_started' : 'connection_established';
    state.opened = true;
    state.openedAt = this.client.clock.now();
    state.cancelDeadline();
    const attempt = this.attempt;
    this.attempt = 0;
    this.refreshedThisCycle = false;
    this.confirmedEver = true;
    if (this.ranged && this.pinnedEnd === undefined && typeof data.end_sequence === 'number') this.pinnedEnd = data.end_sequence;
    const opening: StreamOpening = {
      kind: expected,
      requestId: typeof data.request_id === 'string' ? data.request_id : undefined,
      topic: typeof data.topic === 'string' ? data.topic : undefined,
      frame: data,
    };
    this.resolveReady(opening);
    this.status({ type: 'opened', opening, attempt });
  }

  private handleClose(data: Record<string, unknown>, state: ConnectionState): Outcome {
    const outcome = closeOutcome(data, { replay: this.replay, sessionMs: this.client.clock.now() - state.openedAt });
    this.status({ type: 'control', frame: data });
    return outcome;
  }

  private async handleNotification(data: Record<string, unknown>): Promise<void> {
    const notification = decodeNotification(data, this.request.eventType);
    if (!this.wire.accept(notification.sequence)) return;
    await this.queue.push({ notification }, this.abort.signal);
  }
}
