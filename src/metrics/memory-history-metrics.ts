import { Counter, Gauge, type Registry } from 'prom-client';
import { EVICTION_CAUSES, type MemoryHistoryTelemetry } from '../backend/memory/history-telemetry.js';

/**
 * `aviso_memory_history_*`: how the in-memory backend's bounds shape its history. Registered only
 * with that backend, every cause at 0 from startup so `increase()` alerts work before the first
 * eviction.
 */
export function registerMemoryHistoryMetrics(register: Registry): MemoryHistoryTelemetry {
  const evictions = new Counter({
    name: 'aviso_memory_history_evictions_total',
    help: 'Notifications the in-memory backend evicted to stay within a bound: bytes (max_total_size), topics (max_topics), per_topic (max_history_per_topic).',
    labelNames: ['cause'],
    registers: [register],
  });
  const held = new Gauge({
    name: 'aviso_memory_history_bytes',
    help: 'Bytes the in-memory history holds, counted as against max_total_size.',
    registers: [register],
  });
  for (const cause of EVICTION_CAUSES) evictions.inc({ cause }, 0);
  held.set(0);
  return {
    evicted: (cause, notifications) => evictions.inc({ cause }, notifications),
    heldBytes: (bytes) => held.set(bytes),
  };
}
