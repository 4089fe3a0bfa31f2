import type { Logger } from 'pino';
import { AggregatorRegistry, collectDefaultMetrics, Registry, type Aggregator } from 'prom-client';
import type { LogOutputStats } from '../logging/logger.js';
import type { OtlpExportStats } from '../logging/otlp/export-gate.js';
import type { ConfigReloadResult } from '../metrics/aviso-metrics.js';
import { registerLogOutputMetrics } from '../metrics/log-output-metrics.js';
import { registerOtlpMetrics } from '../metrics/otlp-metrics.js';
import type { MetricsJson, MetricsSnapshot } from '../metrics/prometheus-metrics.js';
import { reasonOf } from './fatal.js';
import { WorkerGoneError, type WorkerLink } from './worker-link.js';

/**
 * `GET /metrics` of a server of several processes (D36, docs/metrics.md "Several workers"): the
 * primary asks every serving worker for its registry as data and adds them up, so a scrape sees
 * one server. Per metric:
 *
 * - counters and histograms (`aviso_*`) are summed, and a worker's last reported values stay in
 *   the sum after it exits, so a replaced worker does not make a counter go down (a drop would
 *   read as a reset to Prometheus and inflate `rate()`);
 * - gauges that count something (`aviso_http_requests_in_flight`, `aviso_sse_connections_active`,
 *   `aviso_sse_buffered_bytes`, `aviso_ecpds_cache_size`) are summed: each worker holds its own;
 * - `aviso_build_info` is taken once (it is 1, not the number of workers);
 * - `aviso_sse_unique_users_active` is the size of the union of every worker's users, so a user
 *   with streams on two workers counts once;
 * - `aviso_config_reloads_total` is the primary's own count: a reload of every worker is one reload;
 * - process metrics (`process_*`, `nodejs_*`) are not added up: each process keeps its own series,
 *   labelled `worker` (`"0"` is the primary).
 */

/** Prometheus's default scrape timeout is 10 s; a worker that is slower is shown as last seen. */
const SNAPSHOT_TIMEOUT_MS = 5_000;
const UNIQUE_USERS = 'aviso_sse_unique_users_active';
const CONFIG_RELOADS = 'aviso_config_reloads_total';
const BUILD_INFO = 'aviso_build_info';
/** Series the primary computes rather than adds up. */
const COMPUTED: ReadonlySet<string> = new Set([UNIQUE_USERS, CONFIG_RELOADS]);

type MetricJson = MetricsJson[number];

export interface ClusterMetricsOptions {
  /** The workers to ask at each scrape: those that serve. */
  readonly workers: () => readonly WorkerLink[];
  readonly logger: Logger;
  /** The primary's own OTLP export totals, added to its workers'. */
  readonly otlpStats?: () => OtlpExportStats;
  /** The log lines the primary did not write, added to its workers'. */
  readonly logStats?: () => LogOutputStats;
}

export class ClusterMetrics {
  /** The primary's own series: its process metrics, its OTLP export and its log output. */
  private readonly register = new Registry();
  private readonly latest = new Map<number, MetricsSnapshot>();
  /** The counters and histograms of workers that exited, folded into one. */
  private retired: Promise<MetricsJson> = Promise.resolve([]);
  private readonly reloads: Record<ConfigReloadResult, number> = { success: 0, failure: 0 };

  constructor(private readonly options: ClusterMetricsOptions) {
    collectDefaultMetrics({ register: this.register, labels: { worker: '0' } });
    registerOtlpMetrics(this.register, options.otlpStats);
    registerLogOutputMetrics(this.register, options.logStats);
  }

  configReload(result: ConfigReloadResult): void {
    this.reloads[result]++;
  }

  /** A worker exited: what it last reported keeps counting (see above). */
  retire(workerId: number): void {
    const last = this.latest.get(workerId);
    this.latest.delete(workerId);
    if (!last) return;
    this.retired = this.retired.then((retired) => foldRetired(retired, last));
  }

  async render(): Promise<{ contentType: string; body: string }> {
    const answers = await Promise.all(this.options.workers().map(async (link) => ({ link, snapshot: await this.snapshotOf(link) })));
    // A worker that exited meanwhile was retired with the snapshot it just sent: count it there only.
    const workers = answers.flatMap(({ link, snapshot }) => (snapshot && !link.exited ? [snapshot] : []));
    const aggregated = aggregateCluster({
      primary: await this.register.getMetricsAsJSON(),
      workers,
      retired: await this.retired,
      reloads: this.reloads,
    });
    return { contentType: aggregated.contentType, body: await aggregated.metrics() };
  }

