import type { StreamNotice } from '../../index.js';
import type { Attributes } from '../log.js';
import { sanitizeServerText } from './listener-errors.js';

/** One WARN record of a listener (docs/cli.md "History gaps and resets"). */
export interface NoticeRecord {
  readonly body: string;
  readonly attributes: Attributes;
}

/**
 * The WARN record a listener writes when its stream says a history gap or a sequence reset: one
 * line each, and the listener goes on (the library already resumed in the right place). The
 * server's message is kept as an attribute, made safe for a terminal.
 */
export function noticeRecord(listener: string, notice: StreamNotice): NoticeRecord {
  const message = sanitizeServerText(notice.message);
  if (notice.type === 'history_gap') {
    return {
      body: 'history gap: notifications the server no longer stores were skipped; continuing',
      attributes: {
        'event.name': 'client.stream.history_gap',
        listener,
        first_sequence: notice.firstSequence,
        last_sequence: notice.lastSequence,
        lost: notice.lost,
        scope: notice.scope,
        message,
      },
    };
  }
  return {
    body: "sequence reset: the server's numbering started again; continuing from its first sequence",
    attributes: {
      'event.name': 'client.stream.sequence_reset',
      listener,
      requested_sequence: notice.requestedSequence,
      last_sequence: notice.lastSequence,
      message,
    },
  };
}
