import { describe, expect, it } from 'vitest';
import { QueueAges } from '../../../src/streaming/queue-ages.js';

/** The ages behind `lag_ms` of the admin streams list (D49): the oldest queued frame's wait. */

describe('QueueAges', () => {
  it('is 0 with nothing queued, and the age of the oldest frame otherwise', () => {
    const ages = new QueueAges();
    expect(ages.oldestAge(1000)).toBe(0);
    ages.add(1000, 2);
    ages.add(1500, 1);
    expect(ages.oldestAge(1800)).toBe(800);
  });

  it('follows the queue as frames leave it, a mark at a time or in part', () => {
    const ages = new QueueAges();
    ages.add(100, 3);
    ages.join(2); // five frames of 100
    ages.add(200, 1);
    ages.add(300, 4);
    ages.take(4);
    expect(ages.oldestAge(1000)).toBe(900); // one frame of 100 left
    ages.take(1);
    expect(ages.oldestAge(1000)).toBe(800);
    ages.take(2); // the frame of 200 and one of 300
    expect(ages.oldestAge(1000)).toBe(700);
    ages.take(3);
    expect(ages.oldestAge(1000)).toBe(0);
    ages.add(900, 1);
    expect(ages.oldestAge(1000)).toBe(100);
  });

  it('joins frames of the same millisecond to the last mark', () => {
    const ages = new QueueAges();
    ages.add(100, 1);
    ages.add(100, 1);
    ages.add(101, 1);
    ages.take(2);
    expect(ages.oldestAge(200)).toBe(99);
  });

  it('forgets everything when cleared, and never reports a negative age', () => {
    const ages = new QueueAges();
    ages.add(500, 10);
    expect(ages.oldestAge(400)).toBe(0);
    ages.clear();
    expect(ages.oldestAge(1000)).toBe(0);
    expect(() => ages.join(1)).toThrow();
  });

  it('stays exact over many marks taken one by one (the front is compacted)', () => {
    const ages = new QueueAges();
    for (let i = 0; i < 500; i++) ages.add(i, 1);
    for (let i = 0; i < 499; i++) {
      ages.take(1);
      expect(ages.oldestAge(1000)).toBe(1000 - (i + 1));
    }
  });
});
