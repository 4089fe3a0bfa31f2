import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/http/routes/api-error.js';
import { JsonNumber } from '../../../src/json/json-value.js';
import { parseLastEventId, parseStreamQuery } from '../../../src/http/routes/stream-query.js';

/** The GET streams' query and `Last-Event-ID` (docs/design/rules/browser.md §1); the e2e tests compare with POST. */

function failure(run: () => unknown): { status: number; code: unknown; message: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.statusCode, code: error.body.code, message: error.body.message };
    throw error;
  }
  throw new Error('did not fail');
}

describe('parseStreamQuery', () => {
  it('reads the body fields from the query, identifier as JSON keeping number text', () => {
    const request = parseStreamQuery(
      'replay',
      '/api/v1/replay?event_type=mars&identifier=%7B%22step%22%3A4.0%2C%22class%22%3A%22od%22%7D&from_id=3&to_date=2025-01-01',
    );
    expect(request).toEqual({
      event_type: 'mars',
      identifier: { step: new JsonNumber('4.0'), class: 'od' },
      from_id: '3',
      to_date: '2025-01-01',
    });
  });

  it('takes an omitted identifier as {}', () => {
    expect(parseStreamQuery('watch', '/api/v1/watch?event_type=mars')).toEqual({ event_type: 'mars', identifier: {} });
  });

  it('keeps a __proto__ parameter a parameter, refused as unknown', () => {
    expect(failure(() => parseStreamQuery('watch', '/api/v1/watch?event_type=mars&__proto__=x')).code).toBe('UNKNOWN_FIELD');
  });

  it('refuses a query without event_type as a body without it', () => {
    expect(failure(() => parseStreamQuery('watch', '/api/v1/watch')).message).toBe(
      'Request deserialization failed: missing field `event_type`',
    );
  });
});

describe('parseLastEventId', () => {
  it('reads <event_type>@<n>', () => {
    expect(parseLastEventId('watch', 'mars@0', 'mars')).toBe(0n);
    expect(parseLastEventId('watch', 'mars@18446744073709551614', 'mars')).toBe(18446744073709551614n);
    expect(parseLastEventId('watch', 'a@b@7', 'a@b')).toBe(7n);
  });

  it('takes an absent or empty header as no resume', () => {
    expect(parseLastEventId('replay', undefined, 'mars')).toBeUndefined();
    expect(parseLastEventId('replay', '', 'mars')).toBeUndefined();
  });

  it('refuses what is not an id of this stream with the endpoint validation code', () => {
    expect(failure(() => parseLastEventId('replay', '+5', 'mars'))).toEqual({
      status: 400,
      code: 'INVALID_REPLAY_REQUEST',
      message: "Last-Event-ID must be '<event_type>@<sequence>', the id of a notification of this stream. Got: '+5'",
    });
    expect(failure(() => parseLastEventId('watch', 'dissemination@5', 'mars'))).toEqual({
      status: 400,
      code: 'INVALID_WATCH_REQUEST',
      message: "Last-Event-ID 'dissemination@5' names another event type than this stream's 'mars'",
    });
  });
});
