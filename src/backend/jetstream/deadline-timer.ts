/**
 * One pending deadline at a time, for a live feed's held message (`LiveGapFiller.holdDeadline`).
 * The callback runs only after the event loop has read the sockets once more past the deadline:
 * when the process itself lagged past it, what it waited for (an announcement) may already be
 * received and waiting to be read, and must count before the wait is judged over.
 */
export class DeadlineTimer {
  private pending: { readonly at: number; readonly timer: NodeJS.Timeout; afterIo: NodeJS.Immediate | undefined } | undefined;

  /** Calls `onPassed` once `at` (a `performance.now()` time) has passed; `undefined` cancels. Same deadline: kept. */
  set(at: number | undefined, onPassed: () => void): void {
    if (this.pending?.at === at) return;
    this.cancel();
    if (at === undefined) return;
    const pending = {
      at,
      // setImmediate runs after the poll phase that follows this timer: the sockets are read first.
      timer: setTimeout(() => (pending.afterIo = setImmediate(passed)), Math.max(1, Math.ceil(at - performance.now()))),
      afterIo: undefined as NodeJS.Immediate | undefined,
    };
    const passed = (): void => {
      if (this.pending !== pending) return;
      this.pending = undefined;
      onPassed();
    };
    this.pending = pending;
  }

  cancel(): void {
    if (this.pending === undefined) return;
    clearTimeout(this.pending.timer);
    if (this.pending.afterIo !== undefined) clearImmediate(this.pending.afterIo);
    this.pending = undefined;
  }
}
