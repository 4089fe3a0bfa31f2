/** Time and timers behind one seam, so the supervisor's rules are testable without real minutes. */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` after `ms`; the handle cancels it. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Uniform in [0, 1): full-jitter backoff draws from it. */
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    // A pending backoff or watchdog must not keep a process alive on its own.
    (timer as { unref?: () => void }).unref?.();
    return { cancel: () => clearTimeout(timer) };
  },
  random: () => Math.random(),
};

/** Resolves after `ms` on `clock`, or rejects when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an abort rejects with the signal's reason, as node:timers/promises does
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      handle.cancel();
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as above: the signal's reason
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
