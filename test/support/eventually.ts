export interface EventuallyOptions {
  /** How long to keep trying; 30 s unless given. */
  readonly timeoutMs?: number;
  /** The pause between two attempts; 100 ms unless given. */
  readonly intervalMs?: number;
}

/**
 * Calls `attempt` until it returns something other than `undefined` or `false`, and returns that;
 * throws once `timeoutMs` has passed. For a state the server offers no event for (a readiness
 * answer, a counter, a released stream): where it does offer one, wait for the event instead
 * (`RunningServer.waitForLog`, `SseEventQueue.next`).
 */
export async function eventually<T>(
  what: string,
  attempt: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 30_000, intervalMs = 100 }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * `promise`, or a failure naming `what` once `timeoutMs` has passed: for a step of a test that
 * could hang, so a failure says which step it was rather than only that the test timed out.
 * `context` adds what the failure should show (e.g. the server's last log events).
 */
export async function within<T>(what: string, promise: Promise<T>, timeoutMs: number, context: () => string = () => ''): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms${context() === '' ? '' : `; ${context()}`}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
