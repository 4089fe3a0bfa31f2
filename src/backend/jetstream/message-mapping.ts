import type { MsgHdrs } from '@nats-io/transport-node';
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { Metadata, StoredNotification } from '../backend.js';

/** What a JetStream message carries, whichever API delivered it. */
export interface RawJetStreamMessage {
  readonly seq: number;
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: MsgHdrs | undefined;
  readonly timestampNanos: bigint;
}

const utf8 = new TextDecoder('utf-8');

/**
 * backends.md §7.7: payload decoded with replacement characters (never fails), repeated headers
 * joined with `,`, NATS's own `Nats-*` headers left out (they are transport, not metadata).
 */
export function toStoredNotification(message: RawJetStreamMessage): StoredNotification {
  const metadata = readMetadata(message.headers);
  return {
    sequence: message.seq,
    topic: message.subject,
    payload: utf8.decode(message.data),
    timestampNs: message.timestampNanos,
    ...(metadata ? { metadata } : {}),
  };
}

function readMetadata(headers: MsgHdrs | undefined): Metadata | undefined {
  if (!headers) return undefined;
  const metadata: Record<string, string> = {};
  for (const key of headers.keys()) {
    if (key.toLowerCase().startsWith('nats-')) continue;
    metadata[key] = headers.values(key).join(',');
  }
  return Object.keys(metadata).length > 0 ? metadata : undefined;
}

const NATS_MSG_ID = 'Nats-Msg-Id';

/**
 * What nats-server counts against `max_payload` for a publish: the payload and the encoded header
 * block, including the `Nats-Msg-Id` header the client adds for `msgID`.
 */
export function publishedBytes(payload: string, headers: MsgHdrs | undefined, msgID: string): number {
  // The header block as the client writes it: `NATS/1.0\r\n`, `key: value\r\n` each, `\r\n`.
  let headerText = `NATS/1.0\r\n${NATS_MSG_ID}: ${msgID}\r\n`;
  for (const key of headers?.keys() ?? []) {
    for (const value of (headers as MsgHdrs).values(key)) headerText += `${key}: ${value}\r\n`;
  }
  return Buffer.byteLength(payload, 'utf8') + Buffer.byteLength(`${headerText}\r\n`, 'utf8');
}

/** Header values may not contain CR or LF; a polygon's whitespace is not significant there. */
export function toHeaders(metadata: Metadata | undefined): MsgHdrs | undefined {
  if (!metadata || Object.keys(metadata).length === 0) return undefined;
  const headers = natsHeaders();
  for (const [key, value] of Object.entries(metadata)) headers.set(key, value.replace(/[\r\n]/g, ' '));
  return headers;
}
