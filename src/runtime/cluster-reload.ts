import type { Logger } from 'pino';
import { ConfigLoadError, loadConfig } from '../config/load.js';
import type { AppConfig } from '../config/model.js';
import { withLiveSettings } from '../config/reload-changes.js';
import type { ReloadOutcome, ReloadSource } from '../config/reload-outcome.js';
import { compareCodePoints } from '../json/canonical-json.js';
import type { ConfigReloadResult } from '../metrics/aviso-metrics.js';
import { reasonOf } from './fatal.js';
import { WorkerGoneError, type WorkerLink } from './worker-link.js';
import type { WorkerSlot } from './worker-pool.js';

/**
 * A worker's reload can include creating JetStream streams; one that has not answered after this
 * long is counted as refusing, so that an admin request is always answered.
 */
const RELOAD_ANSWER_TIMEOUT_MS = 30_000;

export interface ClusterReloadOptions {
  /** The configuration the workers were started with (validated). */
  readonly startup: AppConfig;
  /** The workers that serve now: each applies every reload. */
  readonly workers: () => readonly WorkerLink[];
  readonly logger: Logger;
  /** Counts reloads once for all workers (`aviso_config_reloads_total`). */
  readonly counted?: (result: ConfigReloadResult) => void;
  /** The configuration cascade, as at startup; tests may pass another reader. */
  readonly load?: () => AppConfig;
}

interface WorkerAnswer {
  readonly workerId: number;
  readonly outcome: ReloadOutcome;
}

/**
 * Reloads of a server of several workers (D36, docs/configuration.md "Several workers"): `SIGHUP`
 * to the primary and `POST /api/v1/admin/reload` on any worker come here. The primary reads the
 * cascade once and sends the result to every worker, which checks it exactly as a single process
 * does and applies it or refuses; all of them check the same configuration with the same rules,
 * so one refuses only when all do. The answer is a success when every worker applied it, else
 * the first refusal's line. Reloads run one at a time.
 */
export class ClusterReloads {
  /** What a worker started now must serve: the startup settings with the last reload's schemas and roles. */
  private current: { config: AppConfig; version: number; source: ReloadSource };
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ClusterReloadOptions) {
    this.current = { config: options.startup, version: 0, source: 'signal' };
  }

  get startingPoint(): { readonly config: AppConfig; readonly version: number } {
    return this.current;
  }

  /** `origin`: the worker and the admin request that asked, whose own lines carry its request id. */
  reload(source: ReloadSource, origin?: { readonly link: WorkerLink; readonly requester: number }): Promise<ReloadOutcome> {
    return this.enqueue(() => this.reloadNow(source, origin));
  }

  /**
   * A worker that started while a reload was being applied came up with the configuration from
   * before it: it applies the current one as soon as it serves.
   */
  catchUp(slot: WorkerSlot): void {
    void this.enqueue(async () => {
      const link = slot.link;
      if (!link || slot.configVersion >= this.current.version) return;
      const { config, version, source } = this.current;
      const [answer] = await this.applyEverywhere([link], config, source, undefined);
      if (answer?.outcome.ok) slot.configVersion = version;
      this.options.logger.info(
        { event_name: 'cluster.reload.caught_up', worker: slot.id, applied: answer?.outcome.ok === true },
        `Worker ${slot.id} started during a reload and ${answer?.outcome.ok ? 'applied it' : 'could not apply it'}`,
      );
    });
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async reloadNow(source: ReloadSource, origin: { link: WorkerLink; requester: number } | undefined): Promise<ReloadOutcome> {
    const { logger } = this.options;
    let loaded: AppConfig;
    try {
      loaded = (this.options.load ?? loadConfig)();
    } catch (error) {
      if (!(error instanceof ConfigLoadError)) throw error;
      return this.refused(source, `configuration error: ${error.message}`, [], []);
    }
    const workers = this.options.workers();
    if (workers.length === 0) return this.refused(source, 'no worker is serving to apply the configuration', [], []);
    const answers = await this.applyEverywhere(workers, loaded, source, origin);
    if (answers.length === 0) return this.refused(source, 'every worker exited before it applied the configuration', [], []);
    const applied = answers.filter((answer) => answer.outcome.ok).map((answer) => answer.workerId);
    const refusal = answers.find((answer) => !answer.outcome.ok)?.outcome;
    if (refusal && !refusal.ok) {
      const refusedBy = answers.filter((answer) => !answer.outcome.ok).map((answer) => answer.workerId);
      return this.refused(source, refusal.message, refusedBy, applied);
    }
    this.current = { config: withLiveSettings(this.current.config, loaded), version: this.current.version + 1, source };
    this.options.counted?.('success');
    logger.info(
      { event_name: 'cluster.reload.applied', source, workers: applied },
      `Configuration reloaded by every worker (${applied.join(', ')})`,
    );
    return combined(answers, origin?.link.workerId);
  }

  /** Every worker's answer; a worker that exits meanwhile is left out (its replacement starts from `current`). */
  private async applyEverywhere(
    workers: readonly WorkerLink[],
    config: AppConfig,
    source: ReloadSource,
    origin: { link: WorkerLink; requester: number } | undefined,
  ): Promise<WorkerAnswer[]> {
    const answers = await Promise.all(
      workers.map(async (link): Promise<WorkerAnswer | undefined> => {
        const requester = link === origin?.link ? origin.requester : undefined;
        try {
          const outcome = await link.reload(
            (id) => ({ type: 'aviso:reload', id, source, config, ...(requester === undefined ? {} : { requester }) }),
            RELOAD_ANSWER_TIMEOUT_MS,
          );
          return { workerId: link.workerId, outcome };
        } catch (error) {
          if (error instanceof WorkerGoneError) return undefined;
          return { workerId: link.workerId, outcome: { ok: false, message: reasonOf(error) } };
        }
      }),
    );
    return answers.flatMap((answer) => (answer ? [answer] : []));
  }

  /** `refusedBy` empty: no worker saw the configuration, so the primary logs what a worker would have. */
  private refused(source: ReloadSource, message: string, refusedBy: readonly number[], appliedBy: readonly number[]): ReloadOutcome {
    this.options.counted?.('failure');
    if (refusedBy.length === 0) this.options.logger.error({ event_name: 'configuration.reload.failed', source }, message);
    this.options.logger.error({ event_name: 'cluster.reload.refused', source, refused_by: refusedBy, applied_by: appliedBy }, message);
    return { ok: false, message };
  }
}

/**
 * The answer of a reload every worker applied: what changed as the asking worker (or the first)
 * saw it (they all ran the same configuration), and every setting some worker needs a restart for.
 */
function combined(answers: readonly WorkerAnswer[], originId: number | undefined): ReloadOutcome {
  const own = answers.find((answer) => answer.workerId === originId) ?? answers[0];
  const restartRequired = new Set<string>();
  for (const { outcome } of answers) if (outcome.ok) for (const name of outcome.restartRequired) restartRequired.add(name);
  const changes = own?.outcome.ok ? own.outcome.changes : { added: [], removed: [], changed: [] };
  return { ok: true, changes, restartRequired: [...restartRequired].sort(compareCodePoints) };
}
