import type { ServerResponse } from 'node:http';
import { withoutHttp1OnlyHeaders } from '../http/http2-headers.js';
import type { BufferBudget } from './buffer-budget.js';
import { resetStream } from './connection-reset.js';
import { frameWriterFor, type FrameWriter } from './frame-writer.js';
import type { StallWatchdog, WatchedConnection } from './stall-watchdog.js';
import type { SlowConsumerTrigger } from './stream-request.js';

const SOCKET_BUFFER_BYTES = 256 * 1024;
/** At most this much is written at once, so one stream's queue does not hold up the others' writes. */
const WRITE_BATCH_BYTES = 64 * 1024;

/**
 * Connections with frames queued since the last flush. Frames are not written when they are sent
 * but once per event-loop turn (`setImmediate`, after the I/O callbacks of the turn): every frame a
 * socket got in that turn, from however many notifications, leaves in one write. Under load,
 * system calls per delivered frame fall below one; an idle server adds no more than the rest of
 * the turn to a frame's way out.
 */
let toFlush: SseConnection[] = [];
let flushScheduled = false;

function scheduleFlush(connection: SseConnection): void {
  toFlush.push(connection);
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(flushQueued);
}

function flushQueued(): void {
  flushScheduled = false;
  const connections = toFlush;
  toFlush = [];
  for (const connection of connections) connection.flush();
}

/**
 * Headers of a successful stream (streaming.md §3.1). With CORS configured (browser.md §2) the
 * policy's headers for the request's origin replace the reference's `*`.
 */
export function sseHeaders(requestId: string, corsHeaders?: Readonly<Record<string, string>>): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'access-control-allow-origin': '*',
    'x-accel-buffering': 'no',
    'x-request-id': requestId,
  };
  if (corsHeaders === undefined) return headers;
  delete headers['access-control-allow-origin'];
  return { ...headers, ...corsHeaders };
}

/** The bounds of one stream's buffer (docs/streaming.md "Slow consumers"). */
export interface ConnectionLimits {
  /** `watch_endpoint.max_buffered_events`: frames waiting in the queue. */
  readonly maxQueuedFrames: number;
  /** `watch_endpoint.max_buffered_bytes`: the queue and what Node still holds for the socket. */
  readonly maxHeldBytes: number;
}

/** What the process shares among its streams: the byte budget and the stall watchdog. */
export interface ConnectionGuards {
  readonly budget: BufferBudget;
  readonly watchdog: StallWatchdog;
}

/** Why a frame was not queued: which bound it would have passed. */
export type Refusal = Exclude<SlowConsumerTrigger, 'stalled'>;

/** What the connection tells its stream about the socket. */
export interface ConnectionEvents {
  /** Bytes waited and the socket took none for the watchdog's bound: the client is not reading. */
  stalled(stalledMs: number): void;
  /** A closed stream did not end within the bound after its close, and was reset. */
  reset(): void;
}

/**
 * One SSE response with a bounded queue in front of the socket (docs/streaming.md "Slow
 * consumers"). Frames are written as fast as the socket takes them; while it is blocked they wait
 * in the queue, and a frame that would pass a bound (frames or bytes of this stream, bytes of the
 * whole process) is refused so the caller can end the stream instead of buffering without limit.
 *
 * No stream stalls silently: while bytes wait, the watchdog checks that the socket makes progress,
 * and once the stream is closed it must end within the watchdog's bound, or it is reset. Knows
 * nothing about frames' meaning.
 */
