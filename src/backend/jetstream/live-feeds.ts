import type { Logger } from 'pino';
import type { LiveSink, LiveSubscription, NotificationToStore } from '../backend.js';
import type { TopicPattern } from '../../topic/topic-pattern.js';
import { streamNameOf } from '../../topic/stream-name.js';
import { ANNOUNCEMENT_PREFIX } from './live-announcement.js';
import { LiveAnnouncer } from './live-announcer.js';
import { LiveFeed, type FeedContext } from './live-feed.js';
import type { GapCounts } from './live-gap-filler.js';
import type { NatsClients, NatsLink } from './nats-link.js';
import { errorText } from './nats-errors.js';

/** Runs an operation on a base's stream, ensuring the stream first (`JetStreamBackend.withStream`). */
export type WithStream = <T>(base: string, operation: (clients: NatsClients, name: string) => Promise<T>) => Promise<T>;

/**
 * The live feeds of one backend, one per stream with watchers in this process (D10), and the
 * announcements that let each of them deliver every accepted notification (D39, docs/backends.md
 * "Live delivery on JetStream").
 */
export class LiveFeeds {
  private readonly feeds = new Map<string, Promise<LiveFeed>>();
  /** The same feeds once started, for the synchronous hand-over of this process's notifications. */
  private readonly started = new Map<string, LiveFeed>();
  private readonly gaps: GapCounts = { filled: 0, skipped: 0 };
  private readonly context: FeedContext;
  private readonly announcer: LiveAnnouncer;
  private refusalWarned = false;

  constructor(
    link: NatsLink,
    private readonly withStream: WithStream,
    private readonly logger: Logger,
    gapWaitMs: number,
  ) {
    this.announcer = new LiveAnnouncer(link, logger);
    this.context = {
      connection: link,
      logger,
      gaps: this.gaps,
      gapWaitMs,
      announcementsRefused: (streamName, error) => this.announcementsRefused(streamName, error),
    };
  }

  async subscribe(pattern: TopicPattern, sink: LiveSink): Promise<LiveSubscription> {
    for (;;) {
      const feed = await this.feedFor(pattern.base);
      // A feed whose last watcher left while we waited is already stopping: start a new one.
      if (!feed.isStopped) return feed.register(pattern, sink);
    }
  }

  /**
   * A notification this process stored as `sequence` of `streamName`, acknowledged at `timestampNs`:
   * handed to this process's feed of that stream and announced to the others.
   */
  accepted(streamName: string, notification: NotificationToStore, sequence: number, timestampNs: bigint): void {
    const announced = { ...notification, sequence, timestampNs };
    this.started.get(streamName)?.accepted(announced);
    this.announcer.announce(streamName, announced);
  }

  async stats(): Promise<{ liveFeeds: number; liveSubscriptions: number; gaps: Readonly<GapCounts> }> {
    let liveSubscriptions = 0;
    let liveFeeds = 0;
    for (const pending of this.feeds.values()) {
      const feed = await pending.catch(() => undefined);
      if (feed && !feed.isStopped) {
        liveFeeds++;
        liveSubscriptions += feed.watcherCount;
      }
    }
    return { liveFeeds, liveSubscriptions, gaps: { ...this.gaps } };
  }

  async endAll(error?: Error): Promise<void> {
    const feeds = [...this.feeds.values()];
    this.feeds.clear();
    this.started.clear();
    for (const pending of feeds) {
      const feed = await pending.catch(() => undefined);
      feed?.end(error);
    }
  }

  private feedFor(base: string): Promise<LiveFeed> {
    const name = streamNameOf(base);
    let pending = this.feeds.get(name);
    if (!pending) {
      pending = this.withStream(base, (_clients, stream) =>
        LiveFeed.start(this.context, stream, (stopped) => {
          if (this.feeds.get(name) === pending) this.feeds.delete(name);
          if (this.started.get(name) === stopped) this.started.delete(name);
          this.logger.debug({ event_name: 'backend.jetstream.live.stopped', stream: stopped.streamName }, 'Live feed stopped');
        }),
      );
      this.feeds.set(name, pending);
      const current = pending;
      current.then(
        (feed) => {
          if (this.feeds.get(name) === current && !feed.isStopped) this.started.set(name, feed);
        },
        () => {
          if (this.feeds.get(name) === current) this.feeds.delete(name);
        },
      );
    }
    return pending;
  }

  private announcementsRefused(streamName: string, error: Error): void {
    const level = this.refusalWarned ? 'debug' : 'warn';
    this.refusalWarned = true;
    this.logger[level](
      { event_name: 'backend.jetstream.live.announcements.refused', stream: streamName, error: errorText(error) },
      `The NATS account may not subscribe to ${ANNOUNCEMENT_PREFIX}.>: this process's live feeds rely on the stream and their own process's notifications, and a notification from another process superseded before a feed read it reaches no watcher here`,
    );
  }
}
