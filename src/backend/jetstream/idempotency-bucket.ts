import { JetStreamApiCodes, JetStreamApiError, StorageType, type StreamConfig } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import {
  judgeRecord,
  replayOf,
  type IdempotencyBegin,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotencyRecords,
  type StoredOutcome,
} from '../idempotency-records.js';
import { BucketOnLink } from './bucket-on-link.js';
import type { NatsClients, NatsLink } from './nats-link.js';
import { errorText } from './nats-errors.js';

export interface IdempotencyBucketSettings {
  /** `notification_backend.jetstream.idempotency_bucket`. */
  readonly name: string;
  /** `idempotency.window`: the bucket's TTL, so a record lives that long after its last write. */
  readonly windowMs: number;
  /** The streams' replica count. */
  readonly replicas: number;
  /** A pending record older than this may be taken over (see `judgeRecord`). */
  readonly staleAfterMs: number;
}

const NANOS_PER_MS = 1_000_000;
/** Concurrent writers can make create and compare-and-set lose again and again only while others win, so a few rounds settle it. */
const MAX_ROUNDS = 5;

/**
 * The records of `Idempotency-Key`s in a JetStream key-value bucket (docs/backends.md
 * "Idempotent notify"), shared by every process on the NATS: an atomic create decides which request
 * is first, a compare-and-set on the revision takes over a stale pending record or completes it,
 * and the bucket's TTL forgets a record the window after it was last written.
 */
export class IdempotencyBucket implements IdempotencyRecords {
  private readonly kv: BucketOnLink;
  private reconciled = false;

  constructor(
    link: NatsLink,
    private readonly settings: IdempotencyBucketSettings,
    private readonly logger: Logger,
  ) {
    this.kv = new BucketOnLink(link, (clients) => this.open(clients));
  }

  /**
   * Creates the bucket or reconciles its TTL and replicas, as the streams are; a failure is logged
   * and the next request with a key tries again (a server whose clients never send one must not
   * stop because its NATS account has no right to the bucket).
   */
  async ensureAtStartup(): Promise<void> {
    try {
      await this.bucket();
    } catch (error) {
      this.logger.warn(
        { event_name: 'backend.jetstream.idempotency.bucket.failed', bucket: this.settings.name, error: errorText(error) },
        `Key-value bucket ${this.settings.name} could not be set up; notify requests with an Idempotency-Key try again`,
      );
    }
  }

  async begin(recordKey: string, fingerprint: string): Promise<IdempotencyBegin> {
    const kv = await this.bucket();
    for (let round = 1; ; round++) {
      const pending = encode({ state: 'pending', fingerprint, since: Date.now() });
      try {
        return { kind: 'new', claim: { recordKey, fingerprint, revision: await kv.create(recordKey, pending) } };
      } catch (error) {
        if (!isWrongLastSequence(error) || round >= MAX_ROUNDS) throw error;
      }
      const entry = await kv.get(recordKey);
      // Deleted (an abandoned claim) or expired since the create failed: create again.
      if (!entry || entry.operation !== 'PUT') continue;
      const record = decode(entry.string());
      const verdict = record ? judgeRecord(record, fingerprint, Date.now(), this.settings.staleAfterMs) : 'take_over';
      if (verdict === 'replay' && record?.state === 'done') return replayOf(record);
      if (verdict === 'reused' || verdict === 'in_progress') return { kind: verdict };
      try {
        return { kind: 'new', claim: { recordKey, fingerprint, revision: await kv.update(recordKey, pending, entry.revision) } };
      } catch (error) {
        if (!isWrongLastSequence(error) || round >= MAX_ROUNDS) throw error;
      }
    }
  }

  /**
   * A failure here is logged, not thrown: the notification is stored and its answer is due. A
   * retry then finds the pending record (409, then a take-over once stale), and its publish is
   * dropped as a duplicate by the stream, so it is still answered as a replay.
   */
  async complete(claim: IdempotencyClaim, outcome: StoredOutcome): Promise<void> {
    const done: IdempotencyRecord = {
      state: 'done',
      fingerprint: outcome.fingerprint ?? claim.fingerprint,
      processed_at: outcome.processedAt,
      sequence: outcome.sequence,
    };
    try {
      await (await this.bucket()).update(claim.recordKey, encode(done), claim.revision);
    } catch (error) {
      this.logFailure('complete', claim, error);
    }
  }

  async abandon(claim: IdempotencyClaim): Promise<void> {
    try {
      await (await this.bucket()).delete(claim.recordKey, { previousSeq: claim.revision });
    } catch (error) {
      this.logFailure('abandon', claim, error);
    }
  }

  private logFailure(operation: 'complete' | 'abandon', claim: IdempotencyClaim, error: unknown): void {
    this.logger.warn(
      {
        event_name: `backend.jetstream.idempotency.${operation}.failed`,
        bucket: this.settings.name,
        record: claim.recordKey.slice(0, 12),
        error: errorText(error),
      },
      operation === 'complete' ? 'Idempotency record not completed' : 'Idempotency record not removed',
    );
  }

  /** The bucket on the current connection (the link may have replaced it), created and reconciled once. */
  private bucket(): Promise<KV> {
    return this.kv.get();
  }

  private async open(clients: NatsClients): Promise<KV> {
    const { name, windowMs, replicas } = this.settings;
    const kv = await new Kvm(clients.js).create(name, { history: 1, ttl: windowMs, replicas, storage: StorageType.File });
    if (!this.reconciled) {
      await this.reconcile(clients, `KV_${name}`);
      this.reconciled = true;
    }
    return kv;
  }

  /** An existing bucket keeps its TTL and replicas on create: bring them to the configured ones. */
  private async reconcile(clients: NatsClients, stream: string): Promise<void> {
    const { config } = await clients.jsm.streams.info(stream);
    const wanted = { max_age: this.settings.windowMs * NANOS_PER_MS, num_replicas: this.settings.replicas };
    const drifted = (Object.keys(wanted) as (keyof typeof wanted)[]).filter((field) => (config[field] || 1) !== (wanted[field] || 1));
    if (drifted.length === 0) return;
    const next: StreamConfig = { ...config, ...wanted };
    // A stream's duplicate window may not exceed its max age.
    if (config.duplicate_window > wanted.max_age) next.duplicate_window = wanted.max_age;
    try {
      await clients.jsm.streams.update(stream, next);
      this.logger.info(
        { event_name: 'backend.jetstream.idempotency.bucket.reconciled', bucket: this.settings.name, fields: drifted },
        `Key-value bucket ${this.settings.name} updated: ${drifted.join(', ')}`,
      );
    } catch (error) {
      this.logger.warn(
        {
          event_name: 'backend.jetstream.idempotency.bucket.reconcile.failed',
          bucket: this.settings.name,
          fields: drifted,
          error: errorText(error),
        },
        `Key-value bucket ${this.settings.name} keeps its configuration`,
      );
    }
  }
}

function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

function encode(record: IdempotencyRecord): string {
  return JSON.stringify(record);
}

/** A record another writer garbled reads as undefined, and is taken over. */
function decode(text: string): IdempotencyRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<IdempotencyRecord> | null;
    if (value?.state === 'pending' && typeof value.fingerprint === 'string' && typeof value.since === 'number') {
      return value as IdempotencyRecord;
    }
    if (
      value?.state === 'done' &&
      typeof value.fingerprint === 'string' &&
      typeof value.processed_at === 'string' &&
      typeof value.sequence === 'number'
    ) {
      return value as IdempotencyRecord;
    }
  } catch {
    // fall through
  }
  return undefined;
}
