import type {
  BatchPublishOptions,
  BatchPublishOutcome,
  Batch,
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
} from '../../src/backend/backend.js';
import { pagingCursor } from '../../src/backend/backend.js';
import { publishInWaves } from '../../src/backend/publish-waves.js';
import type { IdempotencyRecords } from '../../src/backend/idempotency-records.js';
import type { TopicPattern } from '../../src/topic/topic-pattern.js';

/**
 * A real backend with faults injected on request, for the failure paths the in-memory backend
 * cannot produce by itself (a batch fetch that fails, a subscription the backend ends).
 */
export class FaultyBackend implements NotificationBackend {
  readonly kind;
  /** 1-based numbers of the fetchBatch calls that fail. */
  failFetchCalls = new Set<number>();
  failSubscribe: Error | undefined;
  failCapture: Error | undefined;
  fetchCalls = 0;
  /** 1-based numbers of the publish calls that fail (a store failure as JetStream would give). */
  failPublishCalls = new Set<number>();
  publishCalls = 0;
  readonly sinks: LiveSink[] = [];

  constructor(private readonly inner: NotificationBackend) {
    this.kind = inner.kind;
  }

  applySchemas(schemas: readonly SchemaStorage[]): Promise<void> {
    return this.inner.applySchemas(schemas);
  }

  async publish(notification: NotificationToStore, options?: PublishOptions): Promise<PublishResult> {
    this.publishCalls++;
    if (this.failPublishCalls.has(this.publishCalls)) throw new Error(`injected failure of publish ${this.publishCalls}`);
    return this.inner.publish(notification, options);
  }

  /** In waves as on JetStream, through `publish`, so injected publish failures apply to batches too. */
  publishMany(notifications: readonly NotificationToStore[], options: BatchPublishOptions = {}): Promise<readonly BatchPublishOutcome[]> {
    const ids = options.deduplicationIds ?? [];
    return publishInWaves(notifications, (notification, index) => {
      const deduplicationId = ids[index];
      return this.publish(notification, deduplicationId === undefined ? {} : { deduplicationId });
    });
  }

  get idempotency(): IdempotencyRecords {
    return this.inner.idempotency;
  }

  async subscribe(pattern: TopicPattern, sink: LiveSink): Promise<LiveSubscription> {
    if (this.failSubscribe) throw this.failSubscribe;
    this.sinks.push(sink);
    return this.inner.subscribe(pattern, sink);
  }

  async captureHistoryBound(pattern: TopicPattern): Promise<number> {
    if (this.failCapture) throw this.failCapture;
    return this.inner.captureHistoryBound(pattern);
  }

  async fetchBatch(request: FetchRequest): Promise<Batch> {
    this.fetchCalls++;
    if (this.failFetchCalls.has(this.fetchCalls)) throw new Error(`injected failure of fetch ${this.fetchCalls}`);
    return this.inner.fetchBatch(request);
  }

  /** Pages through `fetchBatch`, so injected batch failures apply to replays too. */
  async openReplay(request: ReplayRequest): Promise<ReplayCursor> {
    return pagingCursor((fetch) => this.fetchBatch(fetch), request);
  }

  deleteMessage(streamKey: string, sequence: number): Promise<DeleteOutcome> {
    return this.inner.deleteMessage(streamKey, sequence);
  }

  wipeStream(streamName: string): Promise<WipeOutcome> {
    return this.inner.wipeStream(streamName);
  }

  wipeAll(): Promise<void> {
    return this.inner.wipeAll();
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
}
