import { encodeToken } from './percent-codec.js';
import { WILDCARD, type TopicPattern } from './topic-pattern.js';

/**
 * D24: a subject longer than this is refused before anything is stored, on both backends; D33: a
 * watch/replay pattern longer than this is refused before any backend call (no stored topic can
 * match it). It keeps every request subject well inside nats-server's 4 KiB control line.
 */
export const MAX_TOPIC_BYTES = 2048;

export function topicTooLongMessage(bytes: number): string {
  return `Identifier values are too long: the topic would be ${bytes} bytes, the limit is ${MAX_TOPIC_BYTES}`;
}

/**
 * D33: the pattern as a NATS subject, wildcards as `*` and every other token encoded as notify
 * encodes it: what a consumer filter for it would be at most.
 */
export function patternSubjectBytes(pattern: TopicPattern): number {
  let bytes = pattern.tokens.length - 1;
  for (const token of pattern.tokens) bytes += token === WILDCARD ? 1 : Buffer.byteLength(encodeToken(token), 'utf8');
  return bytes;
}
