import { join, resolve } from 'node:path';

/**
 * Where things are, seen from the compiled bench (`dist/bench/support/*.js`): the repository root,
 * the built server and the compiled bench entry points that run as their own processes.
 */
export const ROOT = resolve(import.meta.dirname, '../../..');
export const SERVER_ENTRY = join(ROOT, 'dist/src/main.js');
export const DIST_BENCH = join(ROOT, 'dist/bench');
export const RESULTS_FILE = join(ROOT, 'bench/results.json');
export const DEFAULT_CONFIG_FILE = join(ROOT, 'config/config.yaml');

/** The compiled file of a bench module given by its path under `bench/`, e.g. `baselines/sse-frame-server`. */
export function benchEntry(modulePath: string): string {
  return join(DIST_BENCH, `${modulePath}.js`);
}
