import { setTimeout as sleep } from 'node:timers/promises';
import { epochMs } from './stats.js';

/**
 * Calls `send(i)` for i = 0…count − 1 at `ratePerSecond`, each at its own slot of one schedule
 * (start + i / rate) so timer lateness does not accumulate. `send` must not block; what it returns
 * is collected and awaited at the end.
 */
export async function atFixedRate<T>(count: number, ratePerSecond: number, send: (index: number) => Promise<T>): Promise<T[]> {
  const intervalMs = 1000 / ratePerSecond;
  const start = epochMs();
  const pending: Promise<T>[] = [];
  for (let index = 0; index < count; index++) {
    const wait = start + index * intervalMs - epochMs();
    if (wait > 1) await sleep(wait);
    pending.push(send(index));
  }
  return Promise.all(pending);
}
