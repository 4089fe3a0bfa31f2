import { describe, expect, it } from 'vitest';
import { listenerStart } from '../../src/cli/commands/listen.js';
import { hintFor, listenerFailureLines, sanitizeServerText } from '../../src/cli/commands/listener-errors.js';
import { RETRY_REPORT_INTERVAL_MS, RetryReporter } from '../../src/cli/commands/retry-reporter.js';
import { humaniseTimestamp } from '../../src/cli/commands/simple.js';
import type { ListenerSpec } from '../../src/cli/listeners.js';
import { HttpError, TriggerFailedError } from '../../src/index.js';

const listener = (extra: Partial<ListenerSpec> = {}): ListenerSpec => ({
  name: undefined,
  event: 'mars',
  identifiers: {},
  triggers: [],
  fromId: undefined,
  fromDate: undefined,
  ...extra,
});

describe('where a listener starts', () => {
  it('--from N and from_id: N are both "after N"; --from wins over the listener\'s own start', () => {
    expect(listenerStart(listener(), { kind: 'sequence', sequence: 41 })).toEqual({ fromId: 42 });
    expect(listenerStart(listener({ fromId: 41 }), undefined)).toEqual({ fromId: 42 });
    expect(listenerStart(listener({ fromId: 0 }), undefined)).toEqual({ fromId: 1 });
    expect(listenerStart(listener({ fromId: 41 }), { kind: 'sequence', sequence: 7 })).toEqual({ fromId: 8 });
    expect(listenerStart(listener({ fromDate: '2026-05-01T00:00:00Z' }), undefined)).toEqual({ fromDate: '2026-05-01T00:00:00Z' });
    expect(listenerStart(listener(), undefined)).toBeUndefined();
  });
});

describe('retry lines', () => {
  it('shows the first retry at once and at most one per 5 s, counting the ones in between', () => {
    let now = 1_000;
    const reporter = new RetryReporter('mars-od', () => now);
    expect(reporter.retry('HTTP 503', 120.4)).toEqual({
      body: 'Retrying listener connection',
      attributes: { 'event.name': 'cli.listener.retrying', listener: 'mars-od', cause: 'HTTP 503', delay_ms: 120 },
    });
    now += 1_000;
    expect(reporter.retry('HTTP 503', 300)).toBeUndefined();
    now += RETRY_REPORT_INTERVAL_MS - 1_001;
    expect(reporter.retry('HTTP 503', 600)).toBeUndefined();
    now += 1;
    expect(reporter.retry('transport error: fetch failed (ECONNREFUSED)', 900)?.attributes).toMatchObject({ suppressed: 2, delay_ms: 900 });
    now += RETRY_REPORT_INTERVAL_MS;
    expect(reporter.retry('HTTP 500', 10)?.attributes).not.toHaveProperty('suppressed');
  });
});

describe('a failed listener on stderr', () => {
  it('is an error line, a hint when one applies, and "Other listeners continue."', () => {
    const error = new HttpError(400, JSON.stringify({ code: 'UNKNOWN_EVENT_TYPE', message: "unknown event type 'marz'" }), 'req-1');
    expect(listenerFailureLines('mars-od', error)).toEqual([
      "Error in listener mars-od: HTTP 400: unknown event type 'marz' (request id req-1)",
      expect.stringMatching(/^ {2}Hint: the event type is not configured on the server; run `aviso schema list`/),
      '  Other listeners continue.',
    ]);
    expect(listenerFailureLines('x', new Error('boom'))).toEqual(['Error in listener x: boom', '  Other listeners continue.']);
    expect(hintFor(new TriggerFailedError('webhook', 'webhook trigger for mars@1 failed: webhook trigger got HTTP 404'))).toMatch(
      /receiver rejected/,
    );
    expect(hintFor(new HttpError(401, '', undefined))).toMatch(/credentials are missing/);
  });
  it('omits URLs and escapes control characters in text from the server', () => {
    expect(
      sanitizeServerText("Field 'step' outside allowed range [0, 100]. Check (http://user:pass@host/p?token=x#f) or '//u:p@h/q'."),
    ).toBe("Field 'step' outside allowed range [0, 100]. Check [URL omitted] or [URL omitted]");
    const shown = sanitizeServerText('ok\u001b[31m red\r gone\nnext\tcol');
    expect(shown).toBe('ok\\u{1b}[31m red\\u{d} gone\nnext\tcol');
  });
});

describe('the notify confirmation line', () => {
  it('shows processed_at for a person', () => {
    expect(humaniseTimestamp('2026-05-21T21:13:45.558918505+00:00')).toBe('2026-05-21 21:13:45 UTC');
    expect(humaniseTimestamp('2026-05-21T21:13:45Z')).toBe('2026-05-21 21:13:45 UTC');
    expect(humaniseTimestamp('2026-05-21T21:13:45.5+02:00')).toBe('2026-05-21 21:13:45+02:00');
    expect(humaniseTimestamp('yesterday')).toBe('yesterday');
  });
});
