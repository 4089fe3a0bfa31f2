import type { WriteTurn } from './stream-sink.js';

/** A connection that writes what it queued when its turn's flush comes (sse-connection.ts). */
export interface Flushable {
  flush(): void;
}

/**
 * Connections with frames queued since the last flush. Frames are not written when they are sent
 * but once per event-loop turn (`setImmediate`, after the I/O callbacks of the turn): every frame a
 * socket got in that turn, from however many notifications, leaves in one write. Under load,
 * system calls per delivered frame fall below one; an idle server adds no more than the rest of
 * the turn to a frame's way out.
 *
 * A turn flushes for at most `FLUSH_SLICE_MS`, then leaves the rest to the next turn, first in
 * line: one notification to 10,000 streams takes about 100 ms of writes, and meanwhile accepts,
 * probes, notifies and other streams' frames are served between slices. A connection waiting for
 * its slice keeps gathering frames, which then leave with it.
 */
export const FLUSH_SLICE_MS = 10;
/** How many connections are flushed between two looks at the clock. */
const CLOCK_EVERY = 64;

let toFlush: Flushable[] = [];
/** The first connection of `toFlush` not yet flushed. */
let next = 0;
let flushScheduled = false;
let writeTurn: WriteTurn | undefined;

/** The transport's gathering of a turn's writes (one per process: the transport of its streams). */
export function useWriteTurn(turn: WriteTurn): void {
  writeTurn = turn;
}

/** Flushes `connection` at the end of this turn; the caller asks once per turn. */
export function scheduleFlush(connection: Flushable): void {
  toFlush.push(connection);
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(flushQueued);
}

function flushQueued(): void {
  flushScheduled = false;
  const deadline = performance.now() + FLUSH_SLICE_MS;
  writeTurn?.begin();
  try {
    while (next < toFlush.length) {
      (toFlush[next++] as Flushable).flush();
      if (next % CLOCK_EVERY === 0 && performance.now() >= deadline) break;
    }
  } finally {
    writeTurn?.end();
  }
  if (next < toFlush.length) {
    flushScheduled = true;
    setImmediate(flushQueued);
    return;
  }
  toFlush = [];
  next = 0;
}
