import { describe, expect, it } from 'vitest';
import {
  bytesText,
  countEntries,
  filterText,
  isStreamListing,
  lagText,
  listingQuery,
  missingText,
  openedText,
  shortId,
  sortStreams,
  summaryText,
  type ServerStream,
  type StreamListing,
} from '../../../console/src/server-streams.js';

function stream(id: string, lag: number, buffered: number): ServerStream {
  return {
    id,
    process: 'host:1',
    route: 'watch',
    method: 'POST',
    event_type: 'mars',
    filter: { class: 'od' },
    topic_pattern: 'mars.od.>',
    user: null,
    client_address: '127.0.0.1',
    opened_at: '2026-12-05T21:00:00.123Z',
    phase: 'live',
    last_sequence: null,
    delivered: 0,
    buffered_bytes: buffered,
    lag_ms: lag,
  };
}

describe('the console: streams of the server', () => {
  it('keeps the server order, or puts the most lagging or most buffered first, ties in the server order', () => {
    const rows = [stream('a', 0, 10), stream('b', 50, 0), stream('c', 50, 900), stream('d', 5, 900)];
    expect(sortStreams(rows, 'opened').map((s) => s.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(sortStreams(rows, 'lag').map((s) => s.id)).toEqual(['b', 'c', 'd', 'a']);
    expect(sortStreams(rows, 'buffered').map((s) => s.id)).toEqual(['c', 'd', 'a', 'b']);
    // The listing itself is left as it was.
    expect(rows.map((s) => s.id)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('recognises a listing, not an error body', () => {
    const listing: StreamListing = {
      streams: [],
      total: 0,
      truncated: false,
      counts: {},
      processes: { answered: ['h:1'], not_answering: [] },
      request_id: 'r',
    };
    expect(isStreamListing(listing)).toBe(true);
    expect(isStreamListing({ code: 'FORBIDDEN', message: 'no', request_id: 'r' })).toBe(false);
    expect(isStreamListing({ ...listing, processes: { answered: [] } })).toBe(false);
    expect(isStreamListing(null)).toBe(false);
  });

  it('writes the cells: bytes, lag, the filter, the opening time', () => {
    expect([bytesText(0), bytesText(1023), bytesText(1536), bytesText(3 * 1024 * 1024)]).toEqual(['0 B', '1023 B', '1.5 KiB', '3.0 MiB']);
    expect([lagText(0), lagText(12.4), lagText(999), lagText(1250)]).toEqual(['0 ms', '12 ms', '999 ms', '1.3 s']);
    expect(shortId('0b9f1a8e-2f4c-4d0e-9a51-7c1e5b2d3f40')).toBe('0b9f1a8e…');
    expect(shortId('short-id1')).toBe('short-id1');
    expect(filterText({})).toBe('*');
    expect(filterText({ class: 'od', step: { gte: 6 } })).toBe('class=od step={"gte":6}');
    expect(openedText('2026-12-05T21:00:00.123Z')).toBe('2026-12-05 21:00:00 UTC');
    expect(openedText('yesterday')).toBe('yesterday');
  });

  it('summarises counts and the cut of the limit', () => {
    expect(countEntries({ mars: 2, dissemination: 5, aa: 2 })).toEqual([
      ['dissemination', 5],
      ['aa', 2],
      ['mars', 2],
    ]);
    const listing: StreamListing = {
      streams: [stream('a', 0, 0)],
      total: 3,
      truncated: true,
      counts: { mars: 3, dissemination: 2 },
      processes: { answered: ['h:1'], not_answering: [] },
    };
    expect(summaryText(listing)).toBe('3 matching · 5 open in all · showing the first 1: raise the limit or narrow the filters');
    expect(summaryText({ ...listing, total: 1, truncated: false })).toBe('1 matching · 5 open in all');
  });

  it('names the processes whose streams are missing, and a server that could not ask the others', () => {
    const listing: StreamListing = {
      streams: [],
      total: 0,
      truncated: false,
      counts: {},
      processes: { answered: ['a:1'], not_answering: [], cluster_unreachable: false },
    };
    expect(missingText(listing)).toBe('');
    expect(missingText({ ...listing, processes: { answered: ['a:1'], not_answering: ['b:2', 'c:3'] } })).toBe(
      'Not answering, so their streams are missing: b:2, c:3.',
    );
    expect(missingText({ ...listing, processes: { answered: ['a:1'], not_answering: [], cluster_unreachable: true } })).toBe(
      'The server could not ask the other processes of its deployment: only the streams of a:1 are listed.',
    );
  });

  it('sends only the filters filled in', () => {
    expect(listingQuery('', ' ', '')).toBe('');
    expect(listingQuery(' mars ', 'alice b', '10')).toBe('?event_type=mars&user=alice+b&limit=10');
  });
});
