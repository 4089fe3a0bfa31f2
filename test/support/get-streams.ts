import { expect } from 'vitest';
import { UUID_V4 } from './http.js';

/** Helpers for the GET stream tests (docs/design/rules/browser.md §1): a POST body as a query, answers compared. */

export type Endpoint = 'watch' | 'replay';
export const CODE: Record<Endpoint, string> = { watch: 'INVALID_WATCH_REQUEST', replay: 'INVALID_REPLAY_REQUEST' };
const LABEL: Record<Endpoint, string> = { watch: 'Invalid Watch Request', replay: 'Invalid Replay Request' };

/** The query a POST body becomes: `identifier` as JSON text, every other field as it is. */
export function queryOf(body: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(body)) {
    params.append(key, key === 'identifier' ? JSON.stringify(value) : String(value));
  }
  return params.toString();
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** One request; an event stream, should one start, is cut off and reported as such. */
export async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const controller = new AbortController();
  const response = await fetch(url, { ...init, signal: controller.signal });
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: response.status, headers: response.headers, text: '<an event stream started>' };
  }
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The body with its request id replaced, after checking it is the response's `X-Request-ID`. */
export function withoutRequestId(answer: Answer): string {
  const requestId = answer.headers.get('x-request-id') ?? '';
  expect(requestId).toMatch(UUID_V4);
  if (answer.text.startsWith('{')) expect(JSON.parse(answer.text).request_id).toBe(requestId);
  return answer.text.replaceAll(requestId, '<request id>');
}

/** A 400 with exactly this shape-A body (docs/design/rules/api.md §9.1). */
export function expectShapeA(answer: Answer, endpoint: Endpoint, code: string, message: string): void {
  const requestId = answer.headers.get('x-request-id');
  expect(answer.text).toBe(JSON.stringify({ code, details: message, error: LABEL[endpoint], message, request_id: requestId }));
  expect(answer.status).toBe(400);
}
