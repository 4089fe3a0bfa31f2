import { describe, expect, it } from 'vitest';
import type { JetStreamConfig } from '../../../../src/config/model.js';
import { desiredStreamConfig, driftedFields, updatedStreamConfig } from '../../../../src/backend/jetstream/stream-config.js';
import type { StreamConfig } from '@nats-io/jetstream';

const defaults: JetStreamConfig = {
  nats_url: 'nats://localhost:4222',
  timeout_seconds: 30,
  retry_attempts: 3,
  storage_type: 'file',
  retention_policy: 'limits',
  discard_policy: 'old',
  max_reconnect_attempts: 5,
  reconnect_delay_ms: 2000,
  publish_retry_attempts: 5,
  publish_retry_base_delay_ms: 150,
  live_gap_wait_ms: 2000,
  idempotency_bucket: 'AVISO_IDEMPOTENCY',
  history_ledger_bucket: 'AVISO_HISTORY_LEDGER',
};
const layout = { name: 'MARS', subjects: ['mars.>'], storagePolicy: undefined };

describe('desiredStreamConfig (docs/design/rules/backends.md §7.4)', () => {
  it('uses the fixed layer and unlimited limits by default', () => {
    expect(desiredStreamConfig(layout, defaults, false)).toEqual({
      name: 'MARS',
      subjects: ['mars.>'],
      storage: 'file',
      retention: 'limits',
      discard: 'old',
      max_msgs_per_subject: 1,
      max_msgs: -1,
      max_bytes: -1,
      max_age: 0,
      num_replicas: 1,
      duplicate_window: 120e9,
    });
  });

  it('sets the duplicate window to idempotency.window, bounded by the stream max_age (docs/backends.md "Idempotent notify")', () => {
    expect(desiredStreamConfig(layout, defaults, false, 600).duplicate_window).toBe(600e9);
    expect(desiredStreamConfig(layout, { ...defaults, retention_time: '1h' }, false, 600).duplicate_window).toBe(600e9);
    expect(desiredStreamConfig(layout, { ...defaults, retention_time: '5m' }, false, 600).duplicate_window).toBe(300e9);
    expect(desiredStreamConfig({ ...layout, storagePolicy: { retention_time: '30s' } }, defaults, false, 600).duplicate_window).toBe(30e9);
  });

  it('overlays the schema storage_policy on the backend defaults (the spec example)', () => {
    const config = desiredStreamConfig(
      {
        ...layout,
        storagePolicy: { retention_time: '7d', max_messages: 5000, max_size: '64Mi', allow_duplicates: true },
      },
      { ...defaults, max_messages: 5, max_bytes: 2048, retention_time: '1h' },
      false,
    );
    expect(config).toMatchObject({
      max_msgs: 5000,
      max_bytes: 67108864,
      max_age: 7 * 86400 * 1e9,
      max_msgs_per_subject: -1,
    });
  });

  it('keeps backend defaults where the policy is silent', () => {
    const config = desiredStreamConfig(
      layout,
      { ...defaults, max_messages: 5, max_bytes: 2048, retention_time: '1h', replicas: 3, storage_type: 'memory', discard_policy: 'new' },
      false,
    );
    expect(config).toMatchObject({ max_msgs: 5, max_bytes: 2048, max_age: 3600e9, num_replicas: 3, storage: 'memory', discard: 'new' });
  });

  it('sends compression only to servers that support it (D11)', () => {
    const compressed = { ...layout, storagePolicy: { compression: true } };
    expect(desiredStreamConfig(compressed, defaults, false)).not.toHaveProperty('compression');
    expect(desiredStreamConfig(compressed, defaults, true).compression).toBe('s2');
    expect(desiredStreamConfig({ ...layout, storagePolicy: { compression: false } }, defaults, true).compression).toBe('none');
    expect(desiredStreamConfig(layout, defaults, true)).not.toHaveProperty('compression');
  });
});

describe('driftedFields', () => {
  const desired = desiredStreamConfig(layout, defaults, true);

  it('treats every spelling of unlimited as equal', () => {
    const current: Partial<StreamConfig> = {
      subjects: ['mars.>'],
      max_msgs: 0,
      max_bytes: -1,
      max_age: 0,
      max_msgs_per_subject: 1,
      num_replicas: 0,
      duplicate_window: 120e9,
      discard: 'old',
      retention: 'limits',
    };
    expect(driftedFields(current, desired, true)).toEqual([]);
  });

  it('names the fields that differ, comparing subjects as a set', () => {
    const current: Partial<StreamConfig> = {
      subjects: ['mars.>', 'mars'],
      max_msgs: 10,
      max_bytes: -1,
      max_age: 0,
      max_msgs_per_subject: -1,
      num_replicas: 1,
      duplicate_window: 60e9,
      discard: 'new',
      retention: 'limits',
    };
    expect(driftedFields(current, desired, true)).toEqual(['subjects', 'max_msgs', 'max_msgs_per_subject', 'duplicate_window', 'discard']);
  });

  it('ignores compression on servers without it', () => {
    const wanting = desiredStreamConfig({ ...layout, storagePolicy: { compression: true } }, defaults, true);
    expect(driftedFields({ ...wanting, compression: undefined }, wanting, false)).toEqual([]);
    expect(driftedFields({ ...wanting, compression: undefined }, wanting, true)).toEqual(['compression']);
  });

  it('builds an update from the current config with only the drifted fields replaced', () => {
    const current = { name: 'MARS', subjects: ['mars.>'], max_msgs: 10, duplicate_window: 42 } as unknown as StreamConfig;
    expect(updatedStreamConfig(current, desired, ['max_msgs'])).toEqual({ ...current, max_msgs: -1 });
  });
});
