import { Counter, type Registry } from 'prom-client';
import type { LogOutputStats } from '../logging/logger.js';

/**
 * `aviso_log_lines_dropped_total` and `aviso_log_lines_rate_limited_total` (D45, docs/metrics.md):
 * the log lines a process did not write. The logger exists before the registry (it logs the
 * startup), so it keeps its own totals and these counters read them at each scrape.
 */
export function registerLogOutputMetrics(register: Registry, stats: (() => LogOutputStats) | undefined): void {
  const counter = (name: string, help: string, read: (s: LogOutputStats) => number) =>
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
    'aviso_log_lines_dropped_total',
    'Log lines dropped because stdout already held logging.max_buffered_bytes for a reader slower than the server.',
    (s) => s.droppedLines,
  );
  counter(
    'aviso_log_lines_rate_limited_total',
    'Log lines of client-error events not written because their event passed logging.client_error_lines_per_second.',
    (s) => s.rateLimitedLines,
  );
}
