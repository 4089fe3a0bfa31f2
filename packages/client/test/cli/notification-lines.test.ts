import { describe, expect, it } from 'vitest';
import { failureReports } from '../../src/cli/commands/notify-file.js';
import { parseNotificationLines } from '../../src/cli/notification-lines.js';
import type { NotifyFailed } from '../../src/index.js';

/** The NDJSON input of `aviso notify --file` and how its failures are named (docs/cli.md "Many notifications from a file"). */
describe('the NDJSON input of aviso notify --file', () => {
  it('reads one notification per line, skipping blank lines and keeping each line number', () => {
    const text =
      '\uFEFF{"event_type":"mars","identifier":{"class":"od"}}\r\n\n  \n{"event_type":"dissemination","identifier":{},"payload":null}\n';
    expect(parseNotificationLines(text, 'in.ndjson')).toEqual([
      { line: 1, item: { eventType: 'mars', identifier: { class: 'od' } } },
      { line: 4, item: { eventType: 'dissemination', identifier: {}, payload: null } },
    ]);
  });

  it('names the input and the line of the first mistake', () => {
    expect(() =>
      parseNotificationLines('{"event_type":"mars","identifier":{}}\n{"event_type":1,"identifier":{}}', 'standard input'),
    ).toThrow('standard input line 2: event_type must be a non-empty string');
  });
});

describe('naming the failures of aviso notify --file', () => {
  const lines = [1, 2, 4, 5, 6, 9].map((line) => ({ line, item: { eventType: 'mars', identifier: {} } }));
  const failed = (index: number, reason: NotifyFailed['reason'], message: string, extra: Partial<NotifyFailed> = {}): NotifyFailed => ({
    index,
    stored: false,
    reason,
    code: undefined,
    message,
    requestId: undefined,
    ...extra,
  });

  it('names each refused notification alone, and a failed batch and the notifications not sent after it as one range each', () => {
    const reports = failureReports(
      [
        failed(0, 'refused', "Required field 'step' missing for notify operation", {
          code: 'INVALID_NOTIFICATION_REQUEST',
          requestId: 'r-1',
        }),
        failed(1, 'refused', "Required field 'step' missing for notify operation", {
          code: 'INVALID_NOTIFICATION_REQUEST',
          requestId: 'r-1',
        }),
        failed(2, 'failed', 'HTTP 500: Failed to store notification', { code: 'NOTIFICATION_STORAGE_FAILED', requestId: 'r-2' }),
        failed(3, 'failed', 'HTTP 500: Failed to store notification', { code: 'NOTIFICATION_STORAGE_FAILED', requestId: 'r-2' }),
        failed(4, 'not_sent', 'not sent: an earlier batch failed'),
        failed(5, 'not_sent', 'not sent: an earlier batch failed'),
      ],
      lines,
    );
    expect(reports).toEqual([
      "line 1: Required field 'step' missing for notify operation (INVALID_NOTIFICATION_REQUEST, request id r-1)",
      "line 2: Required field 'step' missing for notify operation (INVALID_NOTIFICATION_REQUEST, request id r-1)",
      'lines 4 to 5: HTTP 500: Failed to store notification (NOTIFICATION_STORAGE_FAILED, request id r-2)',
      'lines 6 to 9: not sent: an earlier batch failed',
    ]);
  });

  it('says a notification whose batch got no answer may have been stored', () => {
    expect(failureReports([failed(5, 'unanswered', 'POST x failed: socket hang up')], lines)).toEqual([
      'line 9: POST x failed: socket hang up; the server may have stored it',
    ]);
  });
});
