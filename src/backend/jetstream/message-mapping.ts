import type { Msg, MsgHdrs } from '@nats-io/transport-node';
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
 * docs/design/rules/backends.md §7.7: payload decoded with replacement characters (never fails), repeated headers
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

/**
 * A pulled core message as a stored notification, with its metadata read straight from the header
 * bytes (see `metadataFromHeaderBytes`) instead of through nats-core's header map: replay reads
 * every stored message this way, and building that map (split, canonical key, lookups, copies) was
 * a large part of the garbage per message.
 */
export function fromCoreMessage(message: Msg, seq: number, timestampNanos: bigint): StoredNotification {
  const raw = rawHeaderBytes(message);
  const fast = raw === undefined ? NOT_READ : metadataFromHeaderBytes(raw);
  const metadata = fast === NOT_READ ? readMetadata(message.headers) : fast;
  return {
    sequence: seq,
    topic: message.subject,
    payload: utf8.decode(message.data),
    timestampNs: timestampNanos,
    ...(metadata ? { metadata } : {}),
  };
}

/**
 * The header JetStream checks a publish against and stores with it: the sequence of the last
 * notification its subject held then (0: none). Read as the topic's predecessor (replay-losses.ts).
 */
export const TOPIC_PREDECESSOR_HEADER = 'Nats-Expected-Last-Subject-Sequence';
const PREDECESSOR_NEEDLE = Buffer.from(`\r\n${TOPIC_PREDECESSOR_HEADER}:`, 'latin1');

/** The stored predecessor of a message, straight from its header bytes where it can; absent when not stored. */
export function topicPredecessorOf(message: Msg): number | undefined {
  const raw = rawHeaderBytes(message);
  if (raw === null) return undefined;
  if (raw === undefined) return readPredecessor(message.headers?.get(TOPIC_PREDECESSOR_HEADER));
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const at = bytes.indexOf(PREDECESSOR_NEEDLE);
  if (at < 0) return undefined;
  const from = at + PREDECESSOR_NEEDLE.length;
  const end = bytes.indexOf('\r\n', from, 'latin1');
  return readPredecessor(bytes.toString('latin1', from, end < 0 ? bytes.length : end));
}

function readPredecessor(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (!/^\d{1,16}$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Returned when the header block is left to nats-core (a status line, or text it would refuse). */
const NOT_READ = Symbol('not read');

/**
 * The header block of a nats-core message (its `headers` getter decodes the same bytes), or
 * `undefined` when the message does not have the internal shape of the pinned nats-core version
 * (then `headers` is used, as before).
 */
function rawHeaderBytes(message: Msg): Uint8Array | null | undefined {
  const internal = message as unknown as { _msg?: { hdr?: unknown }; _rdata?: unknown; _headers?: unknown };
  const hdr = internal._msg?.hdr;
  if (typeof hdr !== 'number' || internal._headers !== undefined) return undefined;
  if (hdr < 0) return null;
  const data = internal._rdata;
  return data instanceof Uint8Array ? data.subarray(0, hdr) : undefined;
}

const HEADER_LINE = 'NATS/1.0';

/**
 * Exactly what `readMetadata(MsgHdrsImpl.decode(bytes))` gives (nats-core 3.4: lines split on CRLF,
 * the name up to the first `:` kept as is, the value trimmed, repeated names joined with `,` in the
 * order first seen), without the intermediate map. Anything that decode would treat differently —
 * a status line, a lone CR or LF, a name character it rejects — is left to nats-core (`NOT_READ`),
 * so errors and odd inputs behave as before.
 */
export function metadataFromHeaderBytes(bytes: Uint8Array | null): Metadata | undefined | typeof NOT_READ {
  if (bytes === null) return undefined;
  const text = utf8.decode(bytes);
  if (!text.startsWith(HEADER_LINE) || (text.length > HEADER_LINE.length && !text.startsWith('\r\n', HEADER_LINE.length))) {
    return NOT_READ;
  }
  const metadata: Record<string, string> = {};
  let found = false;
  let start = HEADER_LINE.length + 2;
  while (start < text.length) {
    let end = text.indexOf('\r\n', start);
    if (end < 0) end = text.length;
    if (end > start) {
      const line = text.slice(start, end);
      if (line.includes('\r') || line.includes('\n')) return NOT_READ;
      const colon = line.indexOf(':');
      if (colon > -1) {
        const key = line.slice(0, colon);
        for (let i = 0; i < key.length; i++) {
          const c = key.charCodeAt(i);
          if (c < 33 || c > 126) return NOT_READ;
        }
        if (!key.toLowerCase().startsWith('nats-')) {
          const value = line.slice(colon + 1).trim();
          metadata[key] = Object.hasOwn(metadata, key) ? `${metadata[key]},${value}` : value;
          // `__proto__` is not stored by the assignment (as in `readMetadata`), so it counts for nothing.
          if (key !== '__proto__') found = true;
        }
      }
    }
    start = end + 2;
  }
  return found ? metadata : undefined;
}

/** The headers as metadata, leaving out NATS's own and the `transport` ones the caller names. */
export function readMetadata(headers: MsgHdrs | undefined, transport?: ReadonlySet<string>): Metadata | undefined {
  if (!headers) return undefined;
  const metadata: Record<string, string> = {};
  for (const key of headers.keys()) {
    if (key.toLowerCase().startsWith('nats-') || transport?.has(key)) continue;
    metadata[key] = headers.values(key).join(',');
  }
  return Object.keys(metadata).length > 0 ? metadata : undefined;
}

const NATS_MSG_ID = 'Nats-Msg-Id';

/**
 * What nats-server counts against `max_payload` for a publish: the payload and the encoded header
 * block, including the `Nats-Msg-Id` header the client adds for `msgID` and, at its widest, the
 * topic predecessor it may add (topic-predecessors.ts).
 */
export function publishedBytes(payload: string, headers: MsgHdrs | undefined, msgID: string): number {
  // The header block as the client writes it: `NATS/1.0\r\n`, `key: value\r\n` each, `\r\n`.
  let headerText = `NATS/1.0\r\n${NATS_MSG_ID}: ${msgID}\r\n${TOPIC_PREDECESSOR_HEADER}: ${'9'.repeat(20)}\r\n`;
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
