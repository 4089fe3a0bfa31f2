import { MalformedEventError } from '../errors.js';
import type { Notification } from '../types.js';

/** Decodes a CloudEvent frame into a `Notification`, refusing anything the aviso client refuses. */
export function decodeNotification(data: Record<string, unknown>, eventType: string): Notification {
  const id = data.id;
  if (typeof id !== 'string') throw new MalformedEventError('notification without a string id');
  const at = id.lastIndexOf('@');
  const type = at > 0 ? id.slice(0, at) : '';
  const sequenceText = at > 0 ? id.slice(at + 1) : '';
  if (type === '' || !/^\d+$/.test(sequenceText)) throw new MalformedEventError(`malformed notification id ${JSON.stringify(id)}`);
  const sequence = Number(sequenceText);
  if (!Number.isSafeInteger(sequence)) throw new MalformedEventError(`notification id ${JSON.stringify(id)}: sequence out of range`);
  if (type !== eventType) throw new MalformedEventError(`notification ${id} is of event type ${type}, not the requested ${eventType}`);
  const body = data.data as Record<string, unknown> | null | undefined;
  const identifier = body?.identifier;
  if (identifier === null || typeof identifier !== 'object' || Array.isArray(identifier)) {
    throw new MalformedEventError(`notification ${id}: data.identifier is not an object`);
  }
  return {
    eventType,
    sequence,
    identifier: identifier as Record<string, unknown>,
    payload: body?.payload ?? null,
    time: typeof data.time === 'string' ? data.time : '',
    cloudEvent: data,
  };
}

export const CLOSE_REASONS = new Set(['end_of_stream', 'max_duration_reached', 'server_shutdown']);
