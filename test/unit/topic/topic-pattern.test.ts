import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TopicDecodeError, decodeTopic, encodeTopic } from '../../../src/topic/percent-codec.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';

const pattern = (display: string) => new TopicPattern(display.split('.'));

describe('TopicPattern.coarseSubject', () => {
  it.each([
    ['diss.FOO.*.od.*.*.*.*.*.*', 'diss.FOO.>'],
    ['diss.FOO.E1.od.*.*.*.*.*.*', 'diss.FOO.E1.od.>'],
    ['diss.*.*.*.*.*.*.*.*.*', 'diss.>'],
    ['diss.FOO.E1.od.0001.g.20260706.0000.enfo.1', 'diss.FOO.E1.od.0001.g.20260706.0000.enfo.>'],
    ['polygon.*.1200', 'polygon.>'],
    ['mars', 'mars.>'],
  ])('derives %s → %s', (display, coarse) => {
    expect(pattern(display).coarseSubject).toBe(coarse);
  });

  it('re-encodes literal tokens in the prefix', () => {
    expect(new TopicPattern(['mars', 'a.b', '*']).coarseSubject).toBe('mars.a%2Eb.>');
  });
});

describe('TopicPattern.matches', () => {
  it('matches equal tokens and wildcards', () => {
    expect(pattern('polygon.*.1200').matches('polygon.20250706.1200')).toBe(true);
  });

  it('requires the same number of tokens', () => {
    expect(pattern('polygon.*').matches('polygon.20250706.1200')).toBe(false);
  });

  it('compares decoded values case-sensitively', () => {
    expect(new TopicPattern(['mars', 'a.b']).matches(encodeTopic(['mars', 'a.b']))).toBe(true);
    expect(pattern('mars.OD').matches('mars.od')).toBe(false);
  });

  it('never matches a topic that fails to decode', () => {
    expect(pattern('mars.*').matches('mars.%ZZ')).toBe(false);
  });

  it('agrees with decoding the whole topic and comparing tokens', () => {
    // Wire topics from a small alphabet so that equal tokens, escapes and broken escapes are common.
    const wireToken = fc.stringMatching(/^(?:[ab*]|%2[Ee5A]|%3E|%41|%[Zz]|%)*$/, { maxLength: 6 });
    const wireTopic = fc.array(wireToken, { minLength: 1, maxLength: 4 }).map((tokens) => tokens.join('.'));
    const patternTokens = fc.array(fc.constantFrom('*', 'a', 'b', 'a.b', 'A', '%', ''), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(patternTokens, wireTopic, (tokens, wire) => {
        const byDecoding = (() => {
          try {
            return new TopicPattern(tokens).matchesTokens(decodeTopic(wire));
          } catch (error) {
            if (error instanceof TopicDecodeError) return false;
            throw error;
          }
        })();
        expect(new TopicPattern(tokens).matches(wire)).toBe(byDecoding);
      }),
      { numRuns: 5000 },
    );
  });

  it('shows wildcards in the display form and encodes them on the wire', () => {
    const p = pattern('polygon.*.1200');
    expect(p.display).toBe('polygon.*.1200');
    expect(p.wire).toBe('polygon.%2A.1200');
  });
});
