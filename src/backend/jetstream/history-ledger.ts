import { JetStreamApiCodes, JetStreamApiError, StorageType } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { BucketOnLink } from './bucket-on-link.js';
import type { NatsLink } from './nats-link.js';
import { errorText } from './nats-errors.js';

/**
 * What admin operations removed from one stream, which nothing left in the stream records: the
 * deletes (sequence, topic, storage time) and how far wipes reached (D42). Retention by limits is
 * not here: the stream's own first sequence says it (replay-losses.ts).
 */
export interface LedgerEntry {
  /**
   * Deleted notifications, ascending by sequence: `[sequence, topic, storage time in ms,
   * predecessor]`, the predecessor being the sequence its topic held before it (0: none or unknown).
   */
  readonly deleted: readonly DeletedRecord[];
  /** Every sequence up to this one was wiped (purged); 0 when never. */
  readonly wipedThrough: number;
  /** When the last wipe happened (ms since the epoch); 0 when never. */
  readonly wipedAtMs: number;
  /** Deletes at or below this sequence are no longer recorded one by one (the record's bound). */
  readonly forgottenThrough: number;
  /** The latest storage time among them (ms). */
  readonly forgottenAtMs: number;
}

export type DeletedRecord = readonly [sequence: number, topic: string, storedAtMs: number, predecessor: number];

const EMPTY_LEDGER: LedgerEntry = { deleted: [], wipedThrough: 0, wipedAtMs: 0, forgottenThrough: 0, forgottenAtMs: 0 };

/** Deletes recorded per stream; past it the oldest are forgotten into `forgottenThrough`. */
const MAX_RECORDED_DELETES = 1000;
/** Concurrent writers can only make compare-and-set lose while others win, so a few rounds settle it. */
const MAX_ROUNDS = 8;

export interface HistoryLedgerSettings {
  /** `notification_backend.jetstream.history_ledger_bucket`. */
  readonly name: string;
  readonly replicas: number;
}

/**
 * The ledger in a JetStream key-value bucket, one key per stream, shared by every process on the
 * NATS: a delete or a wipe is recorded (compare-and-set) before it is carried out, so a replay never
 * misses one; a record of an operation that then failed only makes a replay name a loss that did
 * not happen, never the other way round.
 */
export class HistoryLedger {
  private readonly kv: BucketOnLink;

  constructor(
    link: NatsLink,
    private readonly settings: HistoryLedgerSettings,
    private readonly logger: Logger,
  ) {
    this.kv = new BucketOnLink(link, (clients) =>
      new Kvm(clients.js).create(settings.name, { history: 1, replicas: settings.replicas, storage: StorageType.File }),
    );
  }

  /** Creates the bucket; a failure is logged and the next operation that needs it tries again. */
  async ensureAtStartup(): Promise<void> {
    try {
      await this.bucket();
    } catch (error) {
      this.logger.warn(
        { event_name: 'backend.jetstream.history_ledger.bucket.failed', bucket: this.settings.name, error: errorText(error) },
        `Key-value bucket ${this.settings.name} could not be set up; deletes, wipes and replays try again`,
      );
    }
  }

  /**
   * The stream's entry; the empty one when nothing was ever recorded. A bucket that cannot be set
   * up holds no record (a delete or wipe is refused when it cannot be recorded), so replays go on
   * without it, with a warning.
   */
  async read(stream: string): Promise<LedgerEntry> {
    let kv: KV;
    try {
      kv = await this.bucket();
    } catch (error) {
      this.warnUnavailable(error);
      return EMPTY_LEDGER;
    }
    const entry = await kv.get(keyOf(stream));
    return entry && entry.operation === 'PUT' ? decode(entry.string()) : EMPTY_LEDGER;
  }

  private lastWarningAt = 0;

