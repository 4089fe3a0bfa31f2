import { HistoryGapError, StreamProtocolError } from '../errors.js';
import type { StreamNotice } from '../types.js';
import { historyGapNotice, sequenceResetNotice } from './notices.js';
import type { SseFrame } from './sse-reader.js';

/**
 * What the supervisor does with one SSE frame, with the aviso client's tolerance: before the
 * opening control, heartbeats and events it does not know are skipped (they cannot confirm a
 * stream); after it, unknown events, unknown `replay-control` types and a repeated
 * `connection_established` are ignored. The server's `history_gap` and `sequence_reset` are
 * notices for the consumer after the opening, and as fatal as any other control before it. Only
 * what the aviso client treats as fatal is fatal: an `error` event, a close or a notification
 * before the opening, data that is not JSON in an event it reads, a replay limit, and (in the
 * caller) a malformed notification.
 */
export type FrameAction =
  | { readonly kind: 'skip' }
  | { readonly kind: 'opened'; readonly data: Record<string, unknown> }
  | { readonly kind: 'notification'; readonly data: Record<string, unknown> }
  | { readonly kind: 'close'; readonly data: Record<string, unknown> }
  | { readonly kind: 'control'; readonly data: Record<string, unknown> }
  | { readonly kind: 'notice'; readonly notice: StreamNotice };

const SKIP: FrameAction = { kind: 'skip' };
const STREAM_EVENTS = new Set(['live-notification', 'replay', 'replay-control']);

function parseObject(frame: SseFrame): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(frame.data);
  } catch (error) {
    throw new StreamProtocolError(`${frame.event} frame data is not JSON`, { cause: error });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new StreamProtocolError(`${frame.event} frame data is not a JSON object`);
  return value as Record<string, unknown>;
}

function serverError(data: Record<string, unknown>, fallback: string): StreamProtocolError {
  const parts = [data.error, data.message].filter((p): p is string => typeof p === 'string' && p !== '');
  return new StreamProtocolError(`the server ended the stream with an error: ${parts.length > 0 ? parts.join(': ') : fallback}`);
}

/** Before the opening control: `replay_started` on `replay-control` for a request with a start, else `connection_established` on `live-notification`. */
export function openingAction(frame: SseFrame, expectReplay: boolean): FrameAction {
  if (frame.event === 'error') throw serverError(parseObject(frame), 'the server rejected the stream before confirming it');
  if (frame.event === 'connection-closing')
    throw new StreamProtocolError('the stream closed before its opening control; check that the base URL points to an aviso server');
  if (!STREAM_EVENTS.has(frame.event)) return SKIP;
  const data = parseObject(frame);
  const expected = expectReplay ? 'replay_started' : 'connection_established';
  const expectedEvent = expectReplay ? 'replay-control' : 'live-notification';
  if (frame.event !== expectedEvent || data.type !== expected) {
    throw new StreamProtocolError(
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- only quoted in the error about a frame that is not the expected one
      `expected ${expected} as the opening control, got ${frame.event} ${String(data.type ?? '')}`.trimEnd() +
        '; check that the base URL points to an aviso server',
    );
  }
  return { kind: 'opened', data };
}

/** After the opening control. */
export function frameAction(frame: SseFrame): FrameAction {
  switch (frame.event) {
    case 'heartbeat':
      return SKIP;
    case 'error':
      throw serverError(parseObject(frame), 'server error event');
    case 'connection-closing':
      return { kind: 'close', data: parseObject(frame) };
    case 'replay-control': {
      const data = parseObject(frame);
      if (data.type === 'replay_completed') return { kind: 'control', data };
      if (data.type === 'history_gap') return { kind: 'notice', notice: historyGapNotice(data) };
      if (data.type === 'sequence_reset') return { kind: 'notice', notice: sequenceResetNotice(data) };
      if (data.type === 'notification_replay_limit_reached') {
        if (typeof data.max_allowed !== 'number')
          throw new StreamProtocolError('replay-control: notification_replay_limit_reached missing max_allowed');
        throw new HistoryGapError({ kind: 'replay_limit_reached', maxAllowed: data.max_allowed });
      }
      return SKIP;
    }
    case 'live-notification':
    case 'replay': {
      const data = parseObject(frame);
      return data.type === 'connection_established' ? SKIP : { kind: 'notification', data };
    }
    default:
      return SKIP;
  }
}
