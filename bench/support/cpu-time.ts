import { readdirSync, readFileSync } from 'node:fs';

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

/** The parent pid of a process (field 4 of /proc/<pid>/stat), or undefined once it is gone. */
function parentPid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Every process below `pid` (children, their children, …), from the parent pids in /proc. */
export function descendantPids(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentPid(Number(entry));
    if (parent === undefined) continue;
    const siblings = children.get(parent);
    if (siblings) siblings.push(Number(entry));
    else children.set(parent, [Number(entry)]);
  }
  const found: number[] = [];
  const pending = [pid];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const child of children.get(next) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

function cpuSecondsIfAlive(pid: number): number {
  try {
    return cpuSeconds(pid);
  } catch {
    return 0;
  }
}

/**
 * Like `cpuMeter`, for a server made of several processes: `pid` and every process below it when
 * the meter starts (nginx's master and worker; a server that forks workers). A process that ends
 * within the window is not counted: the servers measured keep their processes for their lifetime.
 */
export function treeCpuMeter(pid: number): { readonly pids: readonly number[]; stop(): { seconds: number; cores: number } } {
  const pids = [pid, ...descendantPids(pid)];
  const meters = pids.map((each) => ({ pid: each, atStart: cpuSecondsIfAlive(each) }));
  const wallAtStart = performance.now();
  return {
    pids,
    stop() {
      const seconds = meters.reduce((sum, meter) => sum + Math.max(0, cpuSecondsIfAlive(meter.pid) - meter.atStart), 0);
      return { seconds, cores: seconds / ((performance.now() - wallAtStart) / 1000) };
    },
  };
}
