import { setTimeout as sleep } from 'node:timers/promises';
import { TriggerFailedError } from '../../index.js';
import type { TriggerSpec } from '../listeners.js';
import { runCommand } from './command.js';
import { runEcho, runLog } from './echo-log.js';
import { runPost, runWebhook } from './http.js';
import { runTeams } from './teams.js';
import { AttemptError, type TriggerEnvironment, type TriggerNotification } from './types.js';

export interface RunOptions {
  readonly signal?: AbortSignal;
  /** Reports an optional trigger that failed for good (the aviso client's WARN `client.trigger.failed`). */
  readonly warn: (message: string, attributes: Readonly<Record<string, unknown>>) => void;
  /** Backoff before retry `attempt` (1-based); injectable so tests need not wait. */
  readonly backoffMs?: (attempt: number) => number;
}

/**
 * The schedule of the library's reconnects, full jitter: uniform in [0, min(250 ms · 2^attempt, 30 s)).
 * Written out here because the command uses only the library's public entry, where the
 * reconnect tuning is not (it would be a promise to every user).
 */
const triggerBackoffMs = (attempt: number): number => Math.floor(Math.random() * Math.min(250 * 2 ** Math.min(attempt, 30), 30_000));

function attempt(spec: TriggerSpec, n: TriggerNotification, ctx: TriggerEnvironment): Promise<void> {
  switch (spec.type) {
    case 'echo':
      return runEcho(n, ctx);
    case 'log':
      return runLog(n, spec.path);
    case 'command':
      return runCommand(n, spec, ctx);
    case 'webhook':
      return runWebhook(n, spec, ctx);
    case 'post':
      return runPost(n, spec, ctx);
    case 'teams':
      return runTeams(n, spec, ctx);
  }
}

async function runOne(spec: TriggerSpec, n: TriggerNotification, ctx: TriggerEnvironment, options: RunOptions): Promise<void> {
  const failFast = spec.type === 'echo' || spec.type === 'log' ? false : spec.failFast;
  const backoff = options.backoffMs ?? triggerBackoffMs;
  for (let tried = 0; ; tried += 1) {
    try {
      await attempt(spec, n, ctx);
      return;
    } catch (error) {
      const deterministic = error instanceof AttemptError && error.deterministic;
      const message = error instanceof Error ? error.message : String(error);
      const last = tried >= spec.retries || (failFast && deterministic);
      if (last) {
        const where = `${spec.type} trigger for ${n.view.event_type}@${n.view.sequence}`;
        // A required trigger that failed for good stops the listener without committing the notification.
        if (spec.required) throw new TriggerFailedError(spec.type, `${where} failed: ${message}`, { cause: error });
        options.warn('optional trigger failed; continuing', {
          'event.name': 'client.trigger.failed',
          kind: spec.type,
          retries: spec.retries,
          notification: `${n.view.event_type}@${n.view.sequence}`,
          error: message,
        });
        return;
      }
      // A Ctrl+C during the wait ends the run here, before the next attempt starts.
      await sleep(backoff(tried + 1), undefined, options.signal ? { signal: options.signal } : {});
    }
  }
}

/** Runs a listener's triggers in declaration order; a notification counts as delivered after all. */
export async function runTriggers(
  triggers: readonly TriggerSpec[],
  n: TriggerNotification,
  ctx: TriggerEnvironment,
  options: RunOptions,
): Promise<void> {
  for (const spec of triggers) {
    options.signal?.throwIfAborted();
    await runOne(spec, n, ctx, options);
  }
}
