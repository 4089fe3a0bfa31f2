import { readdirSync, readFileSync } from 'node:fs';
import { startNatsServer } from '../../test/support/nats-server.js';
import { makeTempDir, removeTempDir } from './processes.js';

export interface PrivateNats {
  readonly url: string;
  /** The nats-server process, for CPU readings. */
  readonly pid: number;
  /** Stops the server and removes its store. */
  stop(): Promise<void>;
}

/**
 * A private `nats-server -js` (the tests' launcher) whose store lives in a temporary directory the
 * bench registered, so Ctrl-C removes it too.
 */
export async function startPrivateNats(): Promise<PrivateNats> {
  const storeDir = makeTempDir('nats');
  try {
    const server = await startNatsServer({ storeDir });
    return {
      url: server.url,
      pid: pidWithArgument(storeDir),
      stop: async () => {
        await server.stop();
        removeTempDir(storeDir);
      },
    };
  } catch (error) {
    removeTempDir(storeDir);
    throw error;
  }
}

/** The process whose command line has `argument` (the launcher does not expose the pid). */
function pidWithArgument(argument: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(argument)) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  throw new Error(`no process has ${argument} on its command line`);
}
