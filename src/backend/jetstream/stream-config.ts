import type { StreamConfig } from '@nats-io/jetstream';
import type { JetStreamConfig, StoragePolicyConfig } from '../../config/model.js';
import { parseDuration, parseSize } from '../../config/units.js';

/** How one topic base is stored (docs/design/rules/backends.md §7.3–§7.4). */
export interface StreamLayout {
  /** The upper-cased (encoded) base, e.g. `MARS`. */
  readonly name: string;
  /** `<b>.>`, plus the bare `<b>` for bases whose topics may consist of the base alone (D19). */
  readonly subjects: readonly string[];
  readonly storagePolicy: StoragePolicyConfig | undefined;
}

/** The fields ensure-stream manages; everything else on an existing stream is left as it is. */
export type DesiredStreamConfig = Pick<
  StreamConfig,
  | 'name'
  | 'subjects'
  | 'storage'
  | 'retention'
  | 'discard'
  | 'max_msgs_per_subject'
  | 'max_msgs'
  | 'max_bytes'
  | 'max_age'
  | 'num_replicas'
  | 'duplicate_window'
> & { compression?: StreamConfig['compression'] };

const NANOS_PER_SECOND = 1_000_000_000;
/** `idempotency.window`'s default, JetStream's own default duplicate window too. */
export const DEFAULT_DUPLICATE_WINDOW_SEC = 120;

/**
 * Backend defaults overlaid by the schema's `storage_policy`; unset limits are "unlimited". The
 * compression field is only ever sent to servers that know it (docs/design/rules/backends.md §7.5).
 */
export function desiredStreamConfig(
  layout: StreamLayout,
  defaults: JetStreamConfig,
  compressionSupported: boolean,
  duplicateWindowSec: number = DEFAULT_DUPLICATE_WINDOW_SEC,
): DesiredStreamConfig {
  const policy = layout.storagePolicy ?? {};
  const retention = policy.retention_time ?? defaults.retention_time;
  const maxAge = retention !== undefined ? parseDuration(retention) * NANOS_PER_SECOND : 0;
  const config: DesiredStreamConfig = {
    name: layout.name,
    subjects: [...layout.subjects],
    storage: defaults.storage_type,
    retention: defaults.retention_policy,
    discard: defaults.discard_policy,
    max_msgs_per_subject: policy.allow_duplicates === true ? -1 : 1,
    max_msgs: policy.max_messages ?? defaults.max_messages ?? -1,
    max_bytes: policy.max_size !== undefined ? parseSize(policy.max_size) : (defaults.max_bytes ?? -1),
    max_age: maxAge,
    num_replicas: defaults.replicas ?? 1,
    duplicate_window: duplicateWindowNs(maxAge, duplicateWindowSec),
  };
  if (compressionSupported && policy.compression !== undefined) {
    config.compression = policy.compression ? 's2' : 'none';
  }
  return config;
}

/**
 * The window an `Idempotency-Key` can be retried in (docs/backends.md "Idempotent notify"), bounded
 * by the stream's own `max_age`, which nats-server refuses to let a duplicate window exceed.
 */
function duplicateWindowNs(maxAgeNs: number, windowSec: number): number {
  const window = windowSec * NANOS_PER_SECOND;
  return maxAgeNs > 0 ? Math.min(maxAgeNs, window) : window;
}

type Compared = Exclude<keyof DesiredStreamConfig, 'name' | 'storage'>;

/** Mutable fields compared on access; `storage` is never changed (docs/design/rules/backends.md §7.4 step 2). */
const COMPARED: readonly Compared[] = [
  'subjects',
  'max_msgs',
  'max_bytes',
  'max_age',
  'max_msgs_per_subject',
  'num_replicas',
  'duplicate_window',
  'compression',
  'discard',
  'retention',
];

/** Names of the fields whose normalised values differ ("unlimited" has several spellings). */
export function driftedFields(current: Partial<StreamConfig>, desired: DesiredStreamConfig, compressionSupported: boolean): Compared[] {
  return COMPARED.filter((field) => {
    if (field === 'compression' && (!compressionSupported || desired.compression === undefined)) return false;
    return normalise(field, current[field]) !== normalise(field, desired[field]);
  });
}

function normalise(field: Compared, value: DesiredStreamConfig[Compared] | '' | undefined): string {
  switch (field) {
    case 'subjects':
      return [...((value as string[] | undefined) ?? [])].sort().join(' ');
    case 'max_msgs':
    case 'max_bytes':
    case 'max_msgs_per_subject':
      return value === undefined || value === 0 || value === -1 ? 'unlimited' : String(value);
    case 'max_age':
      return value === undefined || value === 0 ? 'unlimited' : String(value);
    case 'num_replicas':
      return value === undefined || value === 0 ? '1' : String(value);
    case 'duplicate_window':
      return String(value ?? 0);
    case 'compression':
      return value === undefined || value === '' ? 'none' : String(value);
    default:
      return String(value);
  }
}

/** The configuration to send in an update: the current one with the drifted fields replaced. */
export function updatedStreamConfig(current: StreamConfig, desired: DesiredStreamConfig, fields: readonly Compared[]): StreamConfig {
  const next: StreamConfig = { ...current };
  for (const field of fields) Object.assign(next, { [field]: desired[field] });
  return next;
}
