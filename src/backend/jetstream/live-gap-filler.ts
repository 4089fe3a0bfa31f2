import type { StoredNotification } from '../backend.js';

/** The bounds of a gap filler (docs/backends.md "Live delivery on JetStream"). */
export interface GapFillerLimits {
  /** Announcements kept at most; the oldest go first. */
  readonly maxAnnouncements: number;
  /** Characters (payload, topic and metadata) of the announcements kept at most. */
  readonly maxAnnouncedChars: number;
  /** An announcement no stream message has needed for this long is dropped. */
  readonly maxAnnouncementAgeMs: number;
  /** How long a stream message is held back while sequences below it are missing everywhere. */
  readonly gapWaitMs: number;
}

/** Totals over every feed of a backend: the operator's view of what retention took (`stats()`). */
export interface GapCounts {
  /** Sequences missing from the stream and delivered from an announcement. */
  filled: number;
  /** Sequences missing from the stream and announced by nobody in time: never delivered live. */
  skipped: number;
}

interface Announcement {
  readonly notification: StoredNotification;
  readonly arrivedAtMs: number;
  readonly chars: number;
}

/** Skipped sequences remembered, to recognise an announcement that came too late. */
const REMEMBERED_SKIPS = 1_000;

interface HeldMessage {
  readonly notification: StoredNotification;
  readonly readAtMs: number;
}

/**
 * Merges the two sources of a live feed into one ascending, duplicate-free sequence handed to
 * `deliver`: the stream's own messages (read by the feed's consumer, ascending, but missing the
 * ones one-message-per-subject retention removed before the consumer got to them) and the
 * announcements of the processes that accepted notifications (any order, any time, possibly of
 * sequences the consumer reads as well).
 *
 * A stream message is delivered as soon as every sequence below it was delivered; a missing
 * sequence is taken from the announcements. When one is announced by nobody, the stream message
 * above it (and everything read after it) is held back until the announcement arrives or
 * `gapWaitMs` after the message was read, as judged by `expire`; then what is still missing is
 * skipped for good (deleted by an admin, written by another writer and superseded, or announced by
 * a process that died). Only sequences above the last delivered one are ever delivered, so nothing
 * is delivered twice.
 *
 * Pure: time is passed in by the caller, who calls `expire` at `holdDeadline`.
 */
export class LiveGapFiller {
  private delivered: number;
  /** By sequence; the Map's order is arrival order, so the oldest are at the front. */
  private readonly announcements = new Map<number, Announcement>();
  private announcedChars = 0;
  /** Stream messages read but not yet delivered, ascending. */
  private readonly held: HeldMessage[] = [];
  /** The highest sequence read from the stream (delivered or held). */
  private lastRead: number;
  /** Recently skipped sequences and when, oldest first. */
  private readonly skippedAt = new Map<number, number>();

  /**
   * `onLate` hears of an announcement that arrived after its sequence was skipped, and how long
   * after: a notification lost to live delivery because the wait was too short for this load.
   */
  constructor(
    startAfter: number,
    private readonly limits: GapFillerLimits,
    private readonly counts: GapCounts,
    private readonly deliver: (notification: StoredNotification) => void,
    private readonly onLate: (sequence: number, lateByMs: number) => void = () => undefined,
  ) {
    this.delivered = startAfter;
    this.lastRead = startAfter;
  }

  /** The highest sequence delivered: H for a watcher registering now (D10). */
  get lastDelivered(): number {
    return this.delivered;
  }

  /** When the oldest held stream message stops waiting, or `undefined` when none is held. */
  get holdDeadline(): number | undefined {
    const first = this.held[0];
    return first === undefined ? undefined : first.readAtMs + this.limits.gapWaitMs;
  }

  get announcementCount(): number {
    return this.announcements.size;
  }

  /** A message the consumer read from the stream (ascending; a re-read after a resubscribe is ignored). */
  read(notification: StoredNotification, nowMs: number): void {
    if (notification.sequence <= this.lastRead) return;
    this.lastRead = notification.sequence;
    if (this.held.length === 0 && notification.sequence === this.delivered + 1) {
      this.take(notification);
      return;
    }
    this.held.push({ notification, readAtMs: nowMs });
    this.release();
  }

