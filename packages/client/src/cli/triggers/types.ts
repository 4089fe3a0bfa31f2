/** What every trigger receives for one notification. */
export interface TriggerNotification {
  /** The aviso client's notification view: the shape templates walk and echo/log print. */
  readonly view: {
    readonly event_type: string;
    readonly sequence: number;
    readonly identifier: Readonly<Record<string, unknown>>;
    readonly payload: unknown;
  };
  /** The server's CloudEvent as received, forwarded by the post trigger. */
  readonly cloudEvent: unknown;
}

export interface TriggerEnvironment {
  readonly listenerName: string | undefined;
  /** Human output (pretty, with a leader line) instead of NDJSON. */
  readonly human: boolean;
  readonly write: (text: string) => Promise<void>;
  readonly env: NodeJS.ProcessEnv;
}

/**
 * A failed attempt. `deterministic` failures (4xx, non-zero exit, template errors) would fail
 * the same way again, so fail_fast skips the retry budget for them.
 */
export class AttemptError extends Error {
  override readonly name = 'AttemptError';
  constructor(
    message: string,
    readonly deterministic: boolean,
  ) {
    super(message);
  }
}
