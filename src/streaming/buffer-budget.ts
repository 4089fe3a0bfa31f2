/**
 * The bytes every open stream of the process holds for its client and has not yet handed to the
 * kernel (`watch_endpoint.max_total_buffered_bytes`, docs/streaming.md "Slow consumers"). One per
 * process, shared by its streams: each reports what it holds whenever that changes, so the total
 * is known without visiting them.
 *
 * Which stream gives way when the total passes the bound: one that would hold more than its fair
 * share, the bound divided among the streams holding anything. However many frozen streams there
 * are, together they stay within the bound; a stream whose socket takes its frames as they come
 * holds nothing and is never the one refused.
 */
export class BufferBudget {
  private held = 0;
  private holders = 0;

  constructor(readonly limitBytes: number) {}

  get totalBytes(): number {
    return this.held;
  }

  /** Streams holding at least one byte. */
  get holdingStreams(): number {
    return this.holders;
  }

  /** One stream's holding went from `before` to `after` bytes. */
  change(before: number, after: number): void {
    if (before === after) return;
    this.held += after - before;
    if (before === 0) this.holders++;
    else if (after === 0) this.holders--;
  }

  /** Whether a stream holding `held` bytes must refuse `adding` more: over the bound, and past its share. */
  refuses(held: number, adding: number): boolean {
    if (this.held + adding <= this.limitBytes || held === 0) return false;
    return (held + adding) * Math.max(1, this.holders) > this.limitBytes;
  }
}
