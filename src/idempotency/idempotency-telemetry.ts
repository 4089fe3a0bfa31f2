/** `reason` of `aviso_idempotency_conflicts_total`: a 422 and a 409 of docs/api.md "Idempotent notify". */
export const CONFLICT_REASONS = ['reused', 'in_progress'] as const;
export type ConflictReason = (typeof CONFLICT_REASONS)[number];

/** What notify's `Idempotency-Key` reports for metrics, so neither the route nor the backend depends on prom-client. */
export interface IdempotencyTelemetry {
  /** A request was answered from the first success of its key (`event_type` bounded as in labels.ts). */
  replayed(eventType: string): void;
  conflict(eventType: string, reason: ConflictReason): void;
  /** The in-memory table dropped its oldest key to make room. */
  evicted(): void;
}

export const noopIdempotencyTelemetry: IdempotencyTelemetry = {
  replayed: () => undefined,
  conflict: () => undefined,
  evicted: () => undefined,
};
