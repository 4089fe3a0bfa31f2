import type { Identifier, NotifyItem } from '../index.js';
import { UsageError } from './errors.js';
import { isObject } from './listeners.js';

/**
 * The NDJSON input of `aviso notify --file` (docs/cli.md "Many notifications from a file"): one
 * notification per line, in the body form of `POST /api/v1/notification`, `{"event_type": …,
 * "identifier": {…}, "payload": …}`. Blank lines are skipped. Every line is checked before
 * anything is sent, so a typo on line 900 exits 2 instead of leaving 899 stored.
 */

export interface NotificationLine {
  /** 1-based line number in the input, for messages. */
  readonly line: number;
  readonly item: NotifyItem;
}

const FIELDS = ['event_type', 'identifier', 'payload'];

function parseLine(text: string, where: string): NotifyItem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${where}: not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value))
    throw new UsageError(`${where}: a notification is a JSON object {"event_type": ..., "identifier": {...}, "payload": ...}`);
  const unknown = Object.keys(value).filter((key) => !FIELDS.includes(key));
  if (unknown.length > 0)
    throw new UsageError(`${where}: unknown field "${unknown[0]}" (a notification has event_type, identifier and payload)`);
  if (typeof value.event_type !== 'string' || value.event_type === '')
    throw new UsageError(`${where}: event_type must be a non-empty string`);
  if (!isObject(value.identifier)) throw new UsageError(`${where}: identifier must be a JSON object`);
  const item = { eventType: value.event_type, identifier: value.identifier as Identifier };
  return Object.hasOwn(value, 'payload') ? { ...item, payload: value.payload } : item;
}

/** Every notification of `text`; `source` names the input in messages (a path, or standard input). */
export function parseNotificationLines(text: string, source: string): NotificationLine[] {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  const parsed: NotificationLine[] = [];
  lines.forEach((raw, index) => {
    if (raw.trim() === '') return;
    parsed.push({ line: index + 1, item: parseLine(raw, `${source} line ${index + 1}`) });
  });
  if (parsed.length === 0) throw new UsageError(`${source} holds no notifications: expected one JSON object per line`);
  return parsed;
}
