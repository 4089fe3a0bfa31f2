import { performance } from 'node:perf_hooks';
import type {
  BatchPublishOptions,
  BatchPublishOutcome,
  Batch,
  BackendKind,
  BackendStats,
  DeleteOutcome,
  WipeOutcome,
  FetchRequest,
  LiveSink,
  LiveSubscription,
  NotificationBackend,
  NotificationToStore,
  PublishOptions,
  PublishResult,
  ReplayCursor,
  ReplayRequest,
  SchemaStorage,
} from '../backend/backend.js';
import type { IdempotencyRecords } from '../backend/idempotency-records.js';
import type { TopicPattern } from '../topic/topic-pattern.js';

export const BACKEND_OPERATIONS = ['publish', 'get_batch', 'wipe_stream', 'wipe_all', 'delete_message'] as const;
export type BackendOperation = (typeof BACKEND_OPERATIONS)[number];
export const BACKEND_OUTCOMES = ['ok', 'error'] as const;
export type BackendOutcome = (typeof BACKEND_OUTCOMES)[number];

export type RecordOperation = (operation: BackendOperation, outcome: BackendOutcome, elapsedSeconds: number) => void;

/**
 * Counts and times the backend calls of docs/design/rules/operations.md §3.3.4 (`operation`); live subscription set-up, history
 * bounds, stats and shutdown are forwarded untimed because the spec does not measure them.
 */
export class InstrumentedBackend implements NotificationBackend {
  readonly kind: BackendKind;

  constructor(
    private readonly inner: NotificationBackend,
    private readonly record: RecordOperation,
  ) {
    this.kind = inner.kind;
  }

  applySchemas(schemas: readonly SchemaStorage[]): Promise<void> {
    return this.inner.applySchemas(schemas);
  }

  publish(notification: NotificationToStore, options?: PublishOptions): Promise<PublishResult> {
    return this.timed('publish', () => this.inner.publish(notification, options));
  }

  /**
   * Each notification of a batch counts as one `publish` timed as the whole batch (its answer
   * waited for all of them); one not sent after an earlier failure counts as an `error`.
   */
  async publishMany(notifications: readonly NotificationToStore[], options?: BatchPublishOptions): Promise<readonly BatchPublishOutcome[]> {
    const started = performance.now();
    let outcomes: readonly BatchPublishOutcome[];
    try {
      outcomes = await this.inner.publishMany(notifications, options);
    } catch (error) {
      const elapsed = (performance.now() - started) / 1000;
      for (let i = 0; i < notifications.length; i++) this.record('publish', 'error', elapsed);
      throw error;
    }
    const elapsed = (performance.now() - started) / 1000;
    for (const outcome of outcomes) this.record('publish', outcome.stored ? 'ok' : 'error', elapsed);
    return outcomes;
  }

  get idempotency(): IdempotencyRecords {
    return this.inner.idempotency;
  }

  subscribe(pattern: TopicPattern, sink: LiveSink): Promise<LiveSubscription> {
    return this.inner.subscribe(pattern, sink);
  }

  captureHistoryBound(pattern: TopicPattern): Promise<number> {
    return this.inner.captureHistoryBound(pattern);
  }

  fetchBatch(request: FetchRequest): Promise<Batch> {
    return this.timed('get_batch', () => this.inner.fetchBatch(request));
  }

  /** Each batch a replay cursor reads counts as one `get_batch`, like `fetchBatch`. */
  async openReplay(request: ReplayRequest): Promise<ReplayCursor> {
    const cursor = await this.inner.openReplay(request);
    return {
      next: (limit) => this.timed('get_batch', () => cursor.next(limit)),
      close: () => cursor.close(),
      ...(cursor.unshared === true ? { unshared: true } : {}),
    };
  }

  /** `not_found` is a successful call: the backend answered. */
  deleteMessage(streamKey: string, sequence: number): Promise<DeleteOutcome> {
    return this.timed('delete_message', () => this.inner.deleteMessage(streamKey, sequence));
  }

  wipeStream(streamName: string): Promise<WipeOutcome> {
    return this.timed('wipe_stream', () => this.inner.wipeStream(streamName));
  }

  wipeAll(): Promise<void> {
    return this.timed('wipe_all', () => this.inner.wipeAll());
  }

  stats(): Promise<BackendStats> {
    return this.inner.stats();
  }

  isConnected(): boolean {
    return this.inner.isConnected();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  /** A synchronous throw and a rejection both count as `error`; the original error is rethrown. */
  private async timed<T>(operation: BackendOperation, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      this.record(operation, 'ok', (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      this.record(operation, 'error', (performance.now() - started) / 1000);
      throw error;
    }
  }
}
