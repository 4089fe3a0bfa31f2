import { describe, expect, it } from 'vitest';
import { connectionClosing, renderFrame, replayStarted } from '../../../src/streaming/frames.js';

const STREAM = { topic: 'mars.od.*', requestId: '3f2b8c1e-9d4a-4c7e-8b1f-2a6d5e9c0b7a' };
const NOW = Date.parse('2026-03-01T12:00:00Z');

describe('replay_started (D25)', () => {
  it('always carries end_sequence and to_date, keys sorted', () => {
    const frame = replayStarted(STREAM, NOW, { batchSize: 100, fromSequence: 1n, fromDate: null, endSequence: 42, toDate: null });
    expect(renderFrame(frame)).toBe(
      'event: replay-control\ndata: {"batch_size":100,"end_sequence":42,"from_date":null,"from_sequence":1,' +
        '"request_id":"3f2b8c1e-9d4a-4c7e-8b1f-2a6d5e9c0b7a","timestamp":"2026-03-01T12:00:00Z","to_date":null,' +
        '"topic":"mars.od.*","type":"replay_started"}\n\n',
    );
    const open = replayStarted(STREAM, NOW, {
      batchSize: 5,
      fromSequence: null,
      fromDate: '2026-01-01T00:00:00Z',
      endSequence: null,
      toDate: null,
    });
    expect(String(renderFrame(open))).toContain('"end_sequence":null,"from_date":"2026-01-01T00:00:00Z"');
    expect(String(renderFrame(open))).toContain('"to_date":null');
  });
});

describe('connection-closing (D32)', () => {
  it('tells a slow consumer end_of_stream with its cause', () => {
    expect(renderFrame(connectionClosing(STREAM, NOW, { reason: 'end_of_stream', cause: 'slow_consumer' }))).toBe(
      'event: connection-closing\ndata: {"cause":"slow_consumer","message":"Client did not keep up with the stream",' +
        '"reason":"end_of_stream","request_id":"3f2b8c1e-9d4a-4c7e-8b1f-2a6d5e9c0b7a","timestamp":"2026-03-01T12:00:00Z",' +
        '"topic":"mars.od.*"}\n\n',
    );
  });

  it('tells a stream whose token expired end_of_stream with the cause token_expired (docs/design/rules/browser.md §6)', () => {
    expect(renderFrame(connectionClosing(STREAM, NOW, { reason: 'end_of_stream', cause: 'token_expired' }))).toBe(
      'event: connection-closing\ndata: {"cause":"token_expired","message":"Credentials expired",' +
        '"reason":"end_of_stream","request_id":"3f2b8c1e-9d4a-4c7e-8b1f-2a6d5e9c0b7a","timestamp":"2026-03-01T12:00:00Z",' +
        '"topic":"mars.od.*"}\n\n',
    );
  });

  it('has no cause key on the other closes', () => {
    for (const reason of ['end_of_stream', 'max_duration_reached', 'server_shutdown'] as const) {
      const data = JSON.parse(String(renderFrame(connectionClosing(STREAM, NOW, { reason }))).split('data: ')[1] ?? '') as object;
      expect(Object.keys(data).sort()).toEqual(['message', 'reason', 'request_id', 'timestamp', 'topic']);
    }
  });

  it('admits no other reason, and a cause only with end_of_stream (checked by the compiler)', () => {
    // @ts-expect-error: slow_consumer is not a close reason (D32)
    connectionClosing(STREAM, NOW, { reason: 'slow_consumer' });
    // @ts-expect-error: token_expired is a cause, not a close reason (D32)
    connectionClosing(STREAM, NOW, { reason: 'token_expired' });
    // @ts-expect-error: a cause goes with end_of_stream only
    connectionClosing(STREAM, NOW, { reason: 'server_shutdown', cause: 'slow_consumer' });
  });
});
