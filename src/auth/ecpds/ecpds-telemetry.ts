import type { FetchOutcome } from './fetch-outcome.js';

export { FETCH_OUTCOMES, type FetchOutcome } from './fetch-outcome.js';

/** Labels of `aviso_ecpds_access_decisions_total` (docs/design/rules/operations.md §3.3.3). */
export const DECISION_OUTCOMES = ['allow', 'deny_destination', 'deny_match_key_missing', 'unavailable', 'admin_bypass', 'error'] as const;

export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

/**
 * What the plugin reports for metrics (docs/design/rules/operations.md §2.10.7), so the plugin does not depend on the metrics
 * library. Per check: `cacheHit` or `cacheMiss` when the cache was consulted, `fetched` only when
 * this check ran the upstream fetch (so it counts real calls), `decided` once, and `cacheSize`
 * last, with the current entry count.
 */
export interface EcpdsTelemetry {
  cacheHit(): void;
  cacheMiss(): void;
  cacheSize(entries: number): void;
  fetched(outcome: FetchOutcome): void;
  decided(outcome: DecisionOutcome): void;
}

export const noopEcpdsTelemetry: EcpdsTelemetry = {
  cacheHit: () => undefined,
  cacheMiss: () => undefined,
  cacheSize: () => undefined,
  fetched: () => undefined,
  decided: () => undefined,
};