  private warnUnavailable(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarningAt < 60_000) return;
    this.lastWarningAt = now;
    this.logger.warn(
      { event_name: 'backend.jetstream.history_ledger.unavailable', bucket: this.settings.name, error: errorText(error) },
      `Key-value bucket ${this.settings.name} is not available: replays go on without it; admin deletes and wipes are refused until it is`,
    );
  }

  async recordDeletion(stream: string, sequence: number, topic: string, storedAtMs: number, predecessor: number): Promise<void> {
    await this.change(stream, (entry) => {
      const record: DeletedRecord = [sequence, topic, storedAtMs, predecessor];
      const deleted = [...entry.deleted.filter(([recorded]) => recorded !== sequence), record].sort((a, b) => a[0] - b[0]);
      let { forgottenThrough, forgottenAtMs } = entry;
      while (deleted.length > MAX_RECORDED_DELETES) {
        const [oldest] = deleted.splice(0, 1);
        if (!oldest) break;
        forgottenThrough = Math.max(forgottenThrough, oldest[0]);
        forgottenAtMs = Math.max(forgottenAtMs, oldest[2]);
      }
      return { ...entry, deleted, forgottenThrough, forgottenAtMs };
    });
  }

  /** Everything up to `throughSequence` is about to be purged. */
  async recordWipe(stream: string, throughSequence: number, atMs: number): Promise<void> {
    await this.change(stream, (entry) => ({
      ...entry,
      // The deletes below the wipe are inside it now.
      deleted: entry.deleted.filter(([sequence]) => sequence > throughSequence),
      wipedThrough: Math.max(entry.wipedThrough, throughSequence),
      wipedAtMs: Math.max(entry.wipedAtMs, atMs),
    }));
  }

  private async change(stream: string, update: (entry: LedgerEntry) => LedgerEntry): Promise<void> {
    const kv = await this.bucket();
    const key = keyOf(stream);
    for (let round = 1; ; round++) {
      const current = await kv.get(key);
      const exists = current !== null && current.operation === 'PUT';
      const next = encode(update(exists ? decode(current.string()) : EMPTY_LEDGER));
      try {
        if (exists) await kv.update(key, next, current.revision);
        else await kv.create(key, next);
        return;
      } catch (error) {
        if (!isWrongLastSequence(error) || round >= MAX_ROUNDS) throw error;
      }
    }
  }

  private bucket(): Promise<KV> {
    return this.kv.get();
  }
}

/** Stream names are percent-encoded, which a key may not be: the key is the name in base64url. */
function keyOf(stream: string): string {
  return `stream.${Buffer.from(stream, 'utf8').toString('base64url')}`;
}

interface StoredEntry {
  d?: unknown;
  w?: unknown;
  wa?: unknown;
  f?: unknown;
  fa?: unknown;
}

function encode(entry: LedgerEntry): string {
  const stored: StoredEntry = {
    d: entry.deleted,
    w: entry.wipedThrough,
    wa: entry.wipedAtMs,
    f: entry.forgottenThrough,
    fa: entry.forgottenAtMs,
  };
  return JSON.stringify(stored);
}

/**
 * An entry another writer garbled cannot be trusted for any sequence: it reads as everything
 * forgotten up to the largest number it mentions, so replays name those sequences lost.
 */
function decode(text: string): LedgerEntry {
  let value: StoredEntry;
  try {
    value = JSON.parse(text) as StoredEntry;
  } catch {
    return { ...EMPTY_LEDGER, forgottenThrough: Number.MAX_SAFE_INTEGER, forgottenAtMs: Number.MAX_SAFE_INTEGER };
  }
  const deleted: DeletedRecord[] = Array.isArray(value.d)
    ? value.d
        .filter(
          (item): item is [number, string, number, number?] =>
            Array.isArray(item) && Number.isSafeInteger(item[0]) && typeof item[1] === 'string' && typeof item[2] === 'number',
        )
        .map(([sequence, topic, storedAtMs, predecessor]) => [sequence, topic, storedAtMs, numberOr0(predecessor)] as const)
    : [];
  return {
    deleted,
    wipedThrough: numberOr0(value.w),
    wipedAtMs: numberOr0(value.wa),
    forgottenThrough: numberOr0(value.f),
    forgottenAtMs: numberOr0(value.fa),
  };
}

function numberOr0(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}
