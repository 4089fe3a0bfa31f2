import { TemplateError } from '../errors.js';
import { renderTemplate, type RenderResult, type TemplateTarget } from '../template.js';

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
  /** ANSI colors in the human output (`--color`). */
  readonly color?: boolean;
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

/** Renders a trigger template for one attempt; a template error is a deterministic AttemptError. */
export function renderForAttempt(
  template: string,
  n: TriggerNotification,
  ctx: TriggerEnvironment,
  target: TemplateTarget,
  context: string,
): RenderResult {
  try {
    return renderTemplate(template, n.view, ctx.env, target, context);
  } catch (error) {
    if (error instanceof TemplateError) throw new AttemptError(error.message, true);
    throw error;
  }
}
