import { describe, expect, it } from 'vitest';
import { closeOutcome } from '../../src/stream/outcomes.js';
import { watchBody } from '../../src/stream/watch-body.js';

describe('watchBody', () => {
  const request = {
    eventType: 'mars',
    identifier: { class: 'od' },
    from: { fromDate: '2026-01-01T00:00:00Z' },
    to: { toDate: '2026-02-01T00:00:00Z' },
  };
  it('sends from_date and to_date on the first connection', () => {
    expect(watchBody(request, undefined, undefined)).toEqual({
      event_type: 'mars',
      identifier: { class: 'od' },
      from_date: '2026-01-01T00:00:00Z',
      to_date: '2026-02-01T00:00:00Z',
    });
  });
  it('resumes with from_id = cursor + 1 and the pinned end as to_id', () => {
    expect(watchBody(request, 41, 50)).toEqual({ event_type: 'mars', identifier: { class: 'od' }, from_id: '42', to_id: '50' });
  });
});

describe('closeOutcome', () => {
  it('server_shutdown waits 5 s; a short session backs off; a long one reconnects at once', () => {
    expect(closeOutcome({ reason: 'server_shutdown' }, { replay: false, sessionMs: 5 })).toEqual({
      kind: 'reconnect',
      wait: 5000,
      reason: 'server_shutdown',
    });
    expect(closeOutcome({ reason: 'max_duration_reached' }, { replay: false, sessionMs: 999 })).toMatchObject({ wait: 'backoff' });
    expect(closeOutcome({ reason: 'max_duration_reached' }, { replay: false, sessionMs: 1000 })).toMatchObject({ wait: 'now' });
  });
  it('a replay ends on end_of_stream unless the cause is slow_consumer (D32)', () => {
    expect(closeOutcome({ reason: 'end_of_stream' }, { replay: true, sessionMs: 5000 })).toEqual({ kind: 'finished' });
    expect(closeOutcome({ reason: 'end_of_stream', cause: 'slow_consumer' }, { replay: true, sessionMs: 5000 })).toEqual({
      kind: 'reconnect',
      wait: 'now',
      reason: 'end_of_stream (slow_consumer)',
    });
  });
  it('a watch or a replay closed because its token expired resumes (docs/design/rules/browser.md §6: end_of_stream, cause token_expired)', () => {
    for (const replay of [true, false]) {
      expect(closeOutcome({ reason: 'end_of_stream', cause: 'token_expired' }, { replay, sessionMs: 5000 })).toEqual({
        kind: 'reconnect',
        wait: 'now',
        reason: 'end_of_stream (token_expired)',
      });
    }
  });
});
