import { availableParallelism } from 'node:os';
import type { ApplicationConfig } from './model.js';

/**
 * How many server processes `application.workers` asks for (D36). `auto` is the number of CPUs
 * this process may run on, `os.availableParallelism()`: on Node 20 (libuv 1.46) that follows the
 * CPU affinity mask (`taskset`, a cpuset) but not a container's CPU quota (libuv reads the cgroup
 * quota only from 1.49), which is why docs/deployment.md asks for a number under a CPU limit.
 */
export function resolveWorkerCount(setting: ApplicationConfig['workers'], usableCpus: () => number = availableParallelism): number {
  return setting === 'auto' ? Math.max(1, usableCpus()) : setting;
}
