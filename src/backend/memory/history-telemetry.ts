/**
 * Why the in-memory backend evicted notifications, the `cause` label of
 * `aviso_memory_history_evictions_total`: `bytes` for `max_total_size`, `topics` for `max_topics`
 * (every notification of the evicted topic), `per_topic` for `max_history_per_topic`.
 */
export const EVICTION_CAUSES = ['bytes', 'topics', 'per_topic'] as const;

export type EvictionCause = (typeof EVICTION_CAUSES)[number];

/** What the in-memory backend reports for metrics, so it does not depend on the metrics library. */
export interface MemoryHistoryTelemetry {
  /** `notifications` were evicted to stay within a bound; deletions and wipes are not evictions. */
  evicted(cause: EvictionCause, notifications: number): void;
  /** The bytes now held (counted as in `stored-bytes.ts`), after every change. */
  heldBytes(bytes: number): void;
}

export const noopMemoryHistoryTelemetry: MemoryHistoryTelemetry = {
  evicted: () => undefined,
  heldBytes: () => undefined,
};
