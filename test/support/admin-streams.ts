import { expect } from 'vitest';
import { UUID_V4, request, type JsonResponse } from './http.js';
import type { RunningServer } from './server-process.js';

/** Reading the admin streams list (docs/api.md#get-apiv1adminstreams, D49) in end-to-end tests. */

export interface ListedStream {
  readonly id: string;
  readonly process: string;
  readonly route: 'watch' | 'replay';
  readonly method: 'GET' | 'POST';
  readonly event_type: string;
  readonly filter: Record<string, unknown>;
  readonly topic_pattern: string;
  readonly user: string | null;
  readonly client_address: string;
  readonly opened_at: string;
  readonly phase: 'replaying' | 'live';
  readonly last_sequence: number | null;
  readonly delivered: number;
  readonly buffered_bytes: number;
  readonly lag_ms: number;
}

export interface StreamsAnswer {
  readonly streams: ListedStream[];
  readonly total: number;
  readonly truncated: boolean;
  readonly counts: Record<string, number>;
  readonly processes: { readonly answered: string[]; readonly not_answering: string[]; readonly cluster_unreachable: boolean };
  readonly request_id: string;
}

/** The documented field orders: tests compare them, not only the values. */
export const ANSWER_FIELDS = ['streams', 'total', 'truncated', 'counts', 'processes', 'request_id'];
export const STREAM_FIELDS = [
  'id',
  'process',
  'route',
  'method',
  'event_type',
  'filter',
  'topic_pattern',
  'user',
  'client_address',
  'opened_at',
  'phase',
  'last_sequence',
  'delivered',
  'buffered_bytes',
  'lag_ms',
];

/** `GET /api/v1/admin/streams` with `query`; a 200 is checked for its shape and returned parsed. */
export async function listStreams(server: RunningServer, query = '', headers: Record<string, string> = {}): Promise<StreamsAnswer> {
  const response = await request(`${server.url}/api/v1/admin/streams${query === '' ? '' : `?${query}`}`, { headers });
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const answer = response.json as unknown as StreamsAnswer;
  expect(Object.keys(answer)).toEqual(ANSWER_FIELDS);
  expect(answer.request_id).toBe(response.headers.get('x-request-id'));
  for (const stream of answer.streams) expect(Object.keys(stream)).toEqual(STREAM_FIELDS);
  return answer;
}

export function closeStream(server: RunningServer, id: string, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return request(`${server.url}/api/v1/admin/streams/${encodeURIComponent(id)}`, { method: 'DELETE', headers });
}

/** The standard error body (docs/design/rules/api.md §9.1): `code`, `error`, `message` and the request id of the header. */
export function expectErrorBody(response: JsonResponse, status: number, code: string): void {
  expect(response.status, response.text).toBe(status);
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toMatch(UUID_V4);
  expect(response.json).toMatchObject({ code, request_id: requestId });
  expect(typeof response.json.error).toBe('string');
  expect(typeof response.json.message).toBe('string');
}

/** The one listed stream with this id (each stream is listed exactly once). */
export function only(answer: StreamsAnswer, id: string): ListedStream {
  const found = answer.streams.filter((stream) => stream.id === id);
  expect(found, `stream ${id} listed once`).toHaveLength(1);
  return found[0] as ListedStream;
}
