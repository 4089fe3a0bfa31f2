import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/index.js';
import { decodeStreamClosed, decodeStreamList, streamListQuery } from '../../src/open-streams.js';

const STREAM = {
  id: '0b9f1a8e-2f4c-4d0e-9a51-7c1e5b2d3f40',
  process: 'node-a:41',
  route: 'replay',
  method: 'GET',
  event_type: 'mars',
  filter: { class: 'od' },
  topic_pattern: 'mars.od.>',
  user: null,
  client_address: '10.0.0.7',
  opened_at: '2026-12-05T21:00:00.123Z',
  phase: 'replaying',
  last_sequence: 4812,
  delivered: 37,
  buffered_bytes: 2048,
  lag_ms: 15,
};
const LIST = {
  streams: [STREAM],
  total: 3,
  truncated: true,
  counts: { mars: 3 },
  processes: { answered: ['node-a:41'], not_answering: ['node-b:7'], cluster_unreachable: false },
  request_id: 'r',
};

describe('admin.listStreams / closeStream decoding', () => {
  it('turns the wire answer into camelCase, field by field', () => {
    expect(decodeStreamList(LIST, 'r')).toEqual({
      streams: [
        {
          id: STREAM.id,
          process: 'node-a:41',
          route: 'replay',
          method: 'GET',
          eventType: 'mars',
          filter: { class: 'od' },
          topicPattern: 'mars.od.>',
          user: null,
          clientAddress: '10.0.0.7',
          openedAt: '2026-12-05T21:00:00.123Z',
          phase: 'replaying',
          lastSequence: 4812,
          delivered: 37,
          bufferedBytes: 2048,
          lagMs: 15,
        },
      ],
      total: 3,
      truncated: true,
      counts: { mars: 3 },
      processes: { answered: ['node-a:41'], notAnswering: ['node-b:7'], clusterUnreachable: false },
      requestId: 'r',
    });
    expect(
      decodeStreamClosed({ success: true, message: 'Stream closed', stream_id: 'x', process: 'node-a:41', request_id: 'q' }, 'q'),
    ).toEqual({
      success: true,
      message: 'Stream closed',
      streamId: 'x',
      process: 'node-a:41',
      requestId: 'q',
    });
  });

  it('refuses an answer of another shape, naming the field', () => {
    const bad =
      (streams: unknown[], extra: Record<string, unknown> = {}): unknown =>
      () =>
        decodeStreamList({ ...LIST, streams, ...extra }, 'r');
    expect(bad([{ ...STREAM, phase: 'paused' }])).toThrow(new DecodeError('admin streams: unexpected response shape (phase)'));
    expect(bad([{ ...STREAM, lag_ms: '15' }])).toThrow(/\(lag_ms\)/);
    expect(bad([{ ...STREAM, user: 7 }])).toThrow(/\(user\)/);
    expect(bad([], { counts: { mars: 'x' } })).toThrow(/\(mars\)/);
    expect(bad([], { processes: { answered: [] } })).toThrow(/\(processes.not_answering\)/);
    expect(() => decodeStreamClosed({ success: true, message: 'Stream closed' }, 'q')).toThrow(/\(stream_id\)/);
  });

  it('sends only the filters given, encoded', () => {
    expect(streamListQuery({})).toBe('');
    expect(streamListQuery({ eventType: 'mars', user: 'a&b', limit: 5 })).toBe('?event_type=mars&user=a%26b&limit=5');
  });
});
