import { ConnectionWatch, type ConnectionEvents, type ConnectionGuards, type WatchedStream } from './connection-watch.js';
import { scheduleFlush } from './flush-turn.js';
import { QueueAges } from './queue-ages.js';
import type { FrameWriter, StreamSink } from './stream-sink.js';
import type { SlowConsumerTrigger } from './stream-request.js';

const SOCKET_BUFFER_BYTES = 256 * 1024;
/** At most this much is written at once, so one stream's queue does not hold up the others' writes. */
const WRITE_BATCH_BYTES = 64 * 1024;

/** The bounds of one stream's buffer (docs/streaming.md "Slow consumers"). */
export interface ConnectionLimits {
  /** `watch_endpoint.max_buffered_events`: frames waiting in the queue. */
  readonly maxQueuedFrames: number;
  /** `watch_endpoint.max_buffered_bytes`: the queue and what Node still holds for the socket. */
  readonly maxHeldBytes: number;
}

/** Why a frame was not queued: which bound it would have passed. */
export type Refusal = Exclude<SlowConsumerTrigger, 'stalled'>;

/**
 * One SSE response with a bounded queue in front of the socket (docs/streaming.md "Slow
 * consumers"). Frames are written as fast as the socket takes them; while it is blocked they wait
 * in the queue, and a frame that would pass a bound (frames or bytes of this stream, bytes of the
 * whole process) is refused so the caller can end the stream instead of buffering without limit.
 *
 * No stream stalls silently (connection-watch.ts): while bytes wait, the watchdog checks that the
 * socket makes progress, and once the stream is closed it must end within the watchdog's bound, or
 * it is reset. Knows nothing about frames' meaning, nor about the transport under its sink.
 */
export class SseConnection implements WatchedStream {
  private readonly queue: (string | Buffer)[] = [];
  private queuedBytes = 0;
  /** When the queued frames were queued: the admin list's `lag_ms` (D49). */
  private readonly ages = new QueueAges();
  private waitingForDrain = false;
  /** In `toFlush` for the current turn. */
  private flushPending = false;
  private writer: FrameWriter | undefined;
  private finished = false;
  private readonly roomWaiters: (() => void)[] = [];
  /** Told once, when the stream is over (an AbortController per stream costs far more memory). */
  private overListeners: (() => void)[] | undefined = [];
  private refusal: Refusal | undefined;
  private readonly watch: ConnectionWatch;

  constructor(
    private readonly sink: StreamSink,
    private readonly limits: ConnectionLimits,
    private readonly guards: ConnectionGuards,
    events: ConnectionEvents,
  ) {
    this.watch = new ConnectionWatch(this, sink, guards, events);
    this.onOver(sink.onClientGone(() => this.abort()));
  }

  /**
   * Runs `listener` once the stream is over for any reason (finished by us or abandoned by the
   * client), at once if it is; the returned function takes it back.
   */
  onOver(listener: () => void): () => void {
    const listeners = this.overListeners;
    if (!listeners) {
      listener();
      return () => undefined;
    }
    listeners.push(listener);
    return () => {
      const index = listeners.indexOf(listener);
      if (index >= 0) listeners.splice(index, 1);
    };
  }

  get isOpen(): boolean {
    return !this.finished;
  }

  get queuedFrames(): number {
    return this.queue.length;
  }

  /** Bytes waiting for the client: in the queue, and handed to Node but not yet to the kernel. */
  get heldBytes(): number {
    return this.queuedBytes + this.sink.heldBytes;
  }

  /** How long the oldest queued frame has waited at `now` (ms); 0 when the queue is empty. */
  queueAge(now: number): number {
    return this.ages.oldestAge(now);
  }

  /** The bound the last refused frame would have passed. */
  get lastRefusal(): Refusal | undefined {
    return this.refusal;
  }

  /** Sends the status line and headers at once, so the client sees the stream start immediately. */
  open(headers: Record<string, string>): void {
    this.sink.open(200, headers);
  }

  /** Until the head is out there is nothing to write to. */
  private currentWriter(): FrameWriter | undefined {
    if (!this.writer) this.writer = this.sink.writer();
    return this.writer;
  }

  /** Queues frames and writes them in as few writes as possible; false (nothing queued) when the stream is over or they do not fit. */
  sendAll(frames: readonly Buffer[]): boolean {
    if (this.finished) return false;
    let bytes = 0;
    for (const frame of frames) bytes += frame.length;
    if (!this.admits(frames.length, bytes)) return false;
    this.noteQueued(frames.length);
    for (const frame of frames) this.queue.push(frame);
    this.queuedBytes += bytes;
    this.queueFlush();
    return true;
  }

  /** Queues one rendered frame; false when the stream is over or the frame does not fit. */
  send(text: string | Buffer): boolean {
    if (this.finished) return false;
    const bytes = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    if (!this.admits(1, bytes)) return false;
    this.noteQueued(1);
    this.queue.push(text);
    this.queuedBytes += bytes;
    this.queueFlush();
    return true;
  }

