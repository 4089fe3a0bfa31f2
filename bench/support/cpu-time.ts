import { readFileSync } from 'node:fs';

/** Linux's USER_HZ: the unit of the times in /proc/<pid>/stat (100 on every mainstream kernel). */
const TICKS_PER_SECOND = 100;

/** User and system CPU time a process has used so far, in seconds each, from /proc/<pid>/stat. */
export function cpuSplitSeconds(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
  return { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND };
}

/** CPU time (user + system) a process has used so far, in seconds. */
export function cpuSeconds(pid: number): number {
  const { user, system } = cpuSplitSeconds(pid);
  return user + system;
}

/** Measures the CPU a process uses between `start` and `stop`: seconds, and cores (CPU s per wall s). */
export function cpuMeter(pid: number): { stop(): { seconds: number; cores: number } } {
  const cpuAtStart = cpuSeconds(pid);
  const wallAtStart = performance.now();
  return {
    stop() {
      const seconds = cpuSeconds(pid) - cpuAtStart;
      return { seconds, cores: seconds / ((performance.now() - wallAtStart) / 1000) };
    },
  };
}
