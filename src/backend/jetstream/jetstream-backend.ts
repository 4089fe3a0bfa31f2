import { setTimeout as delay } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type {
  BatchPublishOptions,
  BatchPublishOutcome,
  Batch,
  BackendStats,
  DeleteOutcome,
  FetchRequest,
  LiveSink,
  LiveSubscription,
  NotificationBackend,
  NotificationToStore,
  PublishOptions,
  PublishResult,
  ReplayCursor,
  StoredNotification,
  ReplayRequest,
  SchemaStorage,
  WipeOutcome,
} from '../backend.js';
import { NotificationTooLargeError } from '../backend.js';
import type { JetStreamConfig } from '../../config/model.js';
import { decodeToken } from '../../topic/percent-codec.js';
import { streamNameOf } from '../../topic/stream-name.js';
import type { TopicPattern } from '../../topic/topic-pattern.js';
import { DEFAULT_IDEMPOTENCY, PENDING_STALE_AFTER_MS, type IdempotencySettings } from '../idempotency-records.js';
import { IdempotencyBucket } from './idempotency-bucket.js';
import { LiveFeeds } from './live-feeds.js';
import { publishedBytes, toHeaders, toStoredNotification } from './message-mapping.js';
import { NatsLink, type NatsClients } from './nats-link.js';
import { errorText, isConnectionLost, isMaxPayloadExceeded, isMessageNotFound, isNoResponders, isStreamNotFound } from './nats-errors.js';
import { JetStreamReplayCursor, fetchJetStreamBatch } from './replay-fetch.js';
import { StreamCatalog } from './stream-catalog.js';
import type { StreamLayout } from './stream-config.js';
import { HistoryLedger } from './history-ledger.js';
import { readKnownLosses } from './replay-losses.js';
import { StreamAdmin } from './stream-admin.js';
import { TopicPredecessors } from './topic-predecessors.js';
import { publishInWaves } from '../publish-waves.js';
import type { DeploymentExchange } from '../deployment-exchange.js';
import type { Clock } from '../../time/clock.js';
import { AdminExchange } from './admin-exchange.js';

/** How long notify waits for JetStream to acknowledge a publish. */
const PUBLISH_ACK_TIMEOUT_MS = 5_000;
/**
 * Upper bound on one publish with its retries and its re-ensure, so notify always answers in
 * bounded time, even while a cluster elects a new leader or a restarted server gets JetStream ready.
 */
const PUBLISH_DEADLINE_MS = 10_000;

export interface JetStreamBackendOptions {
  readonly settings: JetStreamConfig;
  readonly configured: readonly SchemaStorage[];
  readonly logger: Logger;
  /** The `idempotency` section; the configuration defaults when absent. */
  readonly idempotency?: IdempotencySettings;
}

/**
 * The JetStream backend (docs/design/rules/backends.md §7): one stream per topic base, publishes acknowledged before
 * notify answers, one shared live feed per stream (D10) that every accepted notification reaches
 * (D39), replay through short-lived ordered consumers, and admin operations limited to the streams
 * this configuration owns (D22).
 */
export class JetStreamBackend implements NotificationBackend {
  readonly kind = 'jetstream' as const;
  private readonly live: LiveFeeds;
  /** What each topic last held, so every stored notification names its predecessor (D42). */
  private readonly predecessors = new TopicPredecessors();
  private readonly admin: StreamAdmin;
  /** The exchange with the other processes of the deployment (D49), once asked for. */
  private exchange: AdminExchange | undefined;

  private constructor(
    private readonly link: NatsLink,
    private readonly catalog: StreamCatalog,
    private readonly settings: JetStreamConfig,
    private readonly logger: Logger,
    readonly idempotency: IdempotencyBucket,
    private readonly windowSec: number,
    private readonly ledger: HistoryLedger,
  ) {
    this.admin = new StreamAdmin(link, catalog, ledger, this.predecessors, logger);
    this.live = new LiveFeeds(link, (base, operation) => this.withStream(base, operation), logger, settings.live_gap_wait_ms);
    link.onLost((error) => {
      catalog.forgetAll();
      void this.live.endAll(error);
    });
  }

