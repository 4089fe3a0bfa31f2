import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logging/logger.js';
import { MAX_ECHO_CHARACTERS } from '../../../src/text/echo.js';
import { buildTestApp } from '../../support/test-app.js';

/**
 * Every place an answer quotes what a client sent (docs/api.md#echoed-values-decision-d45): a 4,000-character value of
 * each kind gets a bounded answer and a bounded log line, each quoting the value's first 256
 * characters once. Before D45 the answer quoted it twice and the line three times.
 */

const LONG = 4_000;
/** An answer: the error body with its request id, with room for the longest message and the marker. */
const MAX_BODY_BYTES = 1_200;
/** A log line: the resource block, the request context and the error fields. */
const MAX_LINE_BYTES = 1_500;

const lines: string[] = [];
let app: FastifyInstance;

beforeAll(async () => {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: 'info', serviceVersion: 'test', env: {}, destination });
  ({ app } = await buildTestApp({ logger }));
});
afterAll(async () => {
  await app.close();
});

const MARS = { event_type: 'mars', identifier: { class: 'od' } };
const MARS_QUERY = `event_type=mars&identifier=${encodeURIComponent('{"class":"od"}')}`;
const NOTIFY = {
  event_type: 'mars',
  identifier: { class: 'od', expver: '1', domain: 'g', date: '2025-07-06', time: '12:00', stream: 'enfo', step: '7' },
};

interface Case {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly body?: string;
  readonly headers?: Record<string, string>;
  /** The long value as the server reads it: a quote of it is its first 256 characters. */
  readonly value: string;
  readonly code: string;
  /** The event of its log line; none for a 404. */
  readonly event?: string;
}

const long = (char: string): string => char.repeat(LONG);

const post = (path: string, body: unknown, value: string, code: string, event = 'api.request.validation.failed'): Case => ({
  method: 'POST',
  url: path,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  value,
  code,
  event,
});