  /**
   * Dates frames about to be queued. Frames queued before this turn's flush join the mark of the
   * frames before them (one clock read per stream and turn, whatever the rate); the first frame of
   * an empty queue, and every frame while the socket is full, read the clock.
   */
  private noteQueued(frames: number): void {
    if (this.flushPending && this.queue.length > 0) this.ages.join(frames);
    else this.ages.add(this.guards.watchdog.now(), frames);
  }

  /** Writes what was queued this turn (see `toFlush`). */
  flush(): void {
    this.flushPending = false;
    this.pump();
  }

  private queueFlush(): void {
    if (this.flushPending) return;
    // While the socket is full, `drain` pumps the queue: only the budget needs to know now.
    if (this.waitingForDrain) {
      this.watch.report();
      return;
    }
    // Until the head is sent there is nothing to write to.
    if (!this.currentWriter()) return;
    this.flushPending = true;
    scheduleFlush(this);
  }

  /** Resolves once everything queued was handed to the socket and it accepts more (or the stream ended). */
  async drained(): Promise<void> {
    while (!this.finished && (this.queue.length > 0 || this.waitingForDrain)) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
  }

  /** Resolves once fewer than `frames` frames are queued and fewer than `bytes` bytes held (or the stream ended). */
  async below(frames: number, bytes: number = Number.POSITIVE_INFINITY): Promise<void> {
    while (!this.finished && (this.queue.length >= frames || this.heldBytes >= bytes)) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
  }

  /**
   * Ends the response with its last frames. An interrupted stream drops what is still queued, so the
   * final frame is the next thing the client reads (docs/design/rules/streaming.md §7); a completed one keeps it.
   * `closeConnection`: the HTTP/1.1 connection ends with the response (a client that fell behind
   * gets no further request on it). Either way the end must be complete within the watchdog's
   * bound, or the stream is reset.
   */
  finish(lastFrames: string, keepQueued: boolean, closeConnection = false): void {
    if (this.finished) return;
    this.finished = true;
    const queued = this.queue.splice(0);
    this.queuedBytes = 0;
    this.ages.clear();
    const pending = keepQueued ? queued : [];
    if (this.sink.writable) {
      if (pending.length > 0) this.currentWriter()?.writeAll(pending, this.watch.written);
      this.sink.end(lastFrames, closeConnection, this.watch);
      this.watch.awaitEnd();
    } else {
      this.watch.settled();
    }
    this.release();
  }

  /** Whether `frames` more frames of `bytes` fit every bound; records the bound they would pass. */
  private admits(frames: number, bytes: number): boolean {
    if (this.queue.length + frames > this.limits.maxQueuedFrames) return this.refuse('buffered_events');
    const held = this.queuedBytes + (this.writer ? this.writer.pendingBytes : this.sink.heldBytes);
    // A stream holding nothing always takes its next frame, however large: it is keeping up.
    if (held === 0) return true;
    if (held + bytes > this.limits.maxHeldBytes) return this.refuse('buffered_bytes');
    if (this.guards.budget.refuses(held, bytes)) return this.refuse('process_buffered_bytes');
    return true;
  }

  private refuse(refusal: Refusal): false {
    this.refusal = refusal;
    return false;
  }

  private abort(): void {
    if (this.finished) return;
    this.finished = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.ages.clear();
    this.watch.settled();
    this.release();
  }

  private release(): void {
    const listeners = this.overListeners;
    this.overListeners = undefined;
    if (listeners) for (const listener of listeners) listener();
    this.wakeWaiters();
  }

  private pump(): void {
    const writer = this.currentWriter();
    if (this.waitingForDrain || !writer) {
      this.watch.report();
      return;
    }
    while (this.queue.length > 0 && !this.finished) {
      const batch = this.takeWriteBatch();
      writer.writeAll(batch, this.watch.written);
      if (this.waitForDrainIfFull(writer)) break;
    }
    this.watch.report();
    this.wakeWaiters();
  }

  /**
   * Node's own buffer may hold up to SOCKET_BUFFER_BYTES before we wait for `drain`: far more than
   * its 16 KiB default mark, so a replay batch is handed over without a round trip per batch to the
   * client, yet still bounded per stream. True when writing must now wait.
   */
  private waitForDrainIfFull(writer: FrameWriter): boolean {
    if (writer.pendingBytes <= SOCKET_BUFFER_BYTES) return false;
    this.waitingForDrain = true;
    writer.onceDrained(() => {
      this.waitingForDrain = false;
      this.pump();
    });
    return true;
  }

  /** The next queued frames, up to WRITE_BATCH_BYTES (at least one), taken off the queue. */
  private takeWriteBatch(): (string | Buffer)[] {
    const { queue } = this;
    let count = 0;
    let bytes = 0;
    while (count < queue.length && (count === 0 || bytes < WRITE_BATCH_BYTES)) {
      const frame = queue[count] as string | Buffer;
      bytes += typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length;
      count++;
    }
    this.queuedBytes -= bytes;
    this.ages.take(count);
    return count === queue.length ? queue.splice(0) : queue.splice(0, count);
  }

  private wakeWaiters(): void {
    if (this.roomWaiters.length === 0) return; // the common case: no array made per write
    const waiters = this.roomWaiters.splice(0);
    for (const wake of waiters) wake();
  }
}
