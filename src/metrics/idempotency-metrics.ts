import type { Registry } from 'prom-client';
import { counter } from './metric-family.js';
import { CONFLICT_REASONS, type IdempotencyTelemetry } from '../idempotency/idempotency-telemetry.js';

/**
 * `aviso_idempotency_*` (docs/metrics.md): replays, conflicts and in-memory evictions of notify's
 * `Idempotency-Key`. The configured event types' series exist at 0 from startup, so `increase()`
 * works before the first retry.
 */
export function registerIdempotencyMetrics(register: Registry, eventTypes: readonly string[]): IdempotencyTelemetry {
  const replays = counter(
    register,
    'aviso_idempotency_replays_total',
    'Notify requests answered from the first success of their Idempotency-Key (nothing stored).',
    ['event_type'],
  );
  const conflicts = counter(
    register,
    'aviso_idempotency_conflicts_total',
    'Notify requests refused for their Idempotency-Key: reused (422, another notification) or in_progress (409).',
    ['event_type', 'reason'],
  );
  const evictions = counter(
    register,
    'aviso_idempotency_evictions_total',
    'Idempotency-Keys the in-memory backend forgot before their window ended, to stay within idempotency.in_memory_max_keys.',
  );
  for (const eventType of eventTypes) {
    replays.inc({ event_type: eventType }, 0);
    for (const reason of CONFLICT_REASONS) conflicts.inc({ event_type: eventType, reason }, 0);
  }
  evictions.inc(0);
  return {
    replayed: (eventType) => replays.inc({ event_type: eventType }),
    conflict: (eventType, reason) => conflicts.inc({ event_type: eventType, reason }),
    evicted: () => evictions.inc(),
  };
}