const CASES: Readonly<Record<string, Case>> = {
  'Last-Event-ID, malformed': {
    method: 'GET',
    url: `/api/v1/watch?${MARS_QUERY}`,
    headers: { 'last-event-id': long('A') },
    value: long('A'),
    code: 'INVALID_WATCH_REQUEST',
    event: 'api.request.validation.failed',
  },
  'Last-Event-ID, another event type': {
    method: 'GET',
    url: `/api/v1/replay?${MARS_QUERY}&from_id=1`,
    headers: { 'last-event-id': `${long('B')}@5` },
    value: `${long('B')}@5`,
    code: 'INVALID_REPLAY_REQUEST',
    event: 'api.request.validation.failed',
  },
  'from_date, a timestamp its reason quotes again': post(
    '/api/v1/replay',
    { ...MARS, from_date: long('1') },
    long('1'),
    'INVALID_REPLAY_REQUEST',
  ),
  'from_date, not a date': post('/api/v1/watch', { ...MARS, from_date: long('D') }, long('D'), 'INVALID_WATCH_REQUEST'),
  'from_date on a GET stream': {
    method: 'GET',
    url: `/api/v1/watch?${MARS_QUERY}&from_date=-${long('2')}`,
    value: `-${long('2')}`,
    code: 'INVALID_WATCH_REQUEST',
    event: 'api.request.validation.failed',
  },
  from_id: post('/api/v1/replay', { ...MARS, from_id: long('x') }, long('x'), 'INVALID_REPLAY_REQUEST'),
  to_id: post('/api/v1/replay', { ...MARS, from_id: '1', to_id: long('y') }, long('y'), 'INVALID_REPLAY_REQUEST'),
  to_date: post('/api/v1/replay', { ...MARS, from_id: '1', to_date: long('9') }, long('9'), 'INVALID_REPLAY_REQUEST'),
  'identifier key': post(
    '/api/v1/notification',
    { ...NOTIFY, identifier: { ...NOTIFY.identifier, [long('k')]: 'v' } },
    long('k'),
    'INVALID_NOTIFICATION_REQUEST',
  ),
  'identifier key on a watch': post('/api/v1/watch', { ...MARS, identifier: { [long('q')]: 'v' } }, long('q'), 'INVALID_WATCH_REQUEST'),
  'identifier value (enum)': post(
    '/api/v1/notification',
    { ...NOTIFY, identifier: { ...NOTIFY.identifier, domain: long('d') } },
    long('d'),
    'INVALID_NOTIFICATION_REQUEST',
  ),
  'identifier value (integer)': post(
    '/api/v1/notification',
    { ...NOTIFY, identifier: { ...NOTIFY.identifier, step: long('s') } },
    long('s'),
    'INVALID_NOTIFICATION_REQUEST',
  ),
  'identifier value (date, quoted in details only)': post(
    '/api/v1/notification',
    { ...NOTIFY, identifier: { ...NOTIFY.identifier, date: long('t') } },
    long('t'),
    'INVALID_NOTIFICATION_REQUEST',
  ),
  'identifier value (time)': post(
    '/api/v1/notification',
    { ...NOTIFY, identifier: { ...NOTIFY.identifier, time: long('h') } },
    long('h'),
    'INVALID_NOTIFICATION_REQUEST',
  ),
  'identifier operator': post(
    '/api/v1/watch',
    { ...MARS, identifier: { class: 'od', step: { [long('o')]: 5 } } },
    long('o'),
    'INVALID_WATCH_REQUEST',
  ),
  event_type: post('/api/v1/watch', { event_type: long('e'), identifier: {} }, long('e'), 'UNKNOWN_EVENT_TYPE'),
  'unknown top-level field': post(
    '/api/v1/notification',
    { ...NOTIFY, [long('f')]: 1 },
    long('f'),
    'UNKNOWN_FIELD',
    'api.request.parse.failed',
  ),
  'identifier given as a string': post(
    '/api/v1/watch',
    { event_type: 'mars', identifier: long('i') },
    long('i'),
    'INVALID_REQUEST_SHAPE',
    'api.request.parse.failed',
  ),
  'JSON number out of range': post(
    '/api/v1/notification',
    `{"event_type":"mars","identifier":{},"payload":1${long('0')}}`,
    `1${long('0')}`,
    'INVALID_JSON',
    'api.request.parse.failed',
  ),
  'path of a 404': { method: 'GET', url: `/${long('p')}`, value: `/${long('p')}`, code: 'NOT_FOUND' },
};

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe('an over-long value is quoted once, cut, in the answer and in the log line', () => {
  it.each(Object.entries(CASES))('%s', async (_name, request) => {
    const response = await app.inject({
      method: request.method,
      url: request.url,
      ...(request.body === undefined ? {} : { payload: request.body }),
      headers: { ...(request.body === undefined ? {} : { 'content-type': 'application/json' }), ...request.headers },
    });
    const quote = request.value.slice(0, MAX_ECHO_CHARACTERS);
    const body = response.json<Record<string, unknown>>();
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    expect(response.statusCode).toBeLessThan(500);
    expect(body.code).toBe(request.code);
    expect(Buffer.byteLength(response.body)).toBeLessThan(MAX_BODY_BYTES);
    expect(occurrences(response.body, quote)).toBe(1);
    expect(response.body).toContain(`${quote}…(`);
    expect(response.body).not.toContain(request.value.slice(0, MAX_ECHO_CHARACTERS + 1));

    if (request.event === undefined) return;
    await new Promise((resolve) => setImmediate(resolve));
    const line = lines.find((text) => text.includes(String(body.request_id)) && text.includes(`"${request.event}"`));
    expect(line, `${request.event} line`).toBeDefined();
    expect(Buffer.byteLength(line as string)).toBeLessThan(MAX_LINE_BYTES);
    expect(occurrences(line as string, quote)).toBe(1);
  });

  it('leaves a value of exactly 256 characters whole, in message and details alike', async () => {
    const value = 'x'.repeat(MAX_ECHO_CHARACTERS);
    const response = await app.inject({ method: 'POST', url: '/api/v1/replay', payload: { ...MARS, from_id: value } });
    const message = `from_id must be a valid positive integer. Got: '${value}'. Valid examples: '1', '123', '9999'`;
    expect(response.json()).toMatchObject({ message, details: message });
  });
});
