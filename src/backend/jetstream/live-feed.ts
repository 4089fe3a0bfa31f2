import { setTimeout as delay } from 'node:timers/promises';
import type { ConsumerMessages } from '@nats-io/jetstream';
import type { Msg, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { LiveSink, LiveSubscription, StoredNotification } from '../backend.js';
import { LiveDispatch } from '../live-dispatch.js';
import type { TopicPattern } from '../../topic/topic-pattern.js';
import { announcementsOf, fromAnnouncement } from './live-announcement.js';
import { DeadlineTimer } from './deadline-timer.js';
import { openConsumer, release, type FollowedConsumer } from './live-consumer.js';
import { LiveGapFiller, type GapCounts, type GapFillerLimits } from './live-gap-filler.js';
import { toStoredNotification } from './message-mapping.js';
import type { NatsClients } from './nats-link.js';
import { errorText, isStreamNotFound } from './nats-errors.js';

/** Wait between attempts to follow the stream again after a reconnect (JetStream may not be ready yet). */
const RESUBSCRIBE_DELAY_MS = 250;
/** A feed that cannot follow its stream again for this long ends its watchers, who resume by cursor. */
const RESUBSCRIBE_GIVE_UP_MS = 60_000;
/**
 * The bounds of the announcements a feed keeps (docs/backends.md "Live delivery on JetStream").
 * An announcement is needed only until the consumer has read past its sequence, normally within
 * milliseconds. The wait for a sequence announced by nobody (`gapWaitMs`, covering an announcement
 * still on its way from another process) is `notification_backend.jetstream.live_gap_wait_ms`.
 */
const ANNOUNCEMENT_LIMITS: Omit<GapFillerLimits, 'gapWaitMs'> = {
  maxAnnouncements: 10_000,
  maxAnnouncedChars: 32 * 1024 * 1024,
  maxAnnouncementAgeMs: 60_000,
};

/** At most one warning per feed this often about announcements that came too late (then debug). */
const LATE_WARNING_INTERVAL_MS = 10_000;

/** How a feed reaches NATS: the current clients, and a hook run after each reconnect. */
export interface FeedConnection {
  clients(): NatsClients;
  onReconnected(listener: () => void): () => void;
}

/** What the feeds of one backend share. */
export interface FeedContext {
  readonly connection: FeedConnection;
  readonly logger: Logger;
  /** Gap totals over every feed, stopped ones included (`stats()`). */
  readonly gaps: GapCounts;
  /** `notification_backend.jetstream.live_gap_wait_ms`: how long a read message waits for a sequence announced by nobody. */
  readonly gapWaitMs: number;
  /** The account may not subscribe to announcements: reported once per process. */
  announcementsRefused(streamName: string, error: Error): void;
}

/**
 * The one live subscription a process keeps per stream (D10): an ordered consumer that starts
 * after the stream's last sequence, shared by every watcher on the base, filtered and fanned out
 * in process.
 *
 * The stream alone cannot give every accepted notification: with one message per subject
 * (`allow_duplicates: false`) a newer notification on a topic removes the older one, sometimes
 * before the consumer read it. So the feed also takes the announcements of the processes that
 * accepted notifications (its own included) and fills the consumer's gaps from them, in sequence
 * order (`LiveGapFiller`, docs/backends.md "Live delivery on JetStream", D39). The consumer stays
 * the ordered source: it brings the stored timestamp and messages from writers that announce nothing.
 *
 * After a reconnect the feed replaces its consumer with a new one starting after the last sequence
 * it delivered. The client library would recover the old one by itself, but only once two idle
 * heartbeats were missed, and after a NATS restart that left live delivery stalled for up to ~15 s
 * while notify already worked. Sequences at or below the last read one are never passed on, so the
 * switch cannot duplicate anything; the new consumer starts right after the last delivered one, so
 * it cannot leave a gap. The announcement subscription is a core one, which the client renews itself.
 */
export class LiveFeed {
  /** This stream's watchers, indexed by pattern. */
  private readonly watchers = new LiveDispatch();
  /** Orders what the consumer reads and what is announced; knows H (the last delivered sequence). */
  private readonly filler: LiveGapFiller;
  private stopped = false;
  /** The consumer being followed; `undefined` while a replacement is being created. */
  private followed: FollowedConsumer | undefined;
  private resubscribing = false;
  private readonly unlisten: () => void;
  private announcements: Subscription | undefined;
  /** Runs while a read message waits for a missing sequence (`LiveGapFiller.holdDeadline`). */
  private readonly holdExpiry = new DeadlineTimer();
  /** When a late announcement was last logged as a warning. */
  private lateWarnedAt = Number.NEGATIVE_INFINITY;
  private readonly connection: FeedConnection;
  private readonly logger: Logger;

  private constructor(
    readonly streamName: string,
    private readonly context: FeedContext,
    startAfter: number,
    private readonly onStopped: (feed: LiveFeed) => void,
  ) {
    this.connection = context.connection;
    this.logger = context.logger;
    this.filler = new LiveGapFiller(
      startAfter,
      { ...ANNOUNCEMENT_LIMITS, gapWaitMs: context.gapWaitMs },
      context.gaps,
      (notification) => this.watchers.dispatch(notification),
      (sequence, lateByMs) => this.announcedLate(sequence, lateByMs),
    );
    this.unlisten = this.connection.onReconnected(() => void this.resubscribe());
  }

  /** Starts consuming after the stream's current last sequence, and listening to announcements. */
  static async start(context: FeedContext, streamName: string, onStopped: (feed: LiveFeed) => void): Promise<LiveFeed> {
    const clients = context.connection.clients();
    const info = await clients.jsm.streams.info(streamName);
    const feed = new LiveFeed(streamName, context, info.state.last_seq, onStopped);
    try {
      feed.listen(clients);
      feed.follow(await openConsumer(clients, streamName, info.state.last_seq + 1));
    } catch (error) {
      feed.unlisten();
      feed.announcements?.unsubscribe();
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
      historyBound: this.filler.lastDelivered,
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

  /** A notification this process accepted: its announcement, handed over without a round trip. */
  accepted(notification: StoredNotification): void {
    this.receiveAnnouncement(notification);
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unlisten();
    this.onStopped(this);
    if (this.followed) release(this.followed);
    this.announcements?.unsubscribe();
    this.holdExpiry.cancel();
    this.filler.clear();
  }

  /** Subscribes to the announcements of this stream (a callback: no iterator or promise per message). */
  private listen(clients: NatsClients): void {
    this.announcements = clients.nc.subscribe(announcementsOf(this.streamName), {
      callback: (error, message) => {
        if (error) {
          // Terminal for the subscription (a permission violation): the consumer alone goes on.
          if (!this.stopped) this.context.announcementsRefused(this.streamName, error);
          return;
        }
        this.onAnnouncement(message);
      },
    });
  }

  private onAnnouncement(message: Msg): void {
    const notification = fromAnnouncement(this.streamName, message);
    if (notification !== undefined) this.receiveAnnouncement(notification);
  }

  /** An announcement, from this process or another; never throws (it runs inside notify and NATS callbacks). */
  private receiveAnnouncement(notification: StoredNotification): void {
    if (this.stopped) return;
    try {
      this.filler.announced(notification, performance.now());
      this.scheduleExpiry();
    } catch (error) {
      this.fail(error);
    }
  }

  /** Keeps the timer for the moment the oldest held message stops waiting for what is missing. */
  private scheduleExpiry(): void {
    this.holdExpiry.set(this.stopped ? undefined : this.filler.holdDeadline, () => {
      try {
        this.filler.expire(performance.now());
        this.scheduleExpiry();
      } catch (error) {
        this.fail(error);
      }
    });
  }

  /** A notification lost to live delivery because its announcement came after the wait. */
  private announcedLate(sequence: number, lateByMs: number): void {
    const now = performance.now();
    const level = now - this.lateWarnedAt >= LATE_WARNING_INTERVAL_MS ? 'warn' : 'debug';
    if (level === 'warn') this.lateWarnedAt = now;
    this.logger[level](
      {
        event_name: 'backend.jetstream.live.announcement.late',
        stream: this.streamName,
        sequence,
        late_by_ms: Math.round(lateByMs),
        gap_wait_ms: this.context.gapWaitMs,
      },
      'An announcement arrived after its sequence was given up: that notification reached no watcher of this process live',
    );
  }

  private fail(error: unknown): void {
    if (this.stopped) return;
    this.logger.error(
      { event_name: 'backend.jetstream.live.failed', stream: this.streamName, error: errorText(error) },
      'Live feed failed',
    );
    this.end(error instanceof Error ? error : new Error(errorText(error)));
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
          const followed = await openConsumer(this.connection.clients(), this.streamName, this.filler.lastDelivered + 1);
          if (this.stopped) {
            release(followed);
            return;
          }
          this.follow(followed);
          this.logger.info(
            { event_name: 'backend.jetstream.live.resubscribed', stream: this.streamName, after_sequence: this.filler.lastDelivered },
            'Live feed resumed after a reconnect',
          );
          return;
        } catch (error) {
          if (isStreamNotFound(error)) {
            this.end(new Error(`stream ${this.streamName} no longer exists`));
            return;
          }
          if (Date.now() >= giveUpAt) {
            this.logger.error(
              { event_name: 'backend.jetstream.live.failed', stream: this.streamName, error: errorText(error) },
              'Live consumer could not resume',
            );
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
        if (message.seq <= this.filler.lastDelivered) continue;
        this.filler.read(toStoredNotification(message), performance.now());
        this.scheduleExpiry();
      }
      if (!this.stopped && messages === this.messages) this.end(new Error(`live consumer on ${this.streamName} ended`));
    } catch (error) {
      if (!this.stopped && messages === this.messages) {
        this.logger.error(
          { event_name: 'backend.jetstream.live.failed', stream: this.streamName, error: errorText(error) },
          'Live consumer failed',
        );
        this.end(error instanceof Error ? error : new Error(errorText(error)));
      }
    }
  }

  /** A deleted stream cannot be followed; transient states are only logged (docs/design/rules/streaming.md §11). */
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
