/**
 * Time source injected into the app and backends, so heartbeats, maximum durations and date
 * cursors are testable without real waiting.
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

/**
 * Node fires a timer whose delay exceeds `MAX_TIMER_DELAY_MS` (about 24.8 days) after 1 ms; an
 * operator may well configure a longer watch lifetime or heartbeat, so the system clock honours
 * any delay by re-arming in steps.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    if (ms <= MAX_TIMER_DELAY_MS) {
      const handle = setTimeout(callback, ms);
      return { cancel: () => clearTimeout(handle) };
    }
    return setTimeoutAt(systemClock, Date.now() + ms, callback);
  },
  setInterval(callback, ms) {
    if (ms <= MAX_TIMER_DELAY_MS) {
      const handle = setInterval(callback, ms);
      return { cancel: () => clearInterval(handle) };
    }
    let current: TimerHandle;
    const next = (at: number): void => {
      current = setTimeoutAt(systemClock, at, () => {
        next(at + ms);
        callback();
      });
    };
    next(Date.now() + ms);
    return { cancel: () => current.cancel() };
  },
};

/** The longest delay a Node timer honours; a longer one fires after 1 ms instead. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * Calls `callback` once, when the clock reaches `atMs`: never synchronously (an instant already
 * past fires on the next timer turn), and however far away it is, by re-arming in steps no longer
 * than `MAX_TIMER_DELAY_MS` (a token may expire in a year).
 */
export function setTimeoutAt(clock: Clock, atMs: number, callback: () => void): TimerHandle {
  let current: TimerHandle;
  const arm = (): void => {
    current = clock.setTimeout(fire, Math.min(Math.max(0, atMs - clock.now()), MAX_TIMER_DELAY_MS));
  };
  const fire = (): void => {
    if (clock.now() >= atMs) callback();
    else arm();
  };
  arm();
  return { cancel: () => current.cancel() };
}
