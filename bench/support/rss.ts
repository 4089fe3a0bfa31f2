import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Resident set size of a process in bytes, from the `VmRSS` line of /proc/<pid>/status. */
export function readRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS line in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

export interface SettleOptions {
  /** Sampling period of the RSS poll. */
  readonly intervalMs?: number;
  /** RSS counts as settled once it moved less than this fraction over `windowSamples` samples. */
  readonly tolerance?: number;
  readonly windowSamples?: number;
  readonly timeoutMs?: number;
}

/** The VmRSS of several processes (a server's master and worker), summed. */
function readRssOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + readRssBytes(pid), 0);
}

/**
 * Waits until a process's RSS (or the sum over several) stops moving (a GC that follows a burst of allocations shows up as a
 * drop, lazily committed pages as a rise) and returns the last sample. There is no event to await
 * for "the garbage collector is done", so this polls; it returns as soon as the window is flat.
 */
export async function settledRssBytes(pid: number | readonly number[], options: SettleOptions = {}): Promise<number> {
  const pids = typeof pid === 'number' ? [pid] : pid;
  const intervalMs = options.intervalMs ?? 250;
  const tolerance = options.tolerance ?? 0.005;
  const windowSamples = options.windowSamples ?? 4;
  const deadline = Date.now() + (options.timeoutMs ?? 8_000);
  const samples: number[] = [readRssOf(pids)];
  for (;;) {
    await sleep(intervalMs);
    samples.push(readRssOf(pids));
    const window = samples.slice(-windowSamples);
    if (window.length === windowSamples) {
      const low = Math.min(...window);
      const high = Math.max(...window);
      if ((high - low) / high <= tolerance) return samples[samples.length - 1] as number;
    }
    if (Date.now() > deadline) return samples[samples.length - 1] as number;
  }
}
