import { encodeToken } from './percent-codec.js';

/**
 * JetStream refuses longer stream names ("stream name is too long, maximum allowed is 255"), in
 * UTF-8 bytes. A base whose stream name would be longer can never have a stream (D33).
 */
export const MAX_STREAM_NAME_BYTES = 255;

/**
 * The stream a topic base is stored in: its percent-encoded form upper-cased, as JetStream names
 * its streams (docs/design/rules/backends.md §7.3). The in-memory backend numbers sequences by the same name (D28),
 * so bases differing only in case share one counter there as they share one stream on JetStream.
 */
export function streamNameOf(base: string): string {
  return encodeToken(base).toUpperCase();
}

/** The stream of a wire topic: its first (already encoded) token upper-cased. */
export function streamNameOfTopic(wireTopic: string): string {
  const dot = wireTopic.indexOf('.');
  return (dot < 0 ? wireTopic : wireTopic.slice(0, dot)).toUpperCase();
}

export function streamNameBytes(base: string): number {
  return Buffer.byteLength(streamNameOf(base), 'utf8');
}
