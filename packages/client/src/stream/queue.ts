/**
 * A bounded hand-over queue: `push` waits while full, so a slow consumer stops the supervisor
 * reading the socket (backpressure end to end).
 */
export class BoundedQueue<T> {
  private readonly items: T[] = [];
  private spaceWaiters: (() => void)[] = [];
  private itemWaiters: (() => void)[] = [];
  constructor(readonly capacity: number) {}

  get length(): number {
    return this.items.length;
  }

  async push(item: T, signal: AbortSignal): Promise<void> {
    while (this.items.length >= this.capacity) {
      if (signal.aborted) throw signal.reason;
      await new Promise<void>((resolve) => {
        // Removed once space is made: the signal lives as long as the stream, a push waits per item.
        const onAbort = (): void => resolve();
        this.spaceWaiters.push(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    if (signal.aborted) throw signal.reason;
    this.items.push(item);
    this.wake('item');
  }

  shift(): T | undefined {
    const item = this.items.shift();
    if (item !== undefined) this.wake('space');
    return item;
  }

  /** Drops what the consumer has not taken (a reconnect re-fetches it). */
  clear(): void {
    this.items.length = 0;
    this.wake('space');
  }

  /** What the consumer has not taken yet, oldest first. */
  waiting(): readonly T[] {
    return this.items;
  }

  /** Resolves when an item arrives or `wake` is called. */
  waitForItem(): Promise<void> {
    return new Promise((resolve) => this.itemWaiters.push(resolve));
  }

  wake(which: 'item' | 'space' | 'all' = 'all'): void {
    if (which !== 'space') for (const waiter of this.itemWaiters.splice(0)) waiter();
    if (which !== 'item') for (const waiter of this.spaceWaiters.splice(0)) waiter();
  }
}
