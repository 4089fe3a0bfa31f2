import { describe, expect, it } from 'vitest';
import { MAX_TOPIC_BYTES, patternSubjectBytes, topicTooLongMessage } from '../../../src/topic/topic-limit.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';

describe('patternSubjectBytes (D33)', () => {
  it('counts the pattern as a NATS subject: encoded tokens, `*` for wildcards, dots between', () => {
    expect(patternSubjectBytes(new TopicPattern(['mars']))).toBe(4);
    expect(patternSubjectBytes(new TopicPattern(['mars', '*', 'od']))).toBe('mars.*.od'.length);
    // `.` is sent as `%2E` (3 bytes), `é` is 2 UTF-8 bytes.
    expect(patternSubjectBytes(new TopicPattern(['mars', 'a.b', 'é']))).toBe('mars.a%2Eb.'.length + 2);
  });

  it('lies above the limit exactly when the subject would', () => {
    const base = 'mars';
    const fits = new TopicPattern([base, 'x'.repeat(MAX_TOPIC_BYTES - base.length - 1)]);
    expect(patternSubjectBytes(fits)).toBe(MAX_TOPIC_BYTES);
    expect(patternSubjectBytes(new TopicPattern([base, 'x'.repeat(MAX_TOPIC_BYTES - base.length)]))).toBe(MAX_TOPIC_BYTES + 1);
  });

  it('uses the D24 message', () => {
    expect(topicTooLongMessage(3000)).toBe('Identifier values are too long: the topic would be 3000 bytes, the limit is 2048');
  });
});
