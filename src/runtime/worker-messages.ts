import type { AppConfig } from '../config/model.js';
import type { ReloadOutcome, ReloadSource } from '../config/reload-outcome.js';
import type { MetricsSnapshot } from '../metrics/prometheus-metrics.js';

/**
 * What the primary and its workers (D36) say to each other over the cluster IPC channel, which
 * the primary opens with `serialization: 'advanced'` (structured clone: a configuration keeps
 * every value it was loaded with). Every type starts with `aviso:` so nothing else on the channel
 * (Node's own cluster messages travel separately) is taken for one.
 */

/** Primary → worker. */
export type PrimaryMessage =
  /** The first message: who the worker is and the configuration to serve (already validated). */
  | { readonly type: 'aviso:start'; readonly workerId: number; readonly config: AppConfig }
  /**
   * Apply a reload with this configuration, loaded once by the primary so that every worker
   * checks the same one. `requester` is set for the worker whose admin request asked for it.
   */
  | {
      readonly type: 'aviso:reload';
      readonly id: number;
      readonly source: ReloadSource;
      readonly config: AppConfig;
      readonly requester?: number;
    }
  /** The answer to an `aviso:reload-request` of this worker. */
  | { readonly type: 'aviso:reload-answer'; readonly requester: number; readonly outcome: ReloadOutcome }
  | { readonly type: 'aviso:metrics'; readonly id: number }
  | { readonly type: 'aviso:shutdown'; readonly reason: string };

/** Worker → primary. */
export type WorkerMessage =
  /**
   * The worker listens to the channel now. Node drops a message that arrives before a listener
   * exists, and a worker loads its modules first, so the primary sends `aviso:start` only then.
   */
  | { readonly type: 'aviso:awaiting-start' }
  | { readonly type: 'aviso:listening'; readonly port: number }
  | { readonly type: 'aviso:reload-request'; readonly requester: number; readonly source: ReloadSource }
  | { readonly type: 'aviso:reloaded'; readonly id: number; readonly outcome: ReloadOutcome }
  | { readonly type: 'aviso:metrics-snapshot'; readonly id: number; readonly snapshot: MetricsSnapshot }
  | { readonly type: 'aviso:metrics-failed'; readonly id: number; readonly error: string };

const PRIMARY_TYPES: ReadonlySet<string> = new Set([
  'aviso:start',
  'aviso:reload',
  'aviso:reload-answer',
  'aviso:metrics',
  'aviso:shutdown',
]);
const WORKER_TYPES: ReadonlySet<string> = new Set([
  'aviso:awaiting-start',
  'aviso:listening',
  'aviso:reload-request',
  'aviso:reloaded',
  'aviso:metrics-snapshot',
  'aviso:metrics-failed',
]);

function typeOf(message: unknown): unknown {
  return typeof message === 'object' && message !== null ? (message as { type?: unknown }).type : undefined;
}

export function isPrimaryMessage(message: unknown): message is PrimaryMessage {
  const type = typeOf(message);
  return typeof type === 'string' && PRIMARY_TYPES.has(type);
}

export function isWorkerMessage(message: unknown): message is WorkerMessage {
  const type = typeOf(message);
  return typeof type === 'string' && WORKER_TYPES.has(type);
}
