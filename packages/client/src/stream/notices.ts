import { StreamProtocolError } from '../errors.js';
import type { HistoryGapNotice, SequenceResetNotice } from '../types.js';

/**
 * The two `replay-control` frames by which the server tells a client what its sequences alone
 * cannot (docs/streaming.md "History gaps", "A start beyond the stream"). A frame of either type
 * whose sequences are missing or not whole numbers is a protocol error, as a
 * `notification_replay_limit_reached` without `max_allowed` is: the client's position would
 * depend on numbers it cannot read.
 */

function sequenceField(data: Record<string, unknown>, type: string, key: string): number {
  const value = data[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new StreamProtocolError(`replay-control: ${type} ${value === undefined ? 'missing' : 'with a malformed'} ${key}`);
  }
  return value;
}

export function historyGapNotice(data: Record<string, unknown>): HistoryGapNotice {
  const firstSequence = sequenceField(data, 'history_gap', 'first_sequence');
  const lastSequence = sequenceField(data, 'history_gap', 'last_sequence');
  if (lastSequence < firstSequence)
    throw new StreamProtocolError(`replay-control: history_gap from ${firstSequence} back to ${lastSequence}`);
  const lost = data.lost === null || data.lost === undefined ? null : sequenceField(data, 'history_gap', 'lost');
  const scope = data.scope;
  if (scope !== 'request' && scope !== 'stream')
    throw new StreamProtocolError(`replay-control: history_gap with scope ${JSON.stringify(scope)}`);
  const range = firstSequence === lastSequence ? `sequence ${firstSequence}` : `sequences ${firstSequence} to ${lastSequence}`;
  const message = typeof data.message === 'string' ? data.message : `History in ${range} is no longer stored`;
  return { type: 'history_gap', firstSequence, lastSequence, lost, scope, message, frame: data };
}

export function sequenceResetNotice(data: Record<string, unknown>): SequenceResetNotice {
  const requestedSequence = sequenceField(data, 'sequence_reset', 'requested_sequence');
  const lastSequence = sequenceField(data, 'sequence_reset', 'last_sequence');
  const message =
    typeof data.message === 'string'
      ? data.message
      : `Sequence ${requestedSequence} is beyond this stream's last sequence ${lastSequence}: its numbering was reset`;
  return { type: 'sequence_reset', requestedSequence, lastSequence, message, frame: data };
}
