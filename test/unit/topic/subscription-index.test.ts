import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SubscriptionIndex, type IndexEntry } from '../../../src/topic/subscription-index.js';
import { TopicPattern } from '../../../src/topic/topic-pattern.js';

const tokens = (display: string) => display.split('.');
const values = <T>(entries: readonly IndexEntry<T>[]) => entries.map((entry) => entry.value);

describe('SubscriptionIndex.match', () => {
  it('finds a literal pattern by its exact tokens only', () => {
    const index = new SubscriptionIndex<string>();
    index.add(tokens('mars.od.0001'), 'a');
    index.add(tokens('mars.od.0002'), 'b');
    expect(values(index.match(tokens('mars.od.0001')))).toEqual(['a']);
    expect(values(index.match(tokens('mars.od.0003')))).toEqual([]);
  });

  it('lets * stand for any one token, in any position', () => {
    const index = new SubscriptionIndex<string>();
    index.add(tokens('mars.*.0001'), 'middle');
    index.add(tokens('*.od.0001'), 'first');
    index.add(tokens('mars.od.*'), 'last');
    index.add(tokens('*.*.*'), 'all');
    expect(values(index.match(tokens('mars.od.0001')))).toEqual(['middle', 'first', 'last', 'all']);
    expect(values(index.match(tokens('mars.xx.0001')))).toEqual(['middle', 'all']);
  });

  it('requires the same token count: a pattern never matches a longer or shorter topic', () => {
    const index = new SubscriptionIndex<string>();
    index.add(tokens('mars.*'), 'two');
    index.add(tokens('mars.*.*'), 'three');
    expect(values(index.match(tokens('mars.od')))).toEqual(['two']);
    expect(values(index.match(tokens('mars.od.1')))).toEqual(['three']);
    expect(values(index.match(tokens('mars.od.1.2')))).toEqual([]);
    expect(values(index.match(tokens('mars')))).toEqual([]);
  });

  it('matches a one-token pattern (empty key_order) with the bare-base topic only (D19)', () => {
    const index = new SubscriptionIndex<string>();
    index.add(['alerts'], 'bare');
    index.add(['alerts', '*'], 'longer');
    expect(values(index.match(['alerts']))).toEqual(['bare']);
    expect(values(index.match(['alerts', 'x']))).toEqual(['longer']);
    expect(values(index.match(['other']))).toEqual([]);
  });

  it('treats a topic token that is literally * as a value only a wildcard selects (S3)', () => {
    const index = new SubscriptionIndex<string>();
    index.add(['mars', 'a'], 'literal');
    index.add(['mars', '*'], 'wildcard');
    expect(values(index.match(['mars', '*']))).toEqual(['wildcard']);
  });

  it('compares decoded tokens exactly: case, dots and empty tokens are values', () => {
    const index = new SubscriptionIndex<string>();
    index.add(['mars', 'a.b'], 'dotted');
    index.add(['mars', ''], 'empty');
    index.add(['mars', 'OD'], 'upper');
    expect(values(index.match(['mars', 'a.b']))).toEqual(['dotted']);
    expect(values(index.match(['mars', '']))).toEqual(['empty']);
    expect(values(index.match(['mars', 'od']))).toEqual([]);
  });

  it('returns the values of several nodes in registration order', () => {
    const index = new SubscriptionIndex<number>();
    index.add(tokens('a.*'), 0);
    index.add(tokens('a.b'), 1);
    index.add(tokens('*.b'), 2);
    index.add(tokens('a.*'), 3);
    index.add(tokens('a.b'), 4);
    expect(values(index.match(tokens('a.b')))).toEqual([0, 1, 2, 3, 4]);
  });

  it('keeps one entry per registration of the same pattern', () => {
    const index = new SubscriptionIndex<string>();
    const first = index.add(tokens('a.b'), 'same');
    index.add(tokens('a.b'), 'same');
    expect(index.match(tokens('a.b'))).toHaveLength(2);
    first.remove();
    expect(index.match(tokens('a.b'))).toHaveLength(1);
  });

  it('returns a snapshot that later additions and removals leave as it was', () => {
    const index = new SubscriptionIndex<string>();
    const a = index.add(tokens('x.y'), 'a');
    const snapshot = index.match(tokens('x.y'));
    index.add(tokens('x.y'), 'b');
    a.remove();
    expect(values(snapshot)).toEqual(['a']);
    expect(snapshot[0]?.active).toBe(false);
    expect(values(index.match(tokens('x.y')))).toEqual(['b']);
  });
});