  /** Connects (with startup retries) and warns about settings this server cannot honour. */
  static async connect(options: JetStreamBackendOptions): Promise<JetStreamBackend> {
    const { settings, logger } = options;
    const link = await NatsLink.open(
      {
        url: settings.nats_url.trim(),
        token: settings.token,
        connectTimeoutMs: settings.timeout_seconds * 1000,
        startupAttempts: settings.retry_attempts,
        reconnectDelayMs: settings.reconnect_delay_ms,
        maxReconnectAttempts: settings.max_reconnect_attempts,
      },
      logger,
    );
    const { windowSec } = options.idempotency ?? DEFAULT_IDEMPOTENCY;
    const catalog = new StreamCatalog(link, settings, options.configured, logger, windowSec);
    warnUncompressible(catalog, logger);
    warnShortRetention(catalog, logger, windowSec);
    const bucket = new IdempotencyBucket(
      link,
      {
        name: settings.idempotency_bucket,
        windowMs: windowSec * 1000,
        replicas: settings.replicas ?? 1,
        staleAfterMs: PENDING_STALE_AFTER_MS,
      },
      logger,
    );
    await bucket.ensureAtStartup();
    const ledger = new HistoryLedger(link, { name: settings.history_ledger_bucket, replicas: settings.replicas ?? 1 }, logger);
    await ledger.ensureAtStartup();
    return new JetStreamBackend(link, catalog, settings, logger, bucket, windowSec, ledger);
  }

  /**
   * A reload's schemas: new and changed bases get their stream created or
   * reconciled now, as `ensure` does on first use. A stream that cannot be ensured (NATS away, a
   * storage mismatch) is logged and left to the next request that needs it, exactly as after startup.
   */
  async applySchemas(schemas: readonly SchemaStorage[]): Promise<void> {
    const touched = this.catalog.replaceConfigured(schemas);
    const touchedStreams = new Set(touched.map(streamNameOf));
    warnUncompressible(this.catalog, this.logger, touchedStreams);
    warnShortRetention(this.catalog, this.logger, this.windowSec, touchedStreams);
    await Promise.all(
      touched.map(async (base) => {
        try {
          await this.catalog.ensure(base);
        } catch (error) {
          this.logger.warn(
            { event_name: 'backend.jetstream.stream.ensure.failed', stream: streamNameOf(base), error: errorText(error) },
            `Stream ${streamNameOf(base)} could not be ensured after the reload; the next request that needs it tries again`,
          );
        }
      }),
    );
  }

  async publish(notification: NotificationToStore, options: PublishOptions = {}): Promise<PublishResult> {
    const base = topicBase(notification.topic);
    const deadline = Date.now() + PUBLISH_DEADLINE_MS;
    // The same id on every attempt: JetStream stores a retried publish once (D22); an
    // Idempotency-Key's id also spans requests and processes (D35).
    const msgID = options.deduplicationId ?? randomUUID();
    const headers = toHeaders(notification.metadata);
    this.assertFitsOneMessage(notification.payload, headers, msgID);
    let reEnsured = false;
    for (let attempt = 1; ; attempt++) {
      let sequence: number;
      try {
        const layout = await beforeDeadline(this.catalog.ensure(base), deadline, `ensuring stream ${streamNameOf(base)}`);
        const { js } = this.link.clients();
        const publishOptions = {
          msgID,
          timeout: Math.max(1, Math.min(PUBLISH_ACK_TIMEOUT_MS, deadline - Date.now())),
          ...(headers ? { headers } : {}),
        };
        // Only a stream that keeps a limited number per topic drops notifications whose loss a
        // replay learns from their topic's next one (D42); the others lose history only by their
        // limits, deletes and wipes, which the replay learns elsewhere.
        const ack = keepsPerTopicLimit(layout)
          ? await this.predecessors.publish(js, notification.topic, notification.payload, publishOptions, deadline)
          : await js.publish(notification.topic, notification.payload, publishOptions);
        sequence = ack.seq;
        // Another request (this process or another, maybe one that died since) stored it under
        // this key's id: nothing new was stored, so no watcher must hear of it again.
        if (ack.duplicate && options.deduplicationId !== undefined) {
          return { sequence, duplicateOf: await this.storedMessage(streamNameOf(base), sequence) };
        }
      } catch (error) {
        // The client checks the size against the server it is connected to now, which may have
        // changed since the check above (a reconnect to a server with a smaller limit).
        if (isMaxPayloadExceeded(error)) throw this.tooLarge(notification.payload, headers, msgID);
        if (!reEnsured && (isStreamNotFound(error) || isNoResponders(error))) {
          // The stream vanished under us (docs/design/rules/backends.md §7.4): make sure it exists and try once more.
          reEnsured = true;
          this.catalog.forget(base);
          continue;
        }
        // Nothing was stored when the connection was away or nobody answered (JetStream not ready
        // after a restart, a cluster between stream leaders), so these are retried with backoff.
        const wait = this.settings.publish_retry_base_delay_ms * 2 ** (attempt - 1);
        const transient = isConnectionLost(error) || isNoResponders(error);
        if (transient && attempt < this.settings.publish_retry_attempts && Date.now() + wait < deadline) {
          await delay(wait);
          continue;
        }
        throw error;
      }
      // Stored: now the live feeds of every process hear of it, since the stream may drop it
      // before they read it (D39, docs/backends.md "Live delivery on JetStream").
      this.live.accepted(streamNameOf(base), notification, sequence, BigInt(Date.now()) * 1_000_000n);
      return { sequence };
    }
  }