  /** A notification an accepting process announced with its sequence. */
  announced(notification: StoredNotification, nowMs: number): void {
    const { sequence } = notification;
    if (sequence <= this.delivered) {
      const skippedAt = this.skippedAt.get(sequence);
      if (skippedAt !== undefined) {
        this.skippedAt.delete(sequence);
        this.onLate(sequence, nowMs - skippedAt);
      }
      return;
    }
    if (this.announcements.has(sequence)) return;
    const chars = notification.payload.length + notification.topic.length + metadataChars(notification);
    this.announcements.set(sequence, { notification, arrivedAtMs: nowMs, chars });
    this.announcedChars += chars;
    this.evict(nowMs);
    this.release();
  }

  /**
   * Time has passed: a held message whose wait is over goes out, skipping what is still missing.
   * Only here is a wait judged over, never while a read or an announcement is being taken: more
   * announcements may be queued right behind the one at hand (the caller runs this from a timer,
   * once the process has caught up with what it received).
   */
  expire(nowMs: number): void {
    this.evict(nowMs);
    this.release(nowMs);
  }

  /** Drops every announcement and held message (the feed stopped). */
  clear(): void {
    this.announcements.clear();
    this.announcedChars = 0;
    this.held.length = 0;
    this.skippedAt.clear();
  }

  /** Delivers what is in order; with `nowMs`, also gives up on what held messages waited for too long. */
  private release(nowMs?: number): void {
    for (;;) {
      const first = this.held[0];
      if (first === undefined) return;
      const next = this.delivered + 1;
      if (first.notification.sequence === next) {
        this.held.shift();
        this.take(first.notification);
        continue;
      }
      const announcement = this.announcements.get(next);
      if (announcement !== undefined) {
        this.counts.filled++;
        this.take(announcement.notification);
        continue;
      }
      if (nowMs === undefined || nowMs < first.readAtMs + this.limits.gapWaitMs) return;
      this.skipTo(this.lowestAnnouncedBelow(first.notification.sequence) ?? first.notification.sequence, nowMs);
    }
  }

  /** Gives up on every sequence from `delivered + 1` up to (not including) `sequence`. */
  private skipTo(sequence: number, nowMs: number): void {
    this.counts.skipped += sequence - this.delivered - 1;
    for (let skipped = Math.max(this.delivered + 1, sequence - REMEMBERED_SKIPS); skipped < sequence; skipped++) {
      this.skippedAt.set(skipped, nowMs);
    }
    for (const remembered of this.skippedAt.keys()) {
      if (this.skippedAt.size <= REMEMBERED_SKIPS) break;
      this.skippedAt.delete(remembered);
    }
    this.delivered = sequence - 1;
  }

  private lowestAnnouncedBelow(limit: number): number | undefined {
    let lowest: number | undefined;
    for (const sequence of this.announcements.keys()) {
      if (sequence < limit && (lowest === undefined || sequence < lowest)) lowest = sequence;
    }
    return lowest;
  }

  private take(notification: StoredNotification): void {
    this.delivered = notification.sequence;
    if (this.announcements.size > 0) this.forget(notification.sequence);
    this.deliver(notification);
  }

  private forget(sequence: number): void {
    const announcement = this.announcements.get(sequence);
    if (announcement === undefined) return;
    this.announcements.delete(sequence);
    this.announcedChars -= announcement.chars;
  }

  /** Oldest first, while over a bound. */
  private evict(nowMs: number): void {
    const { maxAnnouncements, maxAnnouncedChars, maxAnnouncementAgeMs } = this.limits;
    for (const [sequence, announcement] of this.announcements) {
      const over =
        this.announcements.size > maxAnnouncements ||
        this.announcedChars > maxAnnouncedChars ||
        nowMs - announcement.arrivedAtMs > maxAnnouncementAgeMs;
      if (!over) return;
      this.forget(sequence);
    }
  }
}

function metadataChars(notification: StoredNotification): number {
  let chars = 0;
  for (const [key, value] of Object.entries(notification.metadata ?? {})) chars += key.length + value.length;
  return chars;
}
