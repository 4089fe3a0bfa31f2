/**
 * Time source injected into the app and backends (design.md "Time"), so heartbeats, maximum
 * durations and date cursors are testable without real waiting.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  setInterval(callback: () => void, ms: number): TimerHandle;
}

export interface TimerHandle {
  cancel(): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    const handle = setTimeout(callback, ms);
    return { cancel: () => clearTimeout(handle) };
  },
  setInterval(callback, ms) {
    const handle = setInterval(callback, ms);
    return { cancel: () => clearInterval(handle) };
  },
};
