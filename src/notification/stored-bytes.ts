import type { Metadata, NotificationToStore } from './stored-notification.js';

/**
 * What one stored notification counts against `max_total_size` (docs/backends.md, "Memory
 * budget"), besides its strings: the stored object, its metadata object, its timestamp, its
 * entries in the topic's history, the base's sequence log and the storage order. Measured on
 * Node 20 at 0.3–0.7 KiB a notification (one per topic costs the most); 1 KiB errs on the safe side.
 */
export const NOTIFICATION_OVERHEAD_BYTES = 1024;

/** Room in the smallest accepted budget beyond the body: a topic of 2,048 characters at 2 bytes, the overhead, metadata names. */
const NOTIFY_SLACK_BYTES = 8 * 1024;

/** V8 stores a string with two bytes per UTF-16 unit as soon as one unit is above U+00FF. */
const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/** The bytes V8 holds for the characters of a flat string. */
export function textBytes(text: string): number {
  return BEYOND_LATIN1.test(text) ? text.length * 2 : text.length;
}

/** The counted size of a notification: its topic, payload and every metadata name and value, plus the fixed overhead. */
export function storedBytes(notification: NotificationToStore): number {
  let bytes = NOTIFICATION_OVERHEAD_BYTES + textBytes(notification.topic) + textBytes(notification.payload);
  for (const [name, value] of Object.entries(notification.metadata ?? {})) bytes += textBytes(name) + textBytes(value);
  return bytes;
}

/**
 * The smallest budget startup accepts, so that one notify of `application.max_body_bytes` always
 * fits: its payload and identifier come from the body, may be held at 2 bytes a character, and a
 * polygon is kept twice (in the identifier and in `spatial_geometry`), hence 4 × the body.
 */
export function smallestTotalBytes(maxBodyBytes: number): number {
  return 4 * maxBodyBytes + NOTIFY_SLACK_BYTES;
}

/**
 * A copy of `text` that shares no storage with the string it came from. V8 keeps a substring as a
 * view into its parent and a concatenation as a tree of its parts: a number the JSON parser sliced
 * out of a request body kept the whole body alive as long as the notification was stored (a 100 KB
 * body for a 20-byte payload), which no byte count could see. Slicing a fresh concatenation makes
 * V8 flatten it into a new string first, so the result refers to that copy only; a third of the
 * cost of `structuredClone`, which also copies.
 */
export function ownText(text: string): string {
  return ` ${text}`.slice(1);
}

export function ownMetadata(metadata: Metadata): Metadata {
  const copy: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata)) copy[name] = ownText(value);
  return copy;
}
