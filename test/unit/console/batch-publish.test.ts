import { describe, expect, it } from 'vitest';
import { batchSummary, failedItems, isBatchAnswer, parsePastedBatch } from '../../../console/src/batch-publish.js';

describe('the console: publish several', () => {
  it('reads a JSON array, or one JSON object per line', () => {
    expect(parsePastedBatch(' [{"a": 1}, {"b": 2}] ')).toEqual({ items: [{ a: 1 }, { b: 2 }] });
    expect(parsePastedBatch('{"a": 1}\n\n{"b": 2}\n')).toEqual({ items: [{ a: 1 }, { b: 2 }] });
    // A single object is one item, as one line.
    expect(parsePastedBatch('{"a": 1}')).toEqual({ items: [{ a: 1 }] });
  });

  it('says why nothing is sent: empty text, an empty array, bad JSON with its line', () => {
    expect(parsePastedBatch('  ')).toEqual({ problem: 'Paste a JSON array of notifications, or one JSON object per line.' });
    expect(parsePastedBatch('[]')).toEqual({ problem: 'The array is empty.' });
    expect(parsePastedBatch('[{"a": 1},')).toMatchObject({ problem: expect.stringMatching(/^Not valid JSON: /) as unknown });
    expect(parsePastedBatch('{"a": 1}\n{oops}')).toMatchObject({
      problem: expect.stringMatching(/^Line 2 is not valid JSON: /) as unknown,
    });
  });

  it('summarises an answer and names each item that was not stored', () => {
    const answer = {
      request_id: 'r1',
      stored: 1,
      failed: 1,
      results: [
        { index: 0, status: 'success', request_id: 'r1', processed_at: '2026-12-05T00:00:00Z' },
        { index: 1, code: 'INVALID_NOTIFICATION_REQUEST', message: "Required field 'date' missing for notify operation" },
      ],
    };
    expect(isBatchAnswer(answer)).toBe(true);
    expect(isBatchAnswer({ code: 'SERVICE_UNAVAILABLE', message: 'down' })).toBe(false);
    expect(batchSummary(answer)).toBe('1 stored, 1 not stored');
    expect(failedItems(answer.results)).toEqual(["#1 INVALID_NOTIFICATION_REQUEST: Required field 'date' missing for notify operation"]);
    expect(batchSummary({ results: answer.results })).toBe('1 stored, 1 not stored');
  });
});
