/** One stream's place under the stream limit; given back once, however the stream ends. */
export interface StreamSlot {
  release(): void;
}

/**
 * `application.max_streams` (D44): how many watch and replay streams the process holds at once.
 * A request takes its slot before anything else is done for it (validation, authorisation,
 * backend setup), so requests arriving together cannot all pass a check and then all open; it
 * gives the slot back when it ends without a stream, or when its stream is released.
 */
export class StreamSlots {
  private taken = 0;

  constructor(readonly limit: number) {}

  /** Streams holding a slot, those still being set up included. */
  get inUse(): number {
    return this.taken;
  }

  /** A slot, or `undefined` when all `limit` are taken. */
  take(): StreamSlot | undefined {
    if (this.taken >= this.limit) return undefined;
    this.taken++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.taken--;
      },
    };
  }
}
