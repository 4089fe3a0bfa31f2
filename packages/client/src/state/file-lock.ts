import { StateStoreError } from '../errors.js';

/**
 * The state file's cross-process lock, the aviso client's own: an exclusive advisory `flock(2)`
 * on `<state file>.lock`, a plain file that is created when missing and never deleted (the lock
 * belongs to its inode: deleting it while a process holds it would let a second process lock a new
 * file). Because it is the same lock on the same file, a Rust `aviso` and this client exclude each
 * other; a lock directory (proper-lockfile) or an fcntl lock would not, since Linux keeps flock and
 * fcntl locks apart. Node has no flock, so it comes from fs-ext (a native addon, compiled at
 * install). Acquiring polls the non-blocking form, so a long wait for another process never holds
 * one of libuv's few worker threads.
 */

const FIRST_WAIT_MS = 2;
const LONGEST_WAIT_MS = 50;

type Flock = (fd: number, flags: 'exnb' | 'un') => void;

let flockModule: Promise<Flock> | undefined;

/** fs-ext, loaded on first use so importing the library in a browser never touches it. */
function loadFlock(): Promise<Flock> {
  // A CommonJS module: its exports arrive as the default export of the ES module namespace.
  flockModule ??= import('fs-ext').then((m) => m.default.flockSync);
  return flockModule;
}

export function lockPathFor(statePath: string): string {
  return `${statePath}.lock`;
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `critical` while holding the exclusive flock of `<statePath>.lock`. */
export async function withFileLock<T>(statePath: string, critical: () => Promise<T>): Promise<T> {
  const [{ open }, flock] = await Promise.all([import('node:fs/promises'), loadFlock()]);
  const lockPath = lockPathFor(statePath);
  let handle;
  try {
    // 'a+' creates the file when missing and never truncates it.
    handle = await open(lockPath, 'a+', 0o644);
  } catch (error) {
    throw new StateStoreError(`cannot open the state file lock ${lockPath}: ${(error as Error).message}`, { cause: error });
  }
  try {
    for (let delay = FIRST_WAIT_MS; ; delay = Math.min(delay * 2, LONGEST_WAIT_MS)) {
      try {
        flock(handle.fd, 'exnb');
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK' && code !== 'EINTR') {
          throw new StateStoreError(`cannot lock ${lockPath}: ${(error as Error).message}`, { cause: error });
        }
        await wait(delay);
      }
    }
    try {
      return await critical();
    } finally {
      flock(handle.fd, 'un');
    }
  } finally {
    await handle.close();
  }
}
