import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { ROOT } from './paths.js';

/** The `_meta` entry of results.json: when and where the numbers were measured. */
export interface RunMeta {
  readonly date: string;
  readonly node: string;
  readonly cpu_model: string;
  readonly cores: number;
  readonly total_memory_bytes: number;
  readonly mode: 'quick' | 'full';
  /** The commit the server was built from, and the files under src/ that differed from it. */
  readonly git_commit: string;
  readonly src_changes: readonly string[];
  /** 1-minute load average when the run started: other work on the machine skews every number. */
  readonly load_average_at_start: number;
  readonly scenarios: readonly string[];
  readonly duration_s?: number;
}

export function machineMeta(quick: boolean, scenarios: readonly string[]): RunMeta {
  const cpuList = cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpu_model: cpuList[0]?.model.trim() ?? 'unknown',
    cores: cpuList.length,
    total_memory_bytes: totalmem(),
    mode: quick ? 'quick' : 'full',
    git_commit: git(['rev-parse', 'HEAD']),
    src_changes: git(['status', '--porcelain', '--', 'src'], false)
      .split('\n')
      .filter((line) => line !== ''),
    load_average_at_start: Number((loadavg()[0] ?? 0).toFixed(2)),
    scenarios,
  };
}

function git(args: readonly string[], trim = true): string {
  try {
    const output = execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return trim ? output.trim() : output;
  } catch {
    return 'unknown';
  }
}
