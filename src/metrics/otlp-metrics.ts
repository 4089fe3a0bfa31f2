import { Counter, type Registry } from 'prom-client';
import type { OtlpExportStats } from '../logging/otlp/export-gate.js';

/**
 * `aviso_otlp_*` (docs/design/rules/reference-0.13.md §7). The OTLP sink exists before the metrics registry (it
 * must see the first log line), so it keeps its own totals and these counters read them at each
 * scrape. With export disabled they stay at 0, so dashboards and alerts find them either way.
 */
export function registerOtlpMetrics(register: Registry, stats: (() => OtlpExportStats) | undefined): void {
  const counter = (name: string, help: string, read: (s: OtlpExportStats) => number) =>
    new Counter({
      name,
      help,
      registers: [register],
      collect() {
        if (!stats) return;
        this.reset();
        this.inc(read(stats()));
      },
    });
  counter(
    'aviso_otlp_export_failures_total',
    'OTLP log batches the collector did not accept (error answer, no connection, or no answer in time); one per batch.',
    (s) => s.exportFailures,
  );
  counter(
    'aviso_otlp_suppressed_log_records_total',
    'Log records not exported over OTLP because its queue was full or the exporter was failing; stdout still has them.',
    (s) => s.suppressedRecords,
  );
}
