import type { StoredNotification } from '../backend.js';
import type { SequenceJournal } from './sequence-journal.js';

interface Pending {
  readonly streamName: string;
  readonly stored: StoredNotification;
  readonly settle: (error?: Error) => void;
}

/**
 * Notifications stored during one turn of the event loop, made visible together at its end: the
 * last sequence of each stream base is written once to the journal (D40), when there is one, then
 * each notification, in sequence order, becomes its base's history bound and reaches the live
 * watchers, and its publish resolves. Nobody hears of a sequence before it is written, and a turn
 * that stores many notifications writes each base once (one write per notification cost about a
 * tenth of a notify's CPU under load). Answering the turn's notifies together, after their
 * processing, also halved the CPU of a notify under load (measured by `bench/ab.ts`: the
 * responses' socket writes cost far less outside the request's own callbacks).
 */
export class VisibilityBatch {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly journal: SequenceJournal | undefined,
    private readonly reveal: (streamName: string, stored: StoredNotification) => void,
    /** The journal could not be written: the notification is taken back (never acknowledged). */
    private readonly takeBack: (streamName: string, stored: StoredNotification) => void,
  ) {}

  /** Resolves once `stored` is written and visible; rejects when the journal cannot be written. */
  add(streamName: string, stored: StoredNotification): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ streamName, stored, settle: (error) => (error ? reject(error) : resolve()) });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    const lastOfStream = new Map<string, number>();
    for (const { streamName, stored } of batch) lastOfStream.set(streamName, stored.sequence);
    try {
      if (this.journal) for (const [streamName, sequence] of lastOfStream) this.journal.issued(streamName, sequence);
    } catch (error) {
      for (const { streamName, stored, settle } of batch) {
        this.takeBack(streamName, stored);
        settle(error instanceof Error ? error : new Error(String(error)));
      }
      return;
    }
    for (const { streamName, stored, settle } of batch) {
      this.reveal(streamName, stored);
      settle();
    }
  }
}
