import { describe, expect, it } from 'vitest';
import { MAX_STREAM_NAME_BYTES, streamNameBytes, streamNameOf, streamNameOfTopic } from '../../../src/topic/stream-name.js';
import { encodeTopic } from '../../../src/topic/percent-codec.js';

describe('stream names (D28, D33)', () => {
  it('upper-cases the encoded base, as JetStream names its streams', () => {
    expect(streamNameOf('mars')).toBe('MARS');
    expect(streamNameOf('Mars')).toBe('MARS');
    expect(streamNameOf('a.b c')).toBe('A%2EB%20C');
  });

  it('gives a wire topic the stream of its base, bare-base topics included', () => {
    for (const tokens of [['mars'], ['mars', 'od'], ['Mars', 'a.b', '*'], ['a.b', 'x']]) {
      expect(streamNameOfTopic(encodeTopic(tokens))).toBe(streamNameOf(tokens[0] as string));
    }
  });

  it('measures the name in UTF-8 bytes against the 255-byte JetStream limit', () => {
    expect(MAX_STREAM_NAME_BYTES).toBe(255);
    expect(streamNameBytes('é'.repeat(100))).toBe(200);
    expect(streamNameBytes('.'.repeat(100))).toBe(300);
  });
});
