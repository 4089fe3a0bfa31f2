import { describe, expect, it } from 'vitest';
import {
  AnswerAssembly,
  answerParts,
  askNumberOf,
  partOf,
  presenceOf,
  questionOf,
  questionSubject,
  replySubject,
  senderHeaders,
  senderOf,
} from '../../../../src/backend/jetstream/admin-messages.js';

/** The core NATS messages of the deployment exchange (D49): subjects, headers, answers in parts. */
describe('admin messages', () => {
  it('keeps every subject under %AVISO_ADMIN and reads back what it wrote', () => {
    expect(questionSubject('streams.list')).toBe('%AVISO_ADMIN.ask.streams.list');
    expect(questionOf('%AVISO_ADMIN.ask.streams.close')).toBe('streams.close');
    expect(questionOf('%AVISO_LIVE.ask.x')).toBeUndefined();
    expect(replySubject('t0k', 12)).toBe('%AVISO_ADMIN.reply.t0k.12');
    expect(askNumberOf('t0k', '%AVISO_ADMIN.reply.t0k.12')).toBe(12);
    expect(askNumberOf('t0k', '%AVISO_ADMIN.reply.other.12')).toBeUndefined();
    expect(askNumberOf('t0k', '%AVISO_ADMIN.reply.t0k.x')).toBeUndefined();
    const headers = senderHeaders('host.example:42', 'joining');
    expect(senderOf(headers)).toBe('host.example:42');
    expect(presenceOf(headers)).toBe('joining');
    expect(presenceOf(senderHeaders('h:1'))).toBeUndefined();
    expect(senderOf(undefined)).toBeUndefined();
  });

  it('sends a small answer in one part', () => {
    const parts = answerParts('h:1', '{"streams":[]}', 1_048_576);
    expect(parts).toHaveLength(1);
    expect(partOf(parts[0]!.headers)).toEqual([1, 1]);
    expect(new AnswerAssembly().add('h:1', [1, 1], parts[0]!.data)).toBe('{"streams":[]}');
  });

  it('cuts an answer over max_payload into parts that fit and puts them back together, multi-byte text included', () => {
    const body = JSON.stringify({ streams: Array.from({ length: 2_000 }, (_, i) => ({ id: `é-${i}`, user: 'ünïcode ✓' })) });
    const maxPayload = 8_192;
    const parts = answerParts('h:1', body, maxPayload);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) expect(part.data.length).toBeLessThanOrEqual(maxPayload);
    const assembly = new AnswerAssembly();
    // Out of order and with a repeated part: still the same text once the last missing one arrives.
    const order = [...parts.keys()].reverse();
    const results = order.map((index) => assembly.add('h:1', partOf(parts[index]!.headers)!, parts[index]!.data));
    assembly.add('h:1', partOf(parts[0]!.headers)!, parts[0]!.data);
    expect(results.slice(0, -1).every((result) => result === undefined)).toBe(true);
    expect(results.at(-1)).toBe(body);
  });

  it('refuses a malformed part header', () => {
    const headers = senderHeaders('h:1');
    for (const value of ['0/1', '2/1', '1', 'a/b', '1/1000000']) {
      headers.set('Aviso-Admin-Part', value);
      expect(partOf(headers)).toBeUndefined();
    }
  });
});
