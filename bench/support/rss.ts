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

/**
 * Waits until a process's RSS stops moving (a GC that follows a burst of allocations shows up as a
 * drop, lazily committed pages as a rise) and returns the last sample. There is no event to await
 * for "the garbage collector is done", so this polls; it returns as soon as the window is flat.
 */
export async function settledRssBytes(pid: number, options: SettleOptions = {}): Promise<number> {
  const intervalMs = options.intervalMs ?? 250;
  const tolerance = options.tolerance ?? 0.005;
  const windowSamples = options.windowSamples ?? 4;
  const deadline = Date.now() + (options.timeoutMs ?? 8_000);
  const samples: number[] = [readRssBytes(pid)];
  for (;;) {
    await sleep(intervalMs);
    samples.push(readRssBytes(pid));
    const window = samples.slice(-windowSamples);
    if (window.length === windowSamples) {
      const low = Math.min(...window);
      const high = Math.max(...window);
      if ((high - low) / high <= tolerance) return samples[samples.length - 1] as number;
    }
    if (Date.now() > deadline) return samples[samples.length - 1] as number;
  }
}