  /**
   * Pipelined (D48): the notifications of distinct topics, and every notification of a stream that
   * keeps all of a topic's, are sent together and their acks awaited in order, a few round trips
   * for a batch instead of one per notification (publish-waves.ts).
   */
  async publishMany(
    notifications: readonly NotificationToStore[],
    options: BatchPublishOptions = {},
  ): Promise<readonly BatchPublishOutcome[]> {
    const ids = options.deduplicationIds ?? [];
    // A stream that keeps every notification of a topic names no predecessors: its notifications
    // of one topic go out together too. A base whose stream cannot be ensured now counts as
    // chained; its publishes find out why themselves.
    const bases = [...new Set(notifications.map((notification) => topicBase(notification.topic)))];
    const unchained = new Set<string>();
    await Promise.all(
      bases.map(async (base) => {
        try {
          if (!keepsPerTopicLimit(await this.catalog.ensure(base))) unchained.add(base);
        } catch {
          // Counted as chained.
        }
      }),
    );
    return publishInWaves(
      notifications,
      (notification, index) => {
        const deduplicationId = ids[index];
        return this.publish(notification, deduplicationId === undefined ? {} : { deduplicationId });
      },
      (notification) => !unchained.has(topicBase(notification.topic)),
    );
  }

  /** The message a duplicate's ack names, or null once the stream no longer holds it. */
  private async storedMessage(stream: string, sequence: number): Promise<StoredNotification | null> {
    try {
      const message = await this.link.clients().jsm.streams.getMessage(stream, { seq: sequence });
      if (!message) return null;
      return toStoredNotification({
        seq: message.seq,
        subject: message.subject,
        data: message.data,
        headers: message.header,
        timestampNanos: BigInt(message.time.getTime()) * 1_000_000n,
      });
    } catch (error) {
      if (isMessageNotFound(error)) return null;
      throw error;
    }
  }

  /**
   * nats-server refuses a message over its `max_payload` (headers included); the client throws
   * before sending, but a clear refusal before the first attempt is what notify can answer 413.
   */
  private assertFitsOneMessage(payload: string, headers: ReturnType<typeof toHeaders>, msgID: string): void {
    const limit = this.maxPayload();
    if (limit === undefined) return;
    const bytes = publishedBytes(payload, headers, msgID);
    if (bytes > limit) throw new NotificationTooLargeError(bytes, limit);
  }

  private tooLarge(payload: string, headers: ReturnType<typeof toHeaders>, msgID: string): NotificationTooLargeError {
    return new NotificationTooLargeError(publishedBytes(payload, headers, msgID), this.maxPayload() ?? 0);
  }

  /** The connected server's limit; unknown while reconnecting (the publish loop waits for NATS). */
  private maxPayload(): number | undefined {
    try {
      return this.link.clients().nc.info?.max_payload;
    } catch {
      return undefined;
    }
  }

  async subscribe(pattern: TopicPattern, sink: LiveSink): Promise<LiveSubscription> {
    // A shared feed outlives a disconnection, but a new watch then is refused like any other
    // request that needs NATS (500), rather than accepted with nothing behind it.
    this.link.clients();
    return this.live.subscribe(pattern, sink);
  }

  async captureHistoryBound(pattern: TopicPattern): Promise<number> {
    return this.withStream(pattern.base, async (clients, name) => (await clients.jsm.streams.info(name)).state.last_seq);
  }

  async fetchBatch(request: FetchRequest): Promise<Batch> {
    return this.withStream(request.pattern.base, async (clients, name) => {
      const { known, info } = await readKnownLosses(clients, name, request, this.ledger);
      return fetchJetStreamBatch(() => this.link.clients(), name, request, this.settings.timeout_seconds * 1000, known, info);
    });
  }

