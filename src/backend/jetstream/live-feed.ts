import { setTimeout as delay } from 'node:timers/promises';
import { DeliverPolicy, type Consumer, type ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { LiveSink, LiveSubscription } from '../backend.js';
import { LiveDispatch } from '../live-dispatch.js';
import type { TopicPattern } from '../../topic/topic-pattern.js';
import { toStoredNotification } from './message-mapping.js';
import type { NatsClients } from './nats-link.js';
import { errorText, isStreamNotFound } from './nats-errors.js';

const LIVE_PULL_EXPIRES_MS = 10_000;
/** Wait between attempts to follow the stream again after a reconnect (JetStream may not be ready yet). */
const RESUBSCRIBE_DELAY_MS = 250;
/** A feed that cannot follow its stream again for this long ends its watchers, who resume by cursor. */
const RESUBSCRIBE_GIVE_UP_MS = 60_000;

/** A consumer on the server and the pull loop reading it. */
interface FollowedConsumer {
  readonly consumer: Consumer;
  readonly messages: ConsumerMessages;
}

/** How a feed reaches NATS: the current clients, and a hook run after each reconnect. */
export interface FeedConnection {
  clients(): NatsClients;
  onReconnected(listener: () => void): () => void;
}

/**
 * The one live subscription a process keeps per stream (D10): an ordered consumer that starts
 * after the stream's last sequence, shared by every watcher on the base, filtered and fanned out
 * in process.
 *
 * After a reconnect the feed replaces its consumer with a new one starting after the last sequence
 * it delivered. The client library would recover the old one by itself, but only once two idle
 * heartbeats were missed, and after a NATS restart that left live delivery stalled for up to ~15 s
 * while notify already worked. Sequences at or below the last delivered one are never passed on,
 * so the switch cannot duplicate anything; the new consumer starts right after it, so it cannot
 * leave a gap.
 */
export class LiveFeed {
  /** This stream's watchers, indexed by pattern. */
  private readonly watchers = new LiveDispatch();
  /** Highest stream sequence handed to watchers: H for a watcher registering now. */
  private lastDelivered: number;
  private stopped = false;
  /** The consumer being followed; `undefined` while a replacement is being created. */
  private followed: FollowedConsumer | undefined;
  private resubscribing = false;
  private readonly unlisten: () => void;

  private constructor(
    readonly streamName: string,
    private readonly connection: FeedConnection,
    startAfter: number,
    private readonly logger: Logger,
    private readonly onStopped: (feed: LiveFeed) => void,
  ) {
    this.lastDelivered = startAfter;
    this.unlisten = connection.onReconnected(() => void this.resubscribe());
  }

  /** Starts consuming after the stream's current last sequence. */
  static async start(
    connection: FeedConnection,
    streamName: string,
    logger: Logger,
    onStopped: (feed: LiveFeed) => void,
  ): Promise<LiveFeed> {
    const clients = connection.clients();
    const info = await clients.jsm.streams.info(streamName);
    const feed = new LiveFeed(streamName, connection, info.state.last_seq, logger, onStopped);
    try {
      feed.follow(await openConsumer(clients, streamName, info.state.last_seq + 1));
    } catch (error) {
      feed.unlisten();
      throw error;
    }
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
    const remove = this.watchers.register(pattern, sink);
    return {
      historyBound: this.lastDelivered,
      close: () => {
        if (!remove()) return;
        if (this.watchers.size === 0) this.stop();
      },
    };
  }

  /** Ends every watcher (with the error, when there is one) and the consumer. */
  end(error?: Error): void {
    const sinks = this.watchers.removeAll();
    this.stop();
    for (const sink of sinks) sink.end(error);
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unlisten();
    this.onStopped(this);
    if (this.followed) release(this.followed);
  }

  private follow(followed: FollowedConsumer): void {
    this.followed = followed;
    void this.pump(followed.messages);
    void this.watchStatus(followed.messages);
  }

  private get messages(): ConsumerMessages | undefined {
    return this.followed?.messages;
  }

  /** Follows the stream with a new consumer from the last delivered sequence (see the class comment). */
  private async resubscribe(): Promise<void> {
    if (this.stopped || this.resubscribing) return;
    this.resubscribing = true;
    const old = this.followed;
    this.followed = undefined;
    if (old) release(old);
    const giveUpAt = Date.now() + RESUBSCRIBE_GIVE_UP_MS;
    try {
      while (!this.stopped) {
        try {
          const followed = await openConsumer(this.connection.clients(), this.streamName, this.lastDelivered + 1);
          if (this.stopped) {
            release(followed);
            return;
          }
          this.follow(followed);
          this.logger.info(
            { event_name: 'backend.jetstream.live.resubscribed', stream: this.streamName, after_sequence: this.lastDelivered },
            'Live feed resumed after a reconnect',
          );
          return;
        } catch (error) {
          if (isStreamNotFound(error)) {
            this.end(new Error(`stream ${this.streamName} no longer exists`));
            return;
          }
          if (Date.now() >= giveUpAt) {
            this.logger.error({ event_name: 'backend.jetstream.live.failed', stream: this.streamName, error: errorText(error) }, 'Live consumer could not resume');
            this.end(new Error(`live consumer on ${this.streamName} could not resume: ${errorText(error)}`));
            return;
          }
          await delay(RESUBSCRIBE_DELAY_MS);
        }
      }
    } finally {
      this.resubscribing = false;
    }
  }

  private async pump(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const message of messages) {
        if (messages !== this.messages) return; // replaced after a reconnect
        if (message.seq <= this.lastDelivered) continue;
        this.lastDelivered = message.seq;
        this.watchers.dispatch(toStoredNotification(message));
      }
      if (!this.stopped && messages === this.messages) this.end(new Error(`live consumer on ${this.streamName} ended`));
    } catch (error) {
      if (!this.stopped && messages === this.messages) {
        this.logger.error({ event_name: 'backend.jetstream.live.failed', stream: this.streamName, error: errorText(error) }, 'Live consumer failed');
        this.end(error instanceof Error ? error : new Error(errorText(error)));
      }
    }
  }

  /** A deleted stream cannot be followed; transient states are only logged (streaming.md §11). */
  private async watchStatus(messages: ConsumerMessages): Promise<void> {
    for await (const status of messages.status()) {
      if (messages !== this.messages) return;
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

/** An ordered consumer on the whole stream from `startSequence`, already pulling. */
async function openConsumer(clients: NatsClients, streamName: string, startSequence: number): Promise<FollowedConsumer> {
  const consumer = await clients.js.consumers.get(streamName, {
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: startSequence,
  });
  // Shorter pulls than the 30 s default let a feed notice a restarted server within seconds.
  return { consumer, messages: await consumer.consume({ expires: LIVE_PULL_EXPIRES_MS }) };
}

/**
 * Stops the pull loop and deletes the consumer: closing alone leaves an ordered consumer on the
 * server until its 5-minute inactivity threshold, one per feed that stopped. A delete that fails
 * (NATS away) is left to that threshold.
 */
function release({ consumer, messages }: FollowedConsumer): void {
  void messages
    .close()
    .catch(() => undefined)
    .then(() => consumer.delete())
    .catch(() => undefined);
}
