import type { JetStreamConfig } from '../../src/config/model.js';

/**
 * The JetStream settings the backend tests connect with: memory storage, one quick attempt at
 * startup, short retry delays, the buckets' default names unless `overrides` name others.
 */
export function jetStreamTestSettings(natsUrl: string, overrides: Partial<JetStreamConfig> = {}): JetStreamConfig {
  return {
    nats_url: natsUrl,
    timeout_seconds: 5,
    retry_attempts: 1,
    storage_type: 'memory',
    retention_policy: 'limits',
    discard_policy: 'old',
    max_reconnect_attempts: 0,
    reconnect_delay_ms: 200,
    publish_retry_attempts: 3,
    publish_retry_base_delay_ms: 50,
    live_gap_wait_ms: 2000,
    idempotency_bucket: 'AVISO_IDEMPOTENCY',
    history_ledger_bucket: 'AVISO_HISTORY_LEDGER',
    ...overrides,
  };
}
