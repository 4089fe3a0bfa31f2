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
 */
let toFlush: Flushable[] = [];
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
  const connections = toFlush;
  toFlush = [];
  writeTurn?.begin();
  try {
    for (const connection of connections) connection.flush();
  } finally {
    writeTurn?.end();
  }
}
