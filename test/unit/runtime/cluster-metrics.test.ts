import { Registry, collectDefaultMetrics } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  createPrometheusMetrics,
  type MetricsJson,
  type MetricsSnapshot,
  type PrometheusAvisoMetrics,
} from '../../../src/metrics/prometheus-metrics.js';
import { aggregateCluster, foldRetired } from '../../../src/runtime/cluster-metrics.js';
import type { NotificationBackend } from '../../../src/backend/backend.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { ManualClock } from '../../support/manual-clock.js';

/**
 * The aggregation rules of a server of several workers (D36, docs/metrics.md) on real registries:
 * each "worker" below is the metrics object a worker process builds, fed as its routes would.
 */

function workerMetrics(id: number): PrometheusAvisoMetrics {
  return createPrometheusMetrics({
    version: '9.9.9',
    backendKind: 'jetstream',
    eventTypes: ['mars'],
    processLabels: { worker: String(id) },
  });
}

async function primaryMetrics(): Promise<MetricsJson> {
  const register = new Registry();
  collectDefaultMetrics({ register, labels: { worker: '0' } });
  return register.getMetricsAsJSON();
}

async function aggregated(workers: readonly MetricsSnapshot[], retired: MetricsJson = [], reloads = { success: 0, failure: 0 }) {
  return aggregateCluster({ primary: await primaryMetrics(), workers, retired, reloads }).getMetricsAsJSON();
}

/** The value of the one series of `name` whose labels include `labels`; fails when there is none or several. */
function value(metrics: MetricsJson, name: string, labels: Record<string, string> = {}, metricName = name): number {
  const metric = metrics.find((each) => each.name === name);
  const values = (metric?.values ?? []).filter(
    (each) =>
      ((each as { metricName?: string }).metricName ?? name) === metricName &&
      Object.entries(labels).every(([key, expected]) => String(each.labels[key]) === expected),
  );
  expect(values, `${metricName}${JSON.stringify(labels)}`).toHaveLength(1);
  return values[0]?.value ?? Number.NaN;
}

function seriesOf(metrics: MetricsJson, name: string): Record<string, unknown>[] {
  return (metrics.find((each) => each.name === name)?.values ?? []).map((each) => ({ ...each.labels }));
}

