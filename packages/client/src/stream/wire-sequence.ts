import { HistoryGapError } from '../errors.js';
import type { HistoryGapNotice } from '../types.js';

/**
 * What one connection accepts from the wire, by sequence (docs/design/rules/client.md §3): a
 * sequence at or below the last accepted one is a repeat and dropped (a resume asks from the last
 * handed one, so the server may send it again). On an unfiltered watch, whose sequences are
 * consecutive, a jump past the next one is a history gap (`HistoryGapError`), unless the server
 * said so first with a `history_gap` covering the skipped sequences (D42). A `sequence_reset`
 * (D41) starts the count again before 1: the new numbering's 1, 2, … are new notifications, not
 * repeats of the old ones.
 */
export class WireSequence {
  private last: number | undefined;
  /** The last sequence of the `history_gap`s said since the last accepted notification and adjoining it. */
  private announcedThrough: number | undefined;

  constructor(private readonly consecutive: boolean) {}

  /** The highest sequence accepted since the last `restart`. */
  get lastAccepted(): number | undefined {
    return this.last;
  }

  /** A new connection resumes after `after` (undefined: nothing to compare with yet). */
  restart(after: number | undefined): void {
    this.last = after;
    this.announcedThrough = undefined;
  }

  historyGap(gap: HistoryGapNotice): void {
    // Only a loss that adjoins what was accepted (or an earlier said loss) explains a jump.
    const reach = this.announcedThrough ?? this.last;
    if (reach !== undefined && gap.firstSequence > reach + 1) return;
    this.announcedThrough = Math.max(this.announcedThrough ?? gap.lastSequence, gap.lastSequence);
  }

  sequenceReset(): void {
    this.restart(0);
  }

  /** `true` for a notification to deliver, `false` for a repeat; throws on an unexplained jump of a consecutive watch. */
  accept(sequence: number): boolean {
    const last = this.last;
    if (last !== undefined && sequence <= last) return false;
    if (this.consecutive && last !== undefined && sequence !== last + 1) {
      const explained = this.announcedThrough !== undefined && sequence <= this.announcedThrough + 1;
      if (!explained) throw new HistoryGapError({ kind: 'sequence_jump', expected: last + 1, observed: sequence });
    }
    this.last = sequence;
    this.announcedThrough = undefined;
    return true;
  }
}
