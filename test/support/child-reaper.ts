import type { ChildProcess } from 'node:child_process';

/**
 * Kills child processes a test run started when the run itself exits, so an interrupted or crashed
 * run does not leave servers behind holding ports and stores.
 */
const children = new Set<ChildProcess>();
let installed = false;

export function reapOnExit(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (installed) return;
  installed = true;
  process.once('exit', () => {
    for (const running of children) running.kill('SIGKILL');
  });
}
