import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { LiveSink, LiveSubscription, StoredNotification } from '../backend.js';
import { TopicDecodeError, decodeTopic } from '../../topic/percent-codec.js';
import type { TopicPattern } from '../../topic/topic-pattern.js';
import { toStoredNotification } from './message-mapping.js';
import type { NatsClients } from './nats-link.js';
import { errorText } from './nats-errors.js';

const LIVE_PULL_EXPIRES_MS = 10_000;

interface Watcher {
  readonly pattern: TopicPattern;
  readonly sink: LiveSink;
}

/**
 * The one live subscription a process keeps per stream (D10): an ordered consumer that starts
 * after the stream's last sequence, shared by every watcher on the base, filtered and fanned out
 * in process. The client library recreates the consumer after a reconnect from the last delivered
 * sequence, so watchers see neither gaps nor duplicates across NATS restarts.
 */
export class LiveFeed {
  private readonly watchers = new Set<Watcher>();
  /** Highest stream sequence handed to watchers: H for a watcher registering now. */
  private lastDelivered: number;
  private stopped = false;

  private constructor(
    readonly streamName: string,
    private readonly messages: ConsumerMessages,
    startAfter: number,
    private readonly logger: Logger,
    private readonly onStopped: (feed: LiveFeed) => void,
  ) {
    this.lastDelivered = startAfter;
  }

  /** Starts consuming after the stream's current last sequence. */
  static async start(
    clients: NatsClients,
    streamName: string,
    logger: Logger,
    onStopped: (feed: LiveFeed) => void,
  ): Promise<LiveFeed> {
    const info = await clients.jsm.streams.info(streamName);
    const startAfter = info.state.last_seq;
    const consumer = await clients.js.consumers.get(streamName, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: startAfter + 1,
    });
    // Shorter pulls than the 30 s default let a feed notice a restarted server within seconds.
    const messages = await consumer.consume({ expires: LIVE_PULL_EXPIRES_MS });
    const feed = new LiveFeed(streamName, messages, startAfter, logger, onStopped);
    void feed.pump();
    void feed.watchStatus();
    return feed;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Registers a watcher and reads H in the same synchronous step (D10). */
  register(pattern: TopicPattern, sink: LiveSink): LiveSubscription {
    const watcher: Watcher = { pattern, sink };
    this.watchers.add(watcher);
    return {
      historyBound: this.lastDelivered,
      close: () => {
        if (!this.watchers.delete(watcher)) return;
        if (this.watchers.size === 0) this.stop();
      },
    };
  }

  /** Ends every watcher (with the error, when there is one) and the consumer. */
  end(error?: Error): void {
    const watchers = [...this.watchers];
    this.watchers.clear();
    this.stop();
    for (const { sink } of watchers) sink.end(error);
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.onStopped(this);
    void this.messages.close().catch(() => undefined);
  }

  private async pump(): Promise<void> {
    try {
      for await (const message of this.messages) {
        this.lastDelivered = message.seq;
        this.fanOut(toStoredNotification(message));
      }
      if (!this.stopped) this.end(new Error(`live consumer on ${this.streamName} ended`));
    } catch (error) {
      if (!this.stopped) {
        this.logger.error({ event_name: 'backend.jetstream.live.failed', stream: this.streamName, error: errorText(error) }, 'Live consumer failed');
        this.end(error instanceof Error ? error : new Error(errorText(error)));
      }
    }
  }

  private fanOut(notification: StoredNotification): void {
    let tokens: string[];
    try {
      tokens = decodeTopic(notification.topic);
    } catch (error) {
      if (error instanceof TopicDecodeError) return;
      throw error;
    }
    for (const { pattern, sink } of this.watchers) {
      if (pattern.matchesTokens(tokens)) sink.deliver(notification);
    }
  }

  /** A deleted stream cannot be followed; transient states are only logged (streaming.md §11). */
  private async watchStatus(): Promise<void> {
    for await (const status of this.messages.status()) {
      if (status.type === 'stream_not_found') {
        this.end(new Error(`stream ${this.streamName} no longer exists`));
        return;
      }
      if (status.type === 'heartbeats_missed' || status.type === 'ordered_consumer_recreated') {
        this.logger.debug({ event_name: `backend.jetstream.live.${status.type}`, stream: this.streamName }, status.type);
      }
    }
  }
}