export class SseConnection implements WatchedConnection {
  private readonly queue: (string | Buffer)[] = [];
  private queuedBytes = 0;
  private waitingForDrain = false;
  /** In `toFlush` for the current turn. */
  private flushPending = false;
  private writer: FrameWriter | undefined;
  private finished = false;
  private readonly roomWaiters: (() => void)[] = [];
  /** Told once, when the stream is over (an AbortController per stream costs far more memory). */
  private overListeners: (() => void)[] | undefined = [];
  private refusal: Refusal | undefined;
  /** What this stream counts in the process budget: bytes queued or held by Node when last looked at. */
  private reportedBytes = 0;
  /** Writes the socket completed; the watchdog's measure of progress. */
  private writesCompleted = 0;
  private progressSeen = 0;
  private progressAt = 0;
  private watched = false;
  /** Set once closed: when the response must have ended. */
  private endDeadline: number | undefined;
  /** Set when the end is complete: the response finished and, if asked, the connection closed. */
  private ended = false;
  /** One callback for every write (no closure per frame): counts completions, refreshes the budget. */
  private readonly written = (): void => {
    this.writesCompleted++;
    if (this.reportedBytes > 0 && !this.ended) this.report();
  };

  constructor(
    private readonly response: ServerResponse,
    private readonly limits: ConnectionLimits,
    private readonly guards: ConnectionGuards,
    private readonly events: ConnectionEvents,
  ) {
    // `close` before we ended the response means the client went away (or the socket died).
    response.once('close', () => {
      if (!this.finished) this.abort();
    });
    // A client that left while the stream was being set up will never emit `close` again. A
    // response queued behind another one on its keep-alive connection (pipelining, or a client
    // reusing the connection the moment it read the previous response) has no socket yet: the
    // request's socket says whether the client is still there, and its `close` whether it leaves.
    const socket = response.socket ?? response.req.socket;
    if (!socket || socket.destroyed) queueMicrotask(() => this.abort());
    else if (!response.socket) {
      // Taken off once the stream is over: the connection may serve many more requests.
      const leave = (): void => this.abort();
      socket.once('close', leave);
      this.onOver(() => socket.removeListener('close', leave));
    }
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
    return this.queuedBytes + this.response.writableLength;
  }

  /** The bound the last refused frame would have passed. */
  get lastRefusal(): Refusal | undefined {
    return this.refusal;
  }

  /** Sends the status line and headers at once, so the client sees the stream start immediately. */
  open(headers: Record<string, string>): void {
    const http2 = this.response.req.httpVersionMajor === 2;
    this.response.writeHead(200, http2 ? withoutHttp1OnlyHeaders(headers) : headers);
    this.response.flushHeaders();
  }

  /** Chosen once the head is out (frame-writer.ts); until then there is nothing to write to. */
  private currentWriter(): FrameWriter | undefined {
    if (!this.writer && this.response.headersSent) this.writer = frameWriterFor(this.response);
    return this.writer;
  }