describe('the metrics of several workers, added up by the primary', () => {
  it('sums counters and histograms', async () => {
    const [one, two] = [workerMetrics(1), workerMetrics(2)];
    one.notification('mars', 'success');
    one.notification('mars', 'success');
    for (let i = 0; i < 3; i++) two.notification('mars', 'success');
    two.notification('mars', 'error');
    one.httpRequestCompleted('/api/v1/notification', 'POST', 200, 0.02);
    two.httpRequestCompleted('/api/v1/notification', 'POST', 200, 3);

    const metrics = await aggregated([await one.snapshot(), await two.snapshot()]);
    expect(value(metrics, 'aviso_notifications_total', { event_type: 'mars', status: 'success' })).toBe(5);
    expect(value(metrics, 'aviso_notifications_total', { event_type: 'mars', status: 'error' })).toBe(1);
    expect(value(metrics, 'aviso_http_requests_total', { route: '/api/v1/notification', status_code: '200' })).toBe(2);
    const histogram = 'aviso_http_request_duration_seconds';
    expect(value(metrics, histogram, { route: '/api/v1/notification' }, `${histogram}_count`)).toBe(2);
    expect(value(metrics, histogram, { route: '/api/v1/notification', le: '0.025' }, `${histogram}_bucket`)).toBe(1);
    expect(value(metrics, histogram, { route: '/api/v1/notification', le: '5' }, `${histogram}_bucket`)).toBe(2);
  });

  it('shows aviso_build_info once, as 1', async () => {
    const metrics = await aggregated([await workerMetrics(1).snapshot(), await workerMetrics(2).snapshot()]);
    expect(value(metrics, 'aviso_build_info', { version: '9.9.9' })).toBe(1);
  });

  it('sums the gauges that count what each worker holds', async () => {
    const [one, two] = [workerMetrics(1), workerMetrics(2)];
    one.streamOpened('/api/v1/watch', 'mars', undefined);
    one.streamOpened('/api/v1/watch', 'mars', undefined);
    two.streamOpened('/api/v1/watch', 'mars', undefined);
    one.httpRequestStarted('POST');
    two.httpRequestStarted('POST');
    one.observeStreamBuffers(() => 100);
    two.observeStreamBuffers(() => 23);

    const metrics = await aggregated([await one.snapshot(), await two.snapshot()]);
    expect(value(metrics, 'aviso_sse_connections_active', { route: '/api/v1/watch', event_type: 'mars' })).toBe(3);
    expect(value(metrics, 'aviso_http_requests_in_flight', { method: 'POST' })).toBe(2);
    expect(value(metrics, 'aviso_sse_buffered_bytes')).toBe(123);
  });

  it('reports the backend connected only when every worker is (the least of them)', async () => {
    const [one, two] = [workerMetrics(1), workerMetrics(2)];
    const up = new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 1, clock: new ManualClock() });
    const down: NotificationBackend = Object.create(up, { isConnected: { value: () => false } }) as NotificationBackend;
    one.instrumentBackend(up);
    two.instrumentBackend(down);
    expect(value(await aggregated([await one.snapshot(), await two.snapshot()]), 'aviso_backend_connected', { backend: 'jetstream' })).toBe(
      0,
    );
    expect(value(await aggregated([await one.snapshot()]), 'aviso_backend_connected', { backend: 'jetstream' })).toBe(1);
  });

  it('counts a user with streams on two workers once', async () => {
    const [one, two] = [workerMetrics(1), workerMetrics(2)];
    one.streamOpened('/api/v1/watch', 'mars', 'alice');
    one.streamOpened('/api/v1/watch', 'mars', 'bob');
    two.streamOpened('/api/v1/watch', 'mars', 'bob');
    two.streamOpened('/api/v1/watch', 'mars', 'carol');
    two.streamOpened('/api/v1/replay', 'mars', 'carol');
    one.streamOpened('/api/v1/replay', 'mars', 'dave');
    one.streamClosed('/api/v1/replay', 'mars', 'dave', 1);

    const metrics = await aggregated([await one.snapshot(), await two.snapshot()]);
    expect(value(metrics, 'aviso_sse_unique_users_active', { route: '/api/v1/watch' })).toBe(3);
    expect(value(metrics, 'aviso_sse_unique_users_active', { route: '/api/v1/replay' })).toBe(1);
  });

  it('counts a reload of every worker once, from the primary', async () => {
    const [one, two] = [workerMetrics(1), workerMetrics(2)];
    for (const worker of [one, two]) {
      worker.configReload('success');
      worker.configReload('success');
    }
    const metrics = await aggregated([await one.snapshot(), await two.snapshot()], [], { success: 2, failure: 1 });
    expect(value(metrics, 'aviso_config_reloads_total', { result: 'success' })).toBe(2);
    expect(value(metrics, 'aviso_config_reloads_total', { result: 'failure' })).toBe(1);
  });

  it('keeps each process its own process metrics, labelled with its worker id', async () => {
    const metrics = await aggregated([await workerMetrics(1).snapshot(), await workerMetrics(2).snapshot()]);
    expect(seriesOf(metrics, 'process_start_time_seconds')).toEqual([{ worker: '0' }, { worker: '1' }, { worker: '2' }]);
    expect(value(metrics, 'process_resident_memory_bytes', { worker: '2' })).toBeGreaterThan(0);
  });

  it('keeps the counters of a worker that exited, but not its gauges', async () => {
    const [one, two] = [workerMetrics(1), workerMetrics(2)];
    one.notification('mars', 'success');
    two.notification('mars', 'success');
    two.notification('mars', 'success');
    two.streamOpened('/api/v1/watch', 'mars', 'bob');
    const before = await aggregated([await one.snapshot(), await two.snapshot()]);
    expect(value(before, 'aviso_notifications_total', { event_type: 'mars', status: 'success' })).toBe(3);

    const retired = await foldRetired([], await two.snapshot());
    const replacement = workerMetrics(2);
    replacement.notification('mars', 'success');
    const after = await aggregated([await one.snapshot(), await replacement.snapshot()], retired);
    expect(value(after, 'aviso_notifications_total', { event_type: 'mars', status: 'success' })).toBe(4);
    expect(seriesOf(after, 'aviso_sse_connections_active')).toEqual([]);
    expect(seriesOf(after, 'aviso_sse_unique_users_active')).toEqual([]);
  });

  it('folds the workers that exited one after another into one set of counters', async () => {
    const exits = [workerMetrics(1), workerMetrics(1), workerMetrics(1)];
    let retired: MetricsJson = [];
    for (const [index, worker] of exits.entries()) {
      for (let i = 0; i <= index; i++) worker.notification('mars', 'error');
      retired = await foldRetired(retired, await worker.snapshot());
    }
    const metrics = await aggregated([], retired);
    expect(value(metrics, 'aviso_notifications_total', { event_type: 'mars', status: 'error' })).toBe(6);
  });
});
