import { smallestTotalBytes } from '../notification/stored-bytes.js';
import { idempotencyBucketProblem } from './idempotency-model.js';
import { BACKEND_KINDS, type AppConfig, type JetStreamConfig } from './model.js';
import { parseDuration, parseSize } from './units.js';
import { ConfigValidationError, VALIDATION_EVENTS, configError, parseOr } from './validation-errors.js';
import { resolveWorkerCount } from './worker-count.js';

/**
 * Stage C1 (run when the JetStream backend starts): settings whose zero or blank value would
 * make the backend unusable.
 */
export function validateJetStreamSettings(js: JetStreamConfig): void {
  const fail: (field: string, rule: string) => never = (field, rule) => {
    throw new ConfigValidationError(VALIDATION_EVENTS.backend, `notification_backend.jetstream.${field}: ${rule}`);
  };
  if (js.nats_url.trim() === '') fail('nats_url', 'must not be blank');
  for (const field of [
    'timeout_seconds',
    'retry_attempts',
    'reconnect_delay_ms',
    'publish_retry_attempts',
    'publish_retry_base_delay_ms',
    'live_gap_wait_ms',
  ] as const) {
    if (js[field] <= 0) fail(field, `must be greater than 0, got ${js[field]}`);
  }
  if (js.retention_time !== undefined) {
    const seconds = parseOr(js.retention_time, parseDuration, (reason) => fail('retention_time', reason));
    if (seconds <= 0) fail('retention_time', `must be greater than 0, got '${js.retention_time}'`);
  }
  const bucket = idempotencyBucketProblem(js.idempotency_bucket);
  if (bucket !== undefined) throw new ConfigValidationError(VALIDATION_EVENTS.backend, bucket);
  const ledger = idempotencyBucketProblem(js.history_ledger_bucket, 'history_ledger_bucket');
  if (ledger !== undefined) throw new ConfigValidationError(VALIDATION_EVENTS.backend, ledger);
  if (js.history_ledger_bucket === js.idempotency_bucket) {
    fail('history_ledger_bucket', `must differ from idempotency_bucket ('${js.idempotency_bucket}')`);
  }
}

/** B1.1 and the backend's own settings (D8 zero caps, D22 retention policy). */
export function checkBackend(config: AppConfig): void {
  const backend = config.notification_backend;
  if (!(BACKEND_KINDS as readonly string[]).includes(backend.kind)) {
    configError(`Unknown notification_backend kind: ${backend.kind}`);
  }
  if (backend.kind === 'in_memory') {
    for (const field of ['max_history_per_topic', 'max_topics'] as const) {
      const value = backend.in_memory[field];
      if (value <= 0) configError(`notification_backend.in_memory.${field}: must be greater than 0, got ${value}`);
    }
    checkMaxTotalSize(backend.in_memory.max_total_size, config.application.max_body_bytes);
    if (backend.in_memory.persist_sequences && backend.in_memory.state_directory.trim() === '') {
      configError('notification_backend.in_memory.state_directory: must not be blank while persist_sequences is true');
    }
  }
  if (backend.kind === 'in_memory') checkWorkersShareHistory(config.application.workers);
  if (backend.kind === 'jetstream') {
    const policy = backend.jetstream.retention_policy;
    if (policy !== 'limits') {
      configError(
        `notification_backend.jetstream.retention_policy: '${policy}' is not supported (only 'limits'): it would delete notifications that watch and replay still need (D22)`,
      );
    }
  }
}

/** A budget every notify fits in: below it, a notification within the body limit could be refused for its size. */
function checkMaxTotalSize(text: string, maxBodyBytes: number): void {
  const where = 'notification_backend.in_memory.max_total_size';
  const bytes = parseOr(text, parseSize, (reason) => configError(`${where}: ${reason}`));
  const smallest = smallestTotalBytes(maxBodyBytes);
  if (bytes < smallest) {
    configError(
      `${where}: must be at least ${smallest} bytes (4 × application.max_body_bytes + 8 KiB, so that any notification notify accepts fits), got '${text}' (${bytes} bytes)`,
    );
  }
}

/**
 * D36: worker processes share nothing but the backend, and the in-memory backend's history lives
 * in the process that stored it, so a watch on one worker would never see another's notifications.
 */
function checkWorkersShareHistory(setting: AppConfig['application']['workers']): void {
  const count = resolveWorkerCount(setting);
  if (count > 1) {
    const asked =
      setting === 'auto' ? `auto means ${count} server processes here (one per usable CPU), which` : `${count} server processes`;
    configError(
      `application.workers: ${asked} need notification_backend.kind jetstream: the in_memory backend keeps its notifications inside one process (set application.workers to 1)`,
    );
  }
}
