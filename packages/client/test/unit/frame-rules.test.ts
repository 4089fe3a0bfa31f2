import { describe, expect, it } from 'vitest';
import { HistoryGapError, StreamProtocolError } from '../../src/index.js';
import { frameAction, openingAction } from '../../src/stream/frame-rules.js';

const frame = (event: string, data: unknown): { event: string; data: string } => ({
  event,
  data: typeof data === 'string' ? data : JSON.stringify(data),
});

describe("before the opening control (the aviso client's opening rules)", () => {
  it('skips heartbeats and events it does not know, whatever their data', () => {
    expect(openingAction(frame('heartbeat', ''), false)).toEqual({ kind: 'skip' });
    expect(openingAction(frame('message', 'not json'), true)).toEqual({ kind: 'skip' });
    expect(openingAction(frame('progress', { pct: 5 }), false)).toEqual({ kind: 'skip' });
  });
  it('confirms only the expected control on the expected event', () => {
    expect(openingAction(frame('live-notification', { type: 'connection_established' }), false)).toMatchObject({ kind: 'opened' });
    expect(openingAction(frame('replay-control', { type: 'replay_started' }), true)).toMatchObject({ kind: 'opened' });
    expect(() => openingAction(frame('live-notification', { type: 'connection_established' }), true)).toThrow(StreamProtocolError);
    expect(() => openingAction(frame('live-notification', { id: 'mars@1', data: {} }), false)).toThrow(/expected connection_established/);
    expect(() => openingAction(frame('replay', 'not json'), true)).toThrow(/not JSON/);
  });
  it("treats the server's notices like any other control before the opening: fatal", () => {
    expect(() => openingAction(frame('replay-control', { type: 'sequence_reset', requested_sequence: 4, last_sequence: 2 }), true)).toThrow(
      /expected replay_started as the opening control, got replay-control sequence_reset/,
    );
    expect(() =>
      openingAction(
        frame('replay-control', { type: 'history_gap', first_sequence: 1, last_sequence: 2, lost: 2, scope: 'request' }),
        false,
      ),
    ).toThrow(/expected connection_established/);
  });
  it('treats an error event and a close before the opening as fatal', () => {
    expect(() => openingAction(frame('error', { error: 'Forbidden', message: 'no access' }), false)).toThrow(/Forbidden: no access/);
    expect(() => openingAction(frame('connection-closing', { reason: 'server_shutdown' }), false)).toThrow(/closed before its opening/);
  });
});

describe("after the opening control (the aviso client's drain rules)", () => {
  it('ignores heartbeats, unknown events, unknown controls and a repeated connection_established', () => {
    expect(frameAction(frame('heartbeat', 'anything'))).toEqual({ kind: 'skip' });
    expect(frameAction(frame('progress', 'not json'))).toEqual({ kind: 'skip' });
    expect(frameAction(frame('replay-control', { type: 'replay_paused' }))).toEqual({ kind: 'skip' });
    expect(frameAction(frame('live-notification', { type: 'connection_established' }))).toEqual({ kind: 'skip' });
  });
  it('passes notifications, closes and replay_completed on', () => {
    expect(frameAction(frame('replay', { id: 'mars@3', data: { identifier: {} } }))).toMatchObject({ kind: 'notification' });
    expect(frameAction(frame('live-notification', { id: 'mars@4', data: { identifier: {} } }))).toMatchObject({ kind: 'notification' });
    expect(frameAction(frame('connection-closing', { reason: 'end_of_stream' }))).toMatchObject({ kind: 'close' });
    expect(frameAction(frame('replay-control', { type: 'replay_completed' }))).toMatchObject({ kind: 'control' });
  });
  it('turns history_gap and sequence_reset into notices for the consumer', () => {
    const gap = {
      type: 'history_gap',
      first_sequence: 4,
      last_sequence: 9,
      lost: 3,
      scope: 'request',
      message: '3 notifications of this request in sequences 4 to 9 are no longer stored',
      request_id: 'r',
      timestamp: 't',
      topic: 'mars.od',
    };
    expect(frameAction(frame('replay-control', gap))).toEqual({
      kind: 'notice',
      notice: { type: 'history_gap', firstSequence: 4, lastSequence: 9, lost: 3, scope: 'request', message: gap.message, frame: gap },
    });
    const unknownCount = { type: 'history_gap', first_sequence: 1, last_sequence: 1, lost: null, scope: 'stream', message: 'm' };
    expect(frameAction(frame('replay-control', unknownCount))).toMatchObject({
      kind: 'notice',
      notice: { lost: null, scope: 'stream', firstSequence: 1, lastSequence: 1 },
    });
    const reset = {
      type: 'sequence_reset',
      requested_sequence: 4,
      last_sequence: 2,
      message: 'Sequence 4 is beyond',
      request_id: 'r',
      timestamp: 't',
      topic: 'mars.od',
    };
    expect(frameAction(frame('replay-control', reset))).toEqual({
      kind: 'notice',
      notice: { type: 'sequence_reset', requestedSequence: 4, lastSequence: 2, message: 'Sequence 4 is beyond', frame: reset },
    });
  });
  it('refuses a notice whose sequences it cannot read (its position would depend on them)', () => {
    expect(() => frameAction(frame('replay-control', { type: 'history_gap', last_sequence: 9, lost: 3, scope: 'request' }))).toThrow(
      'replay-control: history_gap missing first_sequence',
    );
    expect(() =>
      frameAction(frame('replay-control', { type: 'history_gap', first_sequence: 4, last_sequence: '9', lost: 3, scope: 'request' })),
    ).toThrow('replay-control: history_gap with a malformed last_sequence');
    expect(() =>
      frameAction(frame('replay-control', { type: 'history_gap', first_sequence: 9, last_sequence: 4, lost: 3, scope: 'request' })),
    ).toThrow(StreamProtocolError);
    expect(() =>
      frameAction(frame('replay-control', { type: 'history_gap', first_sequence: 4, last_sequence: 9, lost: -1, scope: 'request' })),
    ).toThrow(/malformed lost/);
    expect(() =>
      frameAction(frame('replay-control', { type: 'history_gap', first_sequence: 4, last_sequence: 9, lost: 3, scope: 'topic' })),
    ).toThrow(/scope "topic"/);
    expect(() => frameAction(frame('replay-control', { type: 'sequence_reset', last_sequence: 2 }))).toThrow(
      'replay-control: sequence_reset missing requested_sequence',
    );
  });
  it('keeps what the aviso client treats as fatal fatal', () => {
    expect(() => frameAction(frame('error', { message: 'backend lost' }))).toThrow(/backend lost/);
    expect(() => frameAction(frame('replay', '{"id":'))).toThrow(StreamProtocolError);
    expect(() => frameAction(frame('replay-control', { type: 'notification_replay_limit_reached', max_allowed: 10 }))).toThrow(
      HistoryGapError,
    );
    expect(() => frameAction(frame('replay-control', { type: 'notification_replay_limit_reached' }))).toThrow(/missing max_allowed/);
  });
});
