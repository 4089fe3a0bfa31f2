import { describe, expect, it } from 'vitest';
import { HistoryGapError, type HistoryGapNotice } from '../../src/index.js';
import { WireSequence } from '../../src/stream/wire-sequence.js';

const gap = (firstSequence: number, lastSequence: number): HistoryGapNotice => ({
  type: 'history_gap',
  firstSequence,
  lastSequence,
  lost: null,
  scope: 'stream',
  message: 'm',
  frame: {},
});

/** Feeds sequences; returns the ones delivered, or the gap that ended the watch. */
function feed(wire: WireSequence, sequences: readonly (number | HistoryGapNotice | 'reset')[]): number[] {
  const delivered: number[] = [];
  for (const item of sequences) {
    if (item === 'reset') wire.sequenceReset();
    else if (typeof item === 'number') {
      if (wire.accept(item)) delivered.push(item);
    } else wire.historyGap(item);
  }
  return delivered;
}

describe('what one connection accepts from the wire, by sequence', () => {
  it('drops repeats at or below the last accepted sequence, from the resume baseline on', () => {
    const wire = new WireSequence(false);
    wire.restart(3);
    expect(feed(wire, [2, 3, 5, 5, 4, 9])).toEqual([5, 9]);
    expect(wire.lastAccepted).toBe(9);
  });

  it('lets a filtered watch jump (its ids skip the notifications it did not select)', () => {
    const wire = new WireSequence(false);
    expect(feed(wire, [1, 7, 40])).toEqual([1, 7, 40]);
  });

  it("ends a consecutive (unfiltered) watch at an unexplained jump, as the aviso client's GapGuard does", () => {
    const wire = new WireSequence(true);
    wire.restart(3);
    expect(() => feed(wire, [4, 6])).toThrow(new HistoryGapError({ kind: 'sequence_jump', expected: 5, observed: 6 }));
  });

  it('lets a consecutive watch jump over what a history_gap said was lost, and only that', () => {
    const wire = new WireSequence(true);
    wire.restart(3);
    expect(feed(wire, [gap(4, 9), 10, 11])).toEqual([10, 11]);
    // The explanation covers one jump: the next one is unexplained again.
    expect(() => feed(wire, [13])).toThrow(HistoryGapError);
    // A gap that does not start at the next sequence leaves the sequences before it unexplained.
    const later = new WireSequence(true);
    later.restart(3);
    expect(() => feed(later, [gap(6, 9), 10])).toThrow(new HistoryGapError({ kind: 'sequence_jump', expected: 4, observed: 10 }));
    // Losses said in two frames with nothing delivered between them explain one jump together.
    const twice = new WireSequence(true);
    twice.restart(3);
    expect(feed(twice, [gap(4, 5), gap(6, 9), 10])).toEqual([10]);
  });

  it('after a sequence_reset, takes the new numbering from 1 instead of dropping it as repeats', () => {
    const wire = new WireSequence(true);
    wire.restart(3);
    expect(feed(wire, ['reset', 1, 2, 3, 4])).toEqual([1, 2, 3, 4]);
    const filtered = new WireSequence(false);
    filtered.restart(50);
    expect(feed(filtered, ['reset', 2, 7])).toEqual([2, 7]);
  });
});
