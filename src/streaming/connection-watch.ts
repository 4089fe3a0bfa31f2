import type { BufferBudget } from './buffer-budget.js';
import type { StallWatchdog, WatchedConnection } from './stall-watchdog.js';
import type { EndListener, StreamSink } from './stream-sink.js';

/** What the process shares among its streams: the byte budget and the stall watchdog. */
export interface ConnectionGuards {
  readonly budget: BufferBudget;
  readonly watchdog: StallWatchdog;
}

/** What the connection tells its stream about the socket. */
export interface ConnectionEvents {
  /** Bytes waited and the socket took none for the watchdog's bound: the client is not reading. */
  stalled(stalledMs: number): void;
  /** A closed stream did not end within the bound after its close, and was reset. */
  reset(): void;
}

/** What the watch reads of its connection. */
export interface WatchedStream {
  /** Bytes waiting for the client: queued, and handed to the transport but not yet to the kernel. */
  readonly heldBytes: number;
  readonly isOpen: boolean;
}

/**
 * One stream's share of the process budget and its place under the stall watchdog: no stream
 * stalls silently. While bytes wait, the socket must make progress within the watchdog's bound, or
 * the stream is told it stalled; once closed, the stream must end within the bound, or it is
 * reset (D37).
 */
export class ConnectionWatch implements WatchedConnection, EndListener {
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
  readonly written = (): void => {
    this.writesCompleted++;
    if (this.reportedBytes > 0 && !this.ended) this.report();
  };

  constructor(
    private readonly stream: WatchedStream,
    private readonly sink: StreamSink,
    private readonly guards: ConnectionGuards,
    private readonly events: ConnectionEvents,
  ) {}

  /** The watchdog's check (WatchedConnection): false once nothing needs watching. */
  check(now: number): boolean {
    if (this.endDeadline !== undefined) {
      if (this.ended) return this.unwatched();
      if (now < this.endDeadline) return true;
      this.settled();
      this.sink.reset();
      this.events.reset();
      return this.unwatched();
    }
    if (!this.stream.isOpen) return this.unwatched();
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

  /** Brings this stream's share of the process budget up to date; watches it while it holds bytes. */
  report(): void {
    const held = this.stream.heldBytes;
    if (held === this.reportedBytes) return;
    this.guards.budget.change(this.reportedBytes, held);
    this.reportedBytes = held;
    if (held > 0 && !this.watched) this.startWatching();
  }

  /** After the sink's `end`: the end must be complete (`settled`) within the watchdog's bound. */
  awaitEnd(): void {
    this.endDeadline = this.guards.watchdog.now() + this.guards.watchdog.boundMs;
    this.report();
    if (!this.watched) {
      this.watched = true;
      this.guards.watchdog.watch(this);
    }
  }

  /** The end is complete (or was cut): nothing of this stream is held any more. */
  settled(): void {
    if (this.ended) return;
    this.ended = true;
    this.guards.budget.change(this.reportedBytes, 0);
    this.reportedBytes = 0;
    if (this.watched) {
      this.watched = false;
      this.guards.watchdog.forget(this);
    }
  }

  handedOver(): void {
    this.report();
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
}
