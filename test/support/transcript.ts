import { expect } from 'vitest';
import type { SseEvent } from './sse-client.js';

/** Fixtures of streaming.md §15: schema `test_polygon`, base_url http://localhost:8000. */
export const STORED_POLYGON = '(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)';
/** How every CloudEvent carries STORED_POLYGON (D27): the canonical array, whatever the producer sent. */
export const DELIVERED_POLYGON = '[[50,10],[52,10],[52,12],[50,12],[50,10]]';
export const REQUEST_POLYGON = '(49.0,9.0,53.0,9.0,53.0,13.0,49.0,13.0,49.0,9.0)';
export const TRANSCRIPT_REQUEST = { event_type: 'test_polygon', identifier: { time: '1200', polygon: REQUEST_POLYGON } };
export const TRANSCRIPT_TOPIC = 'polygon.*.1200';

export function transcriptNotification(note: string) {
  return {
    event_type: 'test_polygon',
    identifier: { date: '20250706', time: '1200', polygon: STORED_POLYGON },
    payload: { note },
  };
}

export const SECOND = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const CLOUD_EVENT_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3}|\.\d{6}|\.\d{9})?Z$/;

/** `CE(n)` of docs/design/rules/streaming.md §15, byte for byte except its storage time, which is taken from the frame, and the polygon of D27. */
export function expectCloudEvent(event: SseEvent | undefined, name: string, sequence: number, note: string): void {
  expect(event?.event).toBe(name);
  const time = event?.json.time as string;
  expect(time).toMatch(CLOUD_EVENT_TIME);
  expect(event?.data).toBe(
    `{"data":{"identifier":{"date":"20250706","polygon":${DELIVERED_POLYGON},"time":"1200"},"payload":{"note":"${note}"}},` +
      `"datacontenttype":"application/json","dataschema":"http://localhost:8000/schema/test_polygon",` +
      `"id":"test_polygon@${sequence}","source":"http://localhost:8000","specversion":"1.0","time":"${time}",` +
      `"type":"int.ecmwf.aviso.test_polygon"}`,
  );
}

/** The schema configuration's version (D43): 16 lower-case hex digits. */
export const SCHEMA_VERSION = /^[0-9a-f]{16}$/;

const OPENING_TYPES = new Set(['connection_established', 'replay_started']);

/**
 * A control frame: exact fields, with `timestamp` checked for shape; an opening frame's
 * `schema_version` (D43) is checked for shape unless `fields` names it.
 */
export function expectControl(event: SseEvent | undefined, name: string, fields: Record<string, unknown>): void {
  expect(event?.event).toBe(name);
  expect(event?.json.timestamp).toMatch(SECOND);
  const versioned = OPENING_TYPES.has(fields.type as string) && !('schema_version' in fields);
  if (versioned) expect(event?.json.schema_version).toMatch(SCHEMA_VERSION);
  expect(event?.json).toEqual({
    ...fields,
    timestamp: event?.json.timestamp,
    ...(versioned ? { schema_version: event?.json.schema_version } : {}),
  });
  // Keys are sorted on the wire (D1).
  expect(Object.keys(event?.json ?? {})).toEqual(Object.keys(event?.json ?? {}).sort());
}

type CloseReason = 'end_of_stream' | 'max_duration_reached' | 'server_shutdown';

export const CLOSE_MESSAGES: Readonly<Record<CloseReason, string>> = {
  end_of_stream: 'Stream completed',
  max_duration_reached: 'Connection reached maximum duration',
  server_shutdown: 'Server is shutting down gracefully',
};

/** The slow-consumer close (D32): `end_of_stream`, which the client resumes on, with its cause. */
export const SLOW_CONSUMER_CLOSE = {
  cause: 'slow_consumer',
  message: 'Client did not keep up with the stream',
  reason: 'end_of_stream',
} as const;

/** The close of a stream whose JWT expired (docs/design/rules/browser.md §6): `end_of_stream` with its cause, as D32. */
export const TOKEN_EXPIRED_CLOSE = {
  cause: 'token_expired',
  message: 'Credentials expired',
  reason: 'end_of_stream',
} as const;

export function expectClose(event: SseEvent | undefined, reason: CloseReason, requestId: string | null, topic = TRANSCRIPT_TOPIC) {
  expectControl(event, 'connection-closing', { message: CLOSE_MESSAGES[reason], reason, request_id: requestId, topic });
}

export function expectSlowConsumerClose(event: SseEvent | undefined, requestId: string | null, topic = TRANSCRIPT_TOPIC) {
  expectControl(event, 'connection-closing', { ...SLOW_CONSUMER_CLOSE, request_id: requestId, topic });
}

/** A short name for a frame: a CloudEvent's id, a control's type, a close's reason. */
export function frameLabel(event: SseEvent): string {
  if (event.json.specversion) return event.json.id as string;
  return (event.json.type ?? event.json.reason ?? event.json.error ?? event.event) as string;
}

/** The `note` of a CloudEvent's payload, or the frame label otherwise. */
export function noteOrLabel(event: SseEvent): string {
  const data = event.json.data as { payload?: { note?: string } } | undefined;
  return event.json.specversion ? (data?.payload?.note ?? '') : frameLabel(event);
}
