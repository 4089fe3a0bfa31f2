import type { Notification } from '../../src/index.js';

/** Pulls up to `count` notifications (fewer if the stream ends) and returns their sequences. */
export async function take(stream: AsyncIterator<Notification>, count: number): Promise<number[]> {
  const seen: number[] = [];
  while (seen.length < count) {
    const next = await stream.next();
    if (next.done) break;
    seen.push(next.value.sequence);
  }
  return seen;
}
