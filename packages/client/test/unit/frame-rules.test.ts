import { describe, expect, it } from 'vitest';
import { HistoryGapError, StreamProtocolError } from '../../src/index.js';
import { frameAction, openingAction } from '../../src/stream/frame-rules.js';

const frame = (event: string, data: unknown): { event: string; data: string } => ({ event, data: typeof data === 'string' ? data : JSON.stringify(data) });

describe('before the opening control (the aviso client\'s opening rules)', () => {
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
  it('treats an error event and a close before the opening as fatal', () => {
    expect(() => openingAction(frame('error', { error: 'Forbidden', message: 'no access' }), false)).toThrow(/Forbidden: no access/);
    expect(() => openingAction(frame('connection-closing', { reason: 'server_shutdown' }), false)).toThrow(/closed before its opening/);
  });
});

describe('after the opening control (the aviso client\'s drain rules)', () => {
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
  it('keeps what the aviso client treats as fatal fatal', () => {
    expect(() => frameAction(frame('error', { message: 'backend lost' }))).toThrow(/backend lost/);
    expect(() => frameAction(frame('replay', '{"id":'))).toThrow(StreamProtocolError);
    expect(() => frameAction(frame('replay-control', { type: 'notification_replay_limit_reached', max_allowed: 10 }))).toThrow(HistoryGapError);
    expect(() => frameAction(frame('replay-control', { type: 'notification_replay_limit_reached' }))).toThrow(/missing max_allowed/);
  });
});
