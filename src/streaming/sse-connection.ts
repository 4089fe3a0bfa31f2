import type { ServerResponse } from 'node:http';
import { withoutHttp1OnlyHeaders } from '../http/http2-headers.js';

const SOCKET_BUFFER_BYTES = 256 * 1024;
const WRITE_CHUNK_BYTES = 64 * 1024;
/**
 * How long an ended stream may take to hand its last bytes to a client that stopped reading. After
 * that the socket is destroyed: a client that keeps its TCP window shut would otherwise hold the
 * socket and everything buffered for it forever (after a slow-consumer close), and hold up
 * graceful shutdown until the 30 s grace ran out.
 */
export const FINAL_FLUSH_TIMEOUT_MS = 10_000;

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

/**
 * One SSE response with a bounded queue in front of the socket (streaming.md §12, D9). Frames are
 * written as fast as the socket takes them; while it is blocked they wait in the queue, and a
 * queue that would grow past its bound is refused so the caller can end the stream instead of
 * buffering without limit. Knows nothing about frames' meaning.
 */
export class SseConnection {
  private readonly queue: (string | Buffer)[] = [];
  private waitingForDrain = false;
  private finished = false;
  private readonly roomWaiters: (() => void)[] = [];
  private readonly aborted = new AbortController();

  constructor(
    private readonly response: ServerResponse,
    private readonly maxQueuedFrames: number,
    private readonly finalFlushTimeoutMs: number = FINAL_FLUSH_TIMEOUT_MS,
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
      this.aborted.signal.addEventListener('abort', () => socket.removeListener('close', leave), { once: true });
    }
  }

  /** Aborted when the stream is over for any reason: finished by us or abandoned by the client. */
  get signal(): AbortSignal {
    return this.aborted.signal;
  }

  get isOpen(): boolean {
    return !this.finished;
  }

  get queuedFrames(): number {
    return this.queue.length;
  }

  /** Sends the status line and headers at once, so the client sees the stream start immediately. */
  open(headers: Record<string, string>): void {
    const http2 = this.response.req.httpVersionMajor === 2;
    this.response.writeHead(200, http2 ? withoutHttp1OnlyHeaders(headers) : headers);
    this.response.flushHeaders();
  }

  /** Queues frames and writes them in as few writes as possible; false (nothing queued) when the stream is over or they do not fit. */
  sendAll(frames: readonly Buffer[]): boolean {
    if (this.finished) return false;
    if (this.queue.length + frames.length > this.maxQueuedFrames) return false;
    for (const frame of frames) this.queue.push(frame);
    this.pump();
    return true;
  }

  /** Queues one rendered frame; false when the stream is over or the queue is full. */
  send(text: string | Buffer): boolean {
    if (this.finished) return false;
    if (this.queue.length >= this.maxQueuedFrames) return false;
    if (this.queue.length === 0 && !this.waitingForDrain) {
      // Nothing waits before it: what `pump` would do with a queue of one, without the queue (a
      // fan-out sends one frame to each of its watchers).
      this.response.write(text);
      this.waitForDrainIfFull();
      this.wakeWaiters();
      return true;
    }
    this.queue.push(text);
    this.pump();
    return true;
  }

  /** Resolves once everything queued was handed to the socket and it accepts more (or the stream ended). */
  async drained(): Promise<void> {
    while (!this.finished && (this.queue.length > 0 || this.waitingForDrain)) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
  }

  /** Resolves once fewer than `limit` frames are queued (or the stream ended). */
  async below(limit: number): Promise<void> {
    while (!this.finished && this.queue.length >= limit) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
  }

  /**
   * Ends the response with its last frames. An interrupted stream drops what is still queued, so the
   * final frame is the next thing the client reads (streaming.md §7); a completed one keeps it.
   */
  finish(lastFrames: string, keepQueued: boolean): void {
    if (this.finished) return;
    this.finished = true;
    const queued = this.queue.splice(0);
    const pending = keepQueued ? queued : [];
    if (!this.response.destroyed && !this.response.writableEnded) {
      for (const chunk of pending) this.response.write(chunk);
      this.response.end(lastFrames);
      this.destroyUnlessFlushed();
    }
    this.release();
  }

  /** Gives the client `finalFlushTimeoutMs` to read what the ended response still holds. */
  private destroyUnlessFlushed(): void {
    const { response } = this;
    if (response.writableFinished) return;
    const timer = setTimeout(() => response.destroy(), this.finalFlushTimeoutMs);
    timer.unref();
    const settled = (): void => clearTimeout(timer);
    response.once('finish', settled);
    response.once('close', settled);
  }

  private abort(): void {
    if (this.finished) return;
    this.finished = true;
    this.queue.length = 0;
    this.release();
  }

  private release(): void {
    this.aborted.abort();
    this.wakeWaiters();
  }

  private pump(): void {
    if (this.waitingForDrain) return;
    while (this.queue.length > 0 && !this.finished) {
      this.response.write(this.takeWriteChunk());
      if (this.waitForDrainIfFull()) break;
    }
    this.wakeWaiters();
  }

  /**
   * Node's own buffer may hold up to SOCKET_BUFFER_BYTES before we wait for `drain`: far more than
   * its 16 KiB default mark, so a replay batch is handed over without a round trip per batch to the
   * client, yet still bounded per stream. True when writing must now wait.
   */
  private waitForDrainIfFull(): boolean {
    if (this.response.writableLength <= SOCKET_BUFFER_BYTES) return false;
    this.waitingForDrain = true;
    this.response.once('drain', () => {
      this.waitingForDrain = false;
      this.pump();
    });
    return true;
  }

  /**
   * The next queued frame, or several joined up to WRITE_CHUNK_BYTES: a replay queues a whole batch
   * at once, and one write per frame (each its own HTTP chunk) cost more than the frames themselves.
   */
  private takeWriteChunk(): string | Buffer {
    const first = this.queue.shift() as string | Buffer;
    if (typeof first === 'string') return first;
    const parts: Buffer[] = [first];
    let bytes = first.length;
    for (let next = this.queue[0]; next instanceof Buffer && bytes < WRITE_CHUNK_BYTES; next = this.queue[0]) {
      parts.push(next);
      bytes += next.length;
      this.queue.shift();
    }
    return parts.length === 1 ? first : Buffer.concat(parts, bytes);
  }

  private wakeWaiters(): void {
    if (this.roomWaiters.length === 0) return; // the common case: no array made per write
    const waiters = this.roomWaiters.splice(0);
    for (const wake of waiters) wake();
  }
}
