/**
 * Where one stream's bytes go, as the transport that took the request over supplies it (for
 * HTTP/1.1 and HTTP/2, `HttpStreamSink`). The stream core decides what is written, when, and how
 * much may wait; the sink owns the protocol: the head's rules, how bytes reach the socket, how a
 * response ends, how a stream is cut.
 */
export interface StreamSink {
  /** Bytes handed to the transport but not yet to the kernel. */
  readonly heldBytes: number;
  /** False once the response was ended or its client is gone: nothing can be written or ended. */
  readonly writable: boolean;
  /** Sends the status and headers at once, so the client sees the stream start immediately. */
  open(status: number, headers: Readonly<Record<string, string>>): void;
  /** What writes the frames, once the head is out; undefined before. */
  writer(): FrameWriter | undefined;
  /**
   * Ends the response with `last`. `closeConnection`: the connection ends with it (a client that
   * fell behind gets no further request on it). The sink tells `end` how the end goes.
   */
  end(last: string, closeConnection: boolean, end: EndListener): void;
  /** Cuts the stream so that its client learns it at once. */
  reset(): void;
  /**
   * `listener` runs when the client goes away (soon, if it already has). It may also run once the
   * stream ended the response, and more than once: the stream ignores it then. The returned
   * function takes back what the sink listens to for it.
   */
  onClientGone(listener: () => void): () => void;
}

/** How a response's end goes. */
export interface EndListener {
  /** The end is complete, or was cut: nothing of the stream is held any more. */
  settled(): void;
  /** Everything went to the kernel; the end completes once the client closed its side too. */
  handedOver(): void;
}

/**
 * Writes a stream's frames. It runs once per socket per event-loop turn for every delivered
 * notification: an implementation adds no allocation and no copy per write.
 */
export interface FrameWriter {
  /** Bytes handed to Node but not yet to the kernel. */
  readonly pendingBytes: number;
  /** Writes the frames in order; `written` runs once the last of them reached the kernel. */
  writeAll(frames: readonly (string | Buffer)[], written: () => void): void;
  /** `listener` runs once what is pending has gone to the kernel, after a write found it full. */
  onceDrained(listener: () => void): void;
}

/**
 * The writes of one flush turn (flush-turn.ts), which a transport may gather and make back to back
 * when the turn's flush ends: a fan-out then runs its system calls one after the other, rather
 * than between the stream logic of every socket.
 */
export interface WriteTurn {
  begin(): void;
  end(): void;
}
