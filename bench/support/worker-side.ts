import type { WorkerMessage } from './processes.js';

/**
 * The child side of `Worker`: options from argv, messages over IPC, and an exit as soon as the
 * parent goes away so no worker outlives its run.
 */

export function workerOptions<T>(): T {
  const text = process.argv[2];
  if (text === undefined) throw new Error('a bench worker needs its options as JSON in argv[2]');
  return JSON.parse(text) as T;
}

export function reply<T extends WorkerMessage>(message: T): void {
  process.send?.(message);
}

/** Reports an error to the parent (which fails the scenario) and exits. */
export function fail(error: unknown): void {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  if (process.send && process.connected) {
    process.send({ type: 'failed', message }, () => process.exit(1));
    // In case the channel never flushes.
    setTimeout(() => process.exit(1), 1_000);
  } else {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
}

export function onCommand<T extends WorkerMessage>(handler: (command: T) => void | Promise<void>): void {
  process.on('message', (message: unknown) => {
    void (async () => {
      try {
        await handler(message as T);
      } catch (error) {
        fail(error);
      }
    })();
  });
}

/** Runs a worker's main function with the shared error handling and parent-exit watch. */
export function runWorker(main: () => Promise<void>): void {
  process.on('disconnect', () => process.exit(0));
  // An orderly exit, so `--cpu-prof` writes its profile.
  process.on('SIGTERM', () => process.exit(0));
  process.on('uncaughtException', (error) => fail(error));
  process.on('unhandledRejection', (error) => fail(error));
  main().catch(fail);
}