  /** Queues frames and writes them in as few writes as possible; false (nothing queued) when the stream is over or they do not fit. */
  sendAll(frames: readonly Buffer[]): boolean {
    if (this.finished) return false;
    let bytes = 0;
    for (const frame of frames) bytes += frame.length;
    if (!this.admits(frames.length, bytes)) return false;
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
    this.queue.push(text);
    this.queuedBytes += bytes;
    this.queueFlush();
    return true;
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
      this.report();
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
   * final frame is the next thing the client reads (streaming.md §7); a completed one keeps it.
   * `closeConnection`: the HTTP/1.1 connection ends with the response (a client that fell behind
   * gets no further request on it). Either way the end must be complete within the watchdog's
   * bound, or the stream is reset.
   */
  finish(lastFrames: string, keepQueued: boolean, closeConnection = false): void {
    if (this.finished) return;
    this.finished = true;
    const queued = this.queue.splice(0);
    this.queuedBytes = 0;
    const pending = keepQueued ? queued : [];
    if (!this.response.destroyed && !this.response.writableEnded) {
      if (pending.length > 0) this.currentWriter()?.writeAll(pending, this.written);
      this.response.end(lastFrames);
      this.awaitEnd(closeConnection);
    } else {
      this.settle();
    }
    this.release();
  }

  /** The watchdog's check (WatchedConnection): false once nothing needs watching. */
  check(now: number): boolean {
    if (this.endDeadline !== undefined) {
      if (this.ended) return this.unwatched();
      if (now < this.endDeadline) return true;
      this.settle();
      resetStream(this.response);
      this.events.reset();
      return this.unwatched();
    }
    if (this.finished) return this.unwatched();
    this.report();
    if (this.reportedBytes === 0) return this.unwatched();
    if (this.writesCompleted !== this.progressSeen) {
      this.progressSeen = this.writesCompleted;
      this.progressAt = now;
      return true;
    }
    const stalledMs = now - this.progressAt;
    if (stalledMs < this.guards.watchdog.boundMs) return true;
    this.watched = false;
    // The stream closes itself (slow consumer): its end is then watched again, under the same check.
    this.events.stalled(stalledMs);
    return this.watched;
  }

  /** Whether `frames` more frames of `bytes` fit every bound; records the bound they would pass. */
  private admits(frames: number, bytes: number): boolean {
    if (this.queue.length + frames > this.limits.maxQueuedFrames) return this.refuse('buffered_events');
    const held = this.queuedBytes + (this.writer ? this.writer.pendingBytes : this.response.writableLength);
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

  /** Brings this stream's share of the process budget up to date; watches it while it holds bytes. */
  private report(): void {
    const held = this.queuedBytes + this.response.writableLength;
    if (held === this.reportedBytes) return;
    this.guards.budget.change(this.reportedBytes, held);
    this.reportedBytes = held;
    if (held > 0 && !this.watched) this.startWatching();
  }

  private startWatching(): void {
    this.watched = true;
    this.progressSeen = this.writesCompleted;
    this.progressAt = this.guards.watchdog.now();
    this.guards.watchdog.watch(this);
  }

  private unwatched(): false {
    this.watched = false;
    return false;
  }

  /**
   * After `end()`: the end is complete when Node handed everything to the kernel (`finish`) and,
   * with `closeConnection`, once the client closed its side too. An HTTP/2 stream is complete when
   * it closed: its `finish` can come while flow control still holds its data.
   */
  private awaitEnd(closeConnection: boolean): void {
    const { response } = this;
    this.endDeadline = this.guards.watchdog.now() + this.guards.watchdog.boundMs;
    this.report();
    const http2 = response.req.httpVersionMajor === 2;
    const socket = response.socket ?? response.req.socket;
    if (http2) {
      response.once('close', () => this.settle());
    } else if (closeConnection && socket) {
      socket.once('close', () => this.settle());
      response.once('finish', () => {
        this.report();
        // FIN after the data; the descriptor stays open until the client closes its side, so the
        // kernel keeps delivering what it holds for as long as the client reads.
        if (!socket.destroyed) socket.end();
      });
    } else {
      response.once('finish', () => this.settle());
      response.once('close', () => this.settle());
    }
    if (!this.watched) {
      this.watched = true;
      this.guards.watchdog.watch(this);
    }
  }

  /** The end is complete (or was cut): nothing of this stream is held any more. */
  private settle(): void {
    if (this.ended) return;
    this.ended = true;
    this.guards.budget.change(this.reportedBytes, 0);
    this.reportedBytes = 0;
    if (this.watched) {
      this.watched = false;
      this.guards.watchdog.forget(this);
    }
  }

  private abort(): void {
    if (this.finished) return;
    this.finished = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.settle();
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
      this.report();
      return;
    }
    while (this.queue.length > 0 && !this.finished) {
      const batch = this.takeWriteBatch();
      writer.writeAll(batch, this.written);
      if (this.waitForDrainIfFull(writer)) break;
    }
    this.report();
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
    return count === queue.length ? queue.splice(0) : queue.splice(0, count);
  }

  private wakeWaiters(): void {
    if (this.roomWaiters.length === 0) return; // the common case: no array made per write
    const waiters = this.roomWaiters.splice(0);
    for (const wake of waiters) wake();
  }
}
