import fc from 'fast-check';
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

/** One step on a queue: frames queued at a later time, joined to the last mark, taken, or all cleared. */
const step = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('add' as const), after: fc.nat(2), frames: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('join' as const), frames: fc.integer({ min: 1, max: 2 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('take' as const), share: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const) }) },
);

describe('QueueAges against a model queue', () => {
  it('reports the age of the oldest frame of a queue of dated frames after any adds, joins and takes', () => {
    // A plain list of one date per frame is the model; the marks must always agree with it.
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200, size: 'max' }), (steps) => {
        const ages = new QueueAges();
        const model: number[] = [];
        let now = 1_000;
        for (const next of steps) {
          if (next.kind === 'add') {
            now += next.after;
            ages.add(now, next.frames);
            for (let i = 0; i < next.frames; i++) model.push(now);
          } else if (next.kind === 'join') {
            if (model.length === 0) continue;
            ages.join(next.frames);
            const last = model[model.length - 1] as number;
            for (let i = 0; i < next.frames; i++) model.push(last);
          } else if (next.kind === 'take') {
            const frames = Math.round(next.share * model.length);
            ages.take(frames);
            model.splice(0, frames);
          } else {
            ages.clear();
            model.length = 0;
          }
          expect(ages.oldestAge(now + 5)).toBe(model.length === 0 ? 0 : now + 5 - (model[0] as number));
        }
      }),
      { numRuns: 300 },
    );
  });
});
