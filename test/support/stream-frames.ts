import type { SseClient, SseEvent } from './sse-client.js';

/** The frames of a stream other than heartbeats, up to `count` of them or its end. */
export async function framesWithoutHeartbeats(client: SseClient, count = Number.POSITIVE_INFINITY): Promise<SseEvent[]> {
  const seen: SseEvent[] = [];
  while (seen.length < count) {
    const event = await client.next();
    if (!event) break;
    if (event.event !== 'heartbeat') seen.push(event);
  }
  return seen;
}

/**
 * A frame in one short line: `replay mars@3`, `live-notification mars@4`, the `replay-control`
 * type (a history gap with its range, count and scope), `close <reason>`.
 */
export function historyLabel(event: SseEvent): string {
  if (event.event === 'replay' || event.event === 'live-notification') {
    const id = event.json.id;
    return typeof id === 'string' ? `${event.event} ${id}` : `${event.event} ${String(event.json.type)}`;
  }
  if (event.event === 'replay-control') {
    const { type } = event.json;
    if (type === 'history_gap')
      return `gap ${String(event.json.first_sequence)}-${String(event.json.last_sequence)} lost=${String(event.json.lost)} ${String(event.json.scope)}`;
    return String(type);
  }
  return event.event === 'connection-closing' ? `close ${String(event.json.reason)}` : event.event;
}
