import { Counter, type Registry } from 'prom-client';
import type { BackendStats } from '../backend/backend.js';

/** `outcome` label → the backend stats counter it reads. */
const OUTCOMES = {
  filled: 'live_gap_sequences_filled',
  skipped: 'live_gap_sequences_skipped',
} as const;

export interface LiveGapMetrics {
  /** Reads the backend's totals at each scrape from now on. */
  follow(stats: () => Promise<BackendStats>): void;
}

/**
 * `aviso_jetstream_live_gap_sequences_total` (docs/metrics.md): sequences a JetStream live feed did
 * not read from the stream, because retention had already removed them, and that it delivered from
 * an accepting process's announcement (`filled`) or gave up on (`skipped`). The backend keeps the
 * totals; this counter reads them at each scrape, and stays at 0 on the in-memory backend.
 */
export function registerLiveGapMetrics(register: Registry): LiveGapMetrics {
  let source: (() => Promise<BackendStats>) | undefined;
  const last: Record<keyof typeof OUTCOMES, number> = { filled: 0, skipped: 0 };
  new Counter({
    name: 'aviso_jetstream_live_gap_sequences_total',
    help: 'Sequences a JetStream live feed found removed from its stream before it read them: delivered from an announcement (filled) or never delivered live (skipped).',
    labelNames: ['outcome'],
    registers: [register],
    async collect() {
      const stats = await source?.().catch(() => undefined);
      this.reset();
      for (const [outcome, key] of Object.entries(OUTCOMES) as [keyof typeof OUTCOMES, string][]) {
        const value = stats?.[key];
        // A scrape that could not read the totals shows the last ones: a counter never goes back.
        if (typeof value === 'number') last[outcome] = value;
        this.inc({ outcome }, last[outcome]);
      }
    },
  });
  return {
    follow(stats) {
      source = stats;
    },
  };
}
