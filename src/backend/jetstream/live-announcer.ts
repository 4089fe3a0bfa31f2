import { PermissionViolationError } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { StoredNotification } from '../backend.js';
import { ANNOUNCEMENT_PREFIX, toAnnouncement } from './live-announcement.js';
import type { NatsLink } from './nats-link.js';
import { errorText } from './nats-errors.js';

/**
 * Publishes the announcement of each accepted notification for the live feeds of every process
 * (docs/backends.md "Live delivery on JetStream"). Fire and forget: a core NATS publish only
 * queues bytes, so it never delays the notify answer, and nothing that goes wrong here fails it.
 *
 * An account that may not publish announcements gets one warning; announcing then stops until
 * the next reconnect (permissions may have changed by then), and live delivery falls back to what
 * the feeds read from the stream.
 */
export class LiveAnnouncer {
  private denied = false;
  private deniedWarned = false;
  private failureWarned = false;

  constructor(
    private readonly link: NatsLink,
    private readonly logger: Logger,
  ) {
    link.onError((error) => this.onServerError(error));
    link.onReconnected(() => (this.denied = false));
  }

  announce(streamName: string, notification: StoredNotification): void {
    if (this.denied) return;
    try {
      const { subject, data, headers } = toAnnouncement(streamName, notification);
      this.link.clients().nc.publish(subject, data, { headers });
    } catch (error) {
      // No connection (then no ack could have arrived either), or a message over `max_payload`
      // (our two headers make it slightly larger than the stored one).
      const level = this.failureWarned ? 'debug' : 'warn';
      this.failureWarned = true;
      this.logger[level](
        {
          event_name: 'backend.jetstream.live.announce.failed',
          stream: streamName,
          sequence: notification.sequence,
          error: errorText(error),
        },
        'A notification was stored but could not be announced; live feeds take it from the stream',
      );
    }
  }

  /** Permission errors on announcement subjects are ours: the feeds report a refused subscription. */
  private onServerError(error: Error): boolean {
    if (!(error instanceof PermissionViolationError) || !error.subject.startsWith(`${ANNOUNCEMENT_PREFIX}.`)) return false;
    if (error.operation !== 'publish') return true;
    this.denied = true;
    if (!this.deniedWarned) {
      this.deniedWarned = true;
      this.logger.warn(
        { event_name: 'backend.jetstream.live.announce.denied', subject: error.subject, error: errorText(error) },
        `The NATS account may not publish on ${ANNOUNCEMENT_PREFIX}.>: live delivery relies on the stream alone, and a notification superseded before a feed read it reaches no watcher`,
      );
    }
    return true;
  }
}
