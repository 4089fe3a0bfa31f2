import { EXIT_INTERRUPTED } from './errors.js';

const HARD_EXIT_WINDOW_MS = 5_000;

/**
 * Ctrl+C: the first aborts the returned signal so listeners drain and flush their cursors;
 * a second within 5 s exits at once with 130 (128 + SIGINT), bypassing the drain. SIGTERM
 * drains like a first Ctrl+C, as a service manager expects.
 */
export function installInterruptHandler(onFirst: () => void = () => undefined): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let firstAt: number | undefined;
  const onSigint = (): void => {
    const now = Date.now();
    if (firstAt !== undefined && now - firstAt <= HARD_EXIT_WINDOW_MS) process.exit(EXIT_INTERRUPTED);
    firstAt = now;
    onFirst();
    controller.abort(new Error('interrupted'));
  };
  const onSigterm = (): void => controller.abort(new Error('terminated'));
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigterm);
    },
  };
}