describe('SubscriptionIndex removal', () => {
  it('is idempotent: true on the first call only, and size counts live entries', () => {
    const index = new SubscriptionIndex<string>();
    const entry = index.add(tokens('a.b'), 'v');
    expect(index.size).toBe(1);
    expect(entry.remove()).toBe(true);
    expect(entry.remove()).toBe(false);
    expect(index.size).toBe(0);
    expect(entry.active).toBe(false);
  });

  it('prunes the trie nodes a removal leaves empty and keeps those still used', () => {
    const index = new SubscriptionIndex<string>();
    const deep = index.add(tokens('a.*.c.d'), 'deep');
    expect(index.nodeCount()).toBe(4);
    const shallow = index.add(tokens('a.*'), 'shallow');
    const other = index.add(tokens('a.b.*'), 'other');
    expect(index.nodeCount()).toBe(6); // a, a.*, a.*.c, a.*.c.d, a.b, a.b.*
    deep.remove();
    expect(index.nodeCount()).toBe(4);
    expect(values(index.match(tokens('a.b')))).toEqual(['shallow']);
    other.remove();
    expect(index.nodeCount()).toBe(2);
    shallow.remove();
    expect(index.nodeCount()).toBe(0);
  });

  it('keeps one key per wildcard-free pattern, however many watchers share it, and drops it with the last', () => {
    const index = new SubscriptionIndex<string>();
    const first = index.add(tokens('a.b.c'), 'first');
    const second = index.add(tokens('a.b.c'), 'second');
    index.add(tokens('a.b'), 'shorter');
    expect(index.nodeCount()).toBe(2);
    first.remove();
    expect(values(index.match(tokens('a.b.c')))).toEqual(['second']);
    second.remove();
    expect(index.nodeCount()).toBe(1);
    expect(index.match(tokens('a.b.c'))).toEqual([]);
  });

  it('never confuses tokens containing NUL with the tokens they would join to', () => {
    const index = new SubscriptionIndex<string>();
    index.add(['a', 'b'], 'two tokens');
    index.add(['a\u0000b'], 'one token');
    index.add(['x\u0000', 'y'], 'nul inside');
    expect(values(index.match(['a', 'b']))).toEqual(['two tokens']);
    expect(values(index.match(['a\u0000b']))).toEqual(['one token']);
    expect(values(index.match(['x', '', 'y']))).toEqual([]);
    expect(values(index.match(['x\u0000', 'y']))).toEqual(['nul inside']);
  });

  it('leaves no node behind after any sequence of additions and removals', () => {
    const token = fc.constantFrom('*', 'a', 'b', 'a.b', '', '\u0000');
    const pattern = fc.array(token, { minLength: 1, maxLength: 5 });
    fc.assert(
      fc.property(fc.array(pattern, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 30 }), (patterns, order) => {
        const index = new SubscriptionIndex<number>();
        const entries = patterns.map((p, k) => index.add(p, k));
        // Remove in a random order (order[] picks among those still present), then the rest.
        const remaining = [...entries];
        for (const pick of order) {
          if (remaining.length === 0) break;
          const [entry] = remaining.splice(pick % remaining.length, 1);
          entry?.remove();
          expect(index.size).toBe(remaining.length);
        }
        for (const entry of remaining) entry.remove();
        expect(index.size).toBe(0);
        expect(index.nodeCount()).toBe(0);
      }),
      { numRuns: 1000 },
    );
  });

  it('clear removes every entry, returns them in registration order and empties the trie', () => {
    const index = new SubscriptionIndex<string>();
    const a = index.add(tokens('a.*'), 'a');
    index.add(tokens('b'), 'b');
    expect(values(index.clear())).toEqual(['a', 'b']);
    expect(a.active).toBe(false);
    expect(index.size).toBe(0);
    expect(index.nodeCount()).toBe(0);
    expect(index.match(tokens('a.x'))).toEqual([]);
  });
});

describe('SubscriptionIndex against TopicPattern.matchesTokens', () => {
  it('matches exactly the patterns matchesTokens accepts, in registration order', () => {
    const token = fc.constantFrom('*', '*', 'a', 'b', 'a.b', '%', '', 'A', '\u0000', 'a\u0000');
    const patterns = fc.array(fc.array(token, { minLength: 1, maxLength: 4 }), { maxLength: 25 });
    const topic = fc.array(fc.constantFrom('a', 'b', 'a.b', '%', '', 'A', '*', '\u0000', 'a\u0000'), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(patterns, fc.array(topic, { minLength: 1, maxLength: 10 }), (patternTokens, topics) => {
        const index = new SubscriptionIndex<number>();
        patternTokens.forEach((p, k) => index.add(p, k));
        for (const candidate of topics) {
          const expected = patternTokens.flatMap((p, k) => (new TopicPattern(p).matchesTokens(candidate) ? [k] : []));
          expect(values(index.match(candidate))).toEqual(expected);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