  private async snapshotOf(link: WorkerLink): Promise<MetricsSnapshot | undefined> {
    try {
      const snapshot = await link.snapshot(SNAPSHOT_TIMEOUT_MS);
      this.latest.set(link.workerId, snapshot);
      return snapshot;
    } catch (error) {
      // An exited worker's values are in `retired` already (or will be, once its exit is handled).
      if (error instanceof WorkerGoneError) return undefined;
      this.options.logger.warn(
        { event_name: 'cluster.metrics.worker.stale', worker: link.workerId, error: reasonOf(error) },
        `Worker ${link.workerId} did not send its metrics; its last reported values are shown`,
      );
      return this.latest.get(link.workerId);
    }
  }
}

export interface ClusterMetricsInput {
  readonly primary: MetricsJson;
  readonly workers: readonly MetricsSnapshot[];
  readonly retired: MetricsJson;
  readonly reloads: Readonly<Record<ConfigReloadResult, number>>;
}

/** The rules above, as one registry to render. */
export function aggregateCluster(input: ClusterMetricsInput): Registry {
  const workerMetrics = input.workers.map((snapshot) => snapshot.metrics.filter((metric) => !COMPUTED.has(metric.name)));
  const computed = [uniqueUsers(input.workers), configReloads(input.workers, input.reloads)].flatMap((metric) => (metric ? [metric] : []));
  return AggregatorRegistry.aggregate(
    [input.primary, input.retired, ...workerMetrics, computed].map((metrics) => metrics.map(withClusterAggregator)),
  );
}

/** Adds a worker's last counters and histograms to those of the workers that exited before. */
export async function foldRetired(retired: MetricsJson, last: MetricsSnapshot): Promise<MetricsJson> {
  const monotonic = last.metrics.filter(
    (metric) => metric.name.startsWith('aviso_') && !COMPUTED.has(metric.name) && MONOTONIC_TYPES.has(typeName(metric)),
  );
  return AggregatorRegistry.aggregate([retired, monotonic].map((metrics) => metrics.map(withClusterAggregator))).getMetricsAsJSON();
}

const MONOTONIC_TYPES: ReadonlySet<string> = new Set(['counter', 'histogram']);

/** prom-client's typings declare `type` a numeric enum; at run time it is the exposition's type name. */
function typeName(metric: MetricJson): string {
  return String(metric.type);
}

function aggregatorFor(metric: MetricJson): Aggregator {
  if (metric.name === BUILD_INFO) return 'first';
  // Process metrics carry the `worker` label, so each series has one value: taken as it is.
  if (!metric.name.startsWith('aviso_')) return 'first';
  // A metric that says how it combines keeps it (`aviso_backend_connected`: the least connected worker).
  return metric.aggregator ?? 'sum';
}

function withClusterAggregator(metric: MetricJson): MetricJson {
  return { ...metric, aggregator: aggregatorFor(metric) };
}

/** The workers' own entry for a computed metric, whose name, help and type are reused. */
function template(workers: readonly MetricsSnapshot[], name: string): MetricJson | undefined {
  for (const snapshot of workers) {
    const metric = snapshot.metrics.find((each) => each.name === name);
    if (metric) return metric;
  }
  return undefined;
}

/** One series per route some worker has one for (as a single process would), valued by the union of users. */
function uniqueUsers(workers: readonly MetricsSnapshot[]): MetricJson | undefined {
  const base = template(workers, UNIQUE_USERS);
  if (!base) return undefined;
  const routes = new Set<string>();
  for (const snapshot of workers) {
    for (const value of snapshot.metrics.find((each) => each.name === UNIQUE_USERS)?.values ?? []) routes.add(String(value.labels.route));
  }
  const values = [...routes].map((route) => {
    const users = new Set<string>();
    for (const snapshot of workers) {
      for (const user of snapshot.streamUsers[route as keyof MetricsSnapshot['streamUsers']] ?? []) users.add(user);
    }
    return { labels: { route }, value: users.size };
  });
  return { ...base, values };
}

function configReloads(workers: readonly MetricsSnapshot[], reloads: Readonly<Record<ConfigReloadResult, number>>): MetricJson | undefined {
  const base = template(workers, CONFIG_RELOADS);
  if (!base) return undefined;
  const results = Object.keys(reloads) as ConfigReloadResult[];
  return { ...base, values: results.map((result) => ({ labels: { result }, value: reloads[result] })) };
}