  async openReplay(request: ReplayRequest): Promise<ReplayCursor> {
    return this.withStream(request.pattern.base, async (clients, name) => {
      const { known, info } = await readKnownLosses(clients, name, request, this.ledger);
      return JetStreamReplayCursor.open(() => this.link.clients(), name, request, this.settings.timeout_seconds * 1000, known, info);
    });
  }

  /** D30's and D22's admin operations, recorded in the history ledger (stream-admin.ts). */
  deleteMessage(streamKey: string, sequence: number): Promise<DeleteOutcome> {
    return this.admin.deleteMessage(streamKey, sequence);
  }

  wipeStream(name: string): Promise<WipeOutcome> {
    return this.admin.wipeStream(name);
  }

  wipeAll(): Promise<void> {
    return this.admin.wipeAll();
  }

  async stats(): Promise<BackendStats> {
    const { liveFeeds, liveSubscriptions, gaps } = await this.live.stats();
    return {
      live_feeds: liveFeeds,
      live_subscriptions: liveSubscriptions,
      live_gap_sequences_filled: gaps.filled,
      live_gap_sequences_skipped: gaps.skipped,
    };
  }

  isConnected(): boolean {
    return this.link.isConnected;
  }

  /**
   * This process's part in the deployment's questions about its open streams (D49): started on
   * the first call, stopped by `shutdown`. `process` is the id the other processes know it by.
   */
  deploymentExchange(process: string, clock: Clock): DeploymentExchange {
    this.exchange ??= new AdminExchange(this.link, this.logger, { process, clock });
    return this.exchange;
  }

  async shutdown(): Promise<void> {
    // First, so the others forget this process at once instead of after the presence window.
    this.exchange?.stop();
    await this.live.endAll();
    await this.link.close();
  }

  /** Runs an operation on a base's stream, re-ensuring it once if it turned out to be missing (docs/design/rules/backends.md §7.4). */
  private async withStream<T>(base: string, operation: (clients: NatsClients, name: string) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const layout = await this.catalog.ensure(base);
      try {
        return await operation(this.link.clients(), layout.name);
      } catch (error) {
        if (attempt === 1 && isStreamNotFound(error)) {
          this.catalog.forget(base);
          continue;
        }
        throw error;
      }
    }
  }
}

/** `max_msgs_per_subject` 1 unless the schema's storage policy allows duplicates (stream-config.ts). */
function keepsPerTopicLimit(layout: StreamLayout): boolean {
  return layout.storagePolicy?.allow_duplicates !== true;
}

function topicBase(topic: string): string {
  const dot = topic.indexOf('.');
  return decodeToken(dot < 0 ? topic : topic.slice(0, dot));
}

/** `operation`, or a rejection once the deadline passed (the operation itself carries on). */
async function beforeDeadline<T>(operation: Promise<T>, deadline: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out ${what}`)), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([operation, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A stream keeping notifications for less than the idempotency window cannot recognise a retry
 * after its `max_age` (its duplicate window is bounded by it); `only`: just these streams.
 */
function warnShortRetention(catalog: StreamCatalog, logger: Logger, windowSec: number, only?: ReadonlySet<string>): void {
  for (const { eventType, stream, maxAgeSec } of catalog.shortRetentionSchemas()) {
    if (only && !only.has(stream)) continue;
    logger.warn(
      {
        event_name: 'backend.jetstream.idempotency.window_exceeds_retention',
        event_type: eventType,
        stream,
        max_age_seconds: maxAgeSec,
        window_seconds: windowSec,
      },
      `Stream ${stream} of event type ${eventType} keeps notifications ${maxAgeSec}s, less than idempotency.window (${windowSec}s): a retry with an Idempotency-Key is recognised for ${maxAgeSec}s only`,
    );
  }
}

/** Schemas asking for compression that this NATS cannot give; `only`: just these streams. */
function warnUncompressible(catalog: StreamCatalog, logger: Logger, only?: ReadonlySet<string>): void {
  for (const { eventType, stream } of catalog.uncompressibleSchemas()) {
    if (only && !only.has(stream)) continue;
    logger.warn(
      { event_name: 'backend.jetstream.compression.unsupported', event_type: eventType, stream },
      `compression requires NATS >= 2.10; stream ${stream} will be uncompressed`,
    );
  }
}
