import { headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/transport-node';
import type { StoredNotification } from '../backend.js';
import { readMetadata, toHeaders } from './message-mapping.js';

/**
 * Announcements: what a process that accepted a notification tells the live feeds of every
 * process, on core NATS, besides storing it (docs/backends.md "Live delivery on JetStream").
 *
 * Subject: `%AVISO_LIVE.<stream name>.<wire topic>`. No topic can start with that token: aviso-ts
 * (like aviso-server) writes `%` in a topic only to start an escape of two hex digits, and `%AV`
 * is none. So no stream aviso-ts creates (bound to `<base>.>` and `<base>`) ever captures an
 * announcement, whatever event type a client names in non-strict mode, and a topic that did start
 * with it would not decode, so no watcher would match it (docs/design/rules/schema-and-validation.md §7.3).
 * Body: the payload, as stored. Headers: the notification's metadata, as stored, and two of ours.
 */
export const ANNOUNCEMENT_PREFIX = '%AVISO_LIVE';
const SEQUENCE_HEADER = 'Aviso-Live-Sequence';
const TIMESTAMP_HEADER = 'Aviso-Live-Timestamp-Ns';
const OWN_HEADERS: ReadonlySet<string> = new Set([SEQUENCE_HEADER, TIMESTAMP_HEADER]);

const utf8Decoder = new TextDecoder('utf-8');
const utf8Encoder = new TextEncoder();

/** What a feed subscribes to: every announcement of one stream. */
export function announcementsOf(streamName: string): string {
  return `${ANNOUNCEMENT_PREFIX}.${streamName}.>`;
}

export interface AnnouncementMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: MsgHdrs;
}

export function toAnnouncement(streamName: string, notification: StoredNotification): AnnouncementMessage {
  // The metadata exactly as the stream message carries it.
  const headers = toHeaders(notification.metadata) ?? natsHeaders();
  headers.set(SEQUENCE_HEADER, String(notification.sequence));
  headers.set(TIMESTAMP_HEADER, String(notification.timestampNs));
  return {
    subject: `${ANNOUNCEMENT_PREFIX}.${streamName}.${notification.topic}`,
    data: utf8Encoder.encode(notification.payload),
    headers,
  };
}

/** The announced notification, or `undefined` for a message on the subject that is not one of ours. */
export function fromAnnouncement(streamName: string, message: Pick<Msg, 'subject' | 'data' | 'headers'>): StoredNotification | undefined {
  const prefix = `${ANNOUNCEMENT_PREFIX}.${streamName}.`;
  if (!message.subject.startsWith(prefix) || !message.headers) return undefined;
  const sequence = Number(message.headers.get(SEQUENCE_HEADER));
  const timestamp = message.headers.get(TIMESTAMP_HEADER);
  if (!Number.isSafeInteger(sequence) || sequence < 1 || !/^\d+$/.test(timestamp)) return undefined;
  const metadata = readMetadata(message.headers, OWN_HEADERS);
  return {
    sequence,
    topic: message.subject.slice(prefix.length),
    payload: utf8Decoder.decode(message.data),
    timestampNs: BigInt(timestamp),
    ...(metadata ? { metadata } : {}),
  };
}
