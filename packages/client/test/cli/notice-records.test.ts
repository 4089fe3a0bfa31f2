import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noticeRecord } from '../../src/cli/commands/notice-records.js';
import { textRecord } from '../../src/cli/log.js';
import type { HistoryGapNotice, SequenceResetNotice } from '../../src/index.js';

const AT = new Date('2026-05-22T12:19:15.333Z');
const DOC = readFileSync(join(import.meta.dirname, '../../../../docs/cli.md'), 'utf8');

const gap: HistoryGapNotice = {
  type: 'history_gap',
  firstSequence: 1,
  lastSequence: 1,
  lost: 1,
  scope: 'request',
  message: '1 notification of this request in sequence 1 is no longer stored',
  frame: {},
};
const reset: SequenceResetNotice = {
  type: 'sequence_reset',
  requestedSequence: 4,
  lastSequence: 1,
  message:
    "Sequence 4 is beyond this stream's last sequence 1: its numbering was reset, so the stream starts again from its first sequence",
  frame: {},
};

const terminalLine = (record: ReturnType<typeof noticeRecord>): string =>
  textRecord({ at: AT, level: 'warn', body: record.body, attributes: record.attributes }, false);

describe('the WARN records of a history gap and a sequence reset (docs/cli.md "History gaps and resets")', () => {
  it('are the lines docs/cli.md shows', () => {
    expect(DOC).toContain(terminalLine(noticeRecord('ad-hoc', gap)).trimEnd());
    expect(DOC).toContain(terminalLine(noticeRecord('ad-hoc', reset)).trimEnd());
  });
  it("say an unknown count as null, and make the server's text safe for a terminal", () => {
    const record = noticeRecord('mars-od', {
      ...gap,
      lost: null,
      scope: 'stream',
      message: 'gone, see https://user:pw@x.example/p \u001b[2J',
    });
    expect(record.attributes).toMatchObject({ lost: null, scope: 'stream', message: 'gone, see [URL omitted] \\u{1b}[2J' });
    expect(terminalLine(record)).toContain(' lost=null scope=stream ');
  });
});
