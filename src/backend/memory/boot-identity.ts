import { readFileSync } from 'node:fs';
import { uptime } from 'node:os';

/**
 * Which boot of the machine this process runs in, to tell a process restart (the kernel's page
 * cache, and with it every write of the previous process, survived) from a machine restart (writes
 * not yet flushed to the disk may be gone). Linux names each boot (`boot_id`); elsewhere the boot
 * time estimated from the uptime stands in, compared with a tolerance for clock adjustments.
 */
export function currentBootIdentity(): string {
  try {
    const id = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    if (/^[0-9a-f-]{8,64}$/i.test(id)) return `linux:${id.toLowerCase()}`;
  } catch {
    // Not Linux: fall back to the boot time.
  }
  return `boot-time:${Math.round(Date.now() / 1000 - uptime())}`;
}

/** Two boot times this close apart are one boot seen through clock adjustments. */
const BOOT_TIME_TOLERANCE_SEC = 120;

export function isSameBoot(recorded: string, current: string): boolean {
  if (recorded === current) return true;
  const a = /^boot-time:(\d+)$/.exec(recorded);
  const b = /^boot-time:(\d+)$/.exec(current);
  return a !== null && b !== null && Math.abs(Number(a[1]) - Number(b[1])) <= BOOT_TIME_TOLERANCE_SEC;
}
