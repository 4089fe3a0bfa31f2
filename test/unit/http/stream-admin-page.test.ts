import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/http/routes/api-error.js';
import { parseStreamsQuery, streamsPage } from '../../../src/http/routes/stream-admin-page.js';
import type { OpenStream } from '../../../src/streaming/open-streams.js';

/** The admin streams list's query and page (D49, docs/api.md#get-apiv1adminstreams). */

function stream(id: string, eventType: string, openedAt: string, user: string | null = null): OpenStream {
  return {
    id,
    route: 'watch',
    method: 'POST',
    event_type: eventType,
    filter: {},
    topic_pattern: `${eventType}.*`,
    user,
    client_address: '127.0.0.1',
    opened_at: openedAt,
    phase: 'live',
    last_sequence: null,
    delivered: 0,
    buffered_bytes: 0,
    lag_ms: 0,
  };
}

const T1 = '2026-01-01T00:00:01.000Z';
const T2 = '2026-01-01T00:00:02.000Z';
const gathered = {
  answered: [
    { process: 'b:2', streams: [stream('s3', 'mars', T2, 'ann'), stream('s1', 'diss', T1)] },
    { process: 'a:1', streams: [stream('s2', 'mars', T1, 'bob'), stream('s0', 'mars', T2)] },
  ],
  notAnswering: ['c:3'],
  clusterUnreachable: false,
};

function refusal(url: string): string {
  try {
    parseStreamsQuery(url);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.statusCode).toBe(400);
    expect(apiError.body.code).toBe('INVALID_QUERY');
    return String(apiError.body.message);
  }
  throw new Error(`${url} was accepted`);
}

describe('parseStreamsQuery', () => {
  it('reads the filters and defaults the limit to 100', () => {
    expect(parseStreamsQuery('/api/v1/admin/streams')).toEqual({ eventType: undefined, user: undefined, limit: 100 });
    expect(parseStreamsQuery('/x?event_type=mars&user=a%20b&limit=1000')).toEqual({ eventType: 'mars', user: 'a b', limit: 1000 });
    expect(parseStreamsQuery('/x?limit=1').limit).toBe(1);
    expect(parseStreamsQuery('/x?limit=007').limit).toBe(7);
  });

  it('refuses a limit outside 1..1000, an unknown parameter and a repeated one', () => {
    for (const limit of ['0', '1001', '', 'abc', '-1', '1.5', '1e3', '+5', ' 5', '99999999999']) {
      expect(refusal(`/x?limit=${encodeURIComponent(limit)}`)).toBe(`limit must be an integer from 1 to 1000, got '${limit}'`);
    }
    expect(refusal('/x?token=abc')).toBe("Unknown query parameter 'token'. Allowed: event_type, user, limit");
    expect(refusal('/x?__proto__=1')).toContain("'__proto__'");
    expect(refusal('/x?user=a&user=b')).toBe("Query parameter 'user' is given more than once");
  });
});

describe('streamsPage', () => {
  it('merges the processes, sorts by opened_at then id, and counts every stream', () => {
    const page = streamsPage(gathered, { eventType: undefined, user: undefined, limit: 100 });
    expect(page.streams.map((s) => `${s.id}@${s.process}`)).toEqual(['s1@b:2', 's2@a:1', 's0@a:1', 's3@b:2']);
    expect(Object.keys(page.streams[0] as object).slice(0, 3)).toEqual(['id', 'process', 'route']);
    expect(page).toMatchObject({ total: 4, truncated: false, counts: { diss: 1, mars: 3 } });
    expect(Object.keys(page.counts)).toEqual(['diss', 'mars']);
    expect(page.processes).toEqual({ answered: ['b:2', 'a:1'], not_answering: ['c:3'], cluster_unreachable: false });
    expect(Object.keys(page)).toEqual(['streams', 'total', 'truncated', 'counts', 'processes']);
  });

  it('filters by event type and user before the limit; the counts ignore the filters', () => {
    const mars = streamsPage(gathered, { eventType: 'mars', user: undefined, limit: 2 });
    expect(mars.streams.map((s) => s.id)).toEqual(['s2', 's0']);
    expect(mars).toMatchObject({ total: 3, truncated: true, counts: { diss: 1, mars: 3 } });
    const ann = streamsPage(gathered, { eventType: undefined, user: 'ann', limit: 100 });
    expect(ann.streams.map((s) => s.id)).toEqual(['s3']);
    expect(streamsPage(gathered, { eventType: 'mars', user: 'nobody', limit: 100 })).toMatchObject({
      streams: [],
      total: 0,
      truncated: false,
    });
  });
});
