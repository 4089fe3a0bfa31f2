import { StateStoreError } from '../errors.js';
import { resumeKey } from '../state/resume-key.js';
import type { StateStore } from '../state/store.js';
import type { Identifier, Notification } from '../types.js';

/** A state store's failure as a StateStoreError (kept as it is when it already is one). */
function storeFailure(operation: 'get' | 'put' | 'rewind', error: unknown): StateStoreError {
  return error instanceof StateStoreError
    ? error
    : new StateStoreError(`state store ${operation} failed: ${(error as Error).message}`, { cause: error });
}

/**
 * Where a watch's consumer is (docs/design/rules/client.md §3 "Resume", §4): the last sequence
 * handed over, the last one committed to the state store, and so the sequence a new connection
 * resumes after. Store failures are thrown as `StateStoreError`.
 */
export class WatchCursor {
  /** Highest sequence handed to the consumer; 0 after a sequence reset, until the new numbering's first. */
  private handed: number | undefined;
  private committed: number | undefined;
  /** Handed but not yet committed (with a store): committed when the next one is asked for. */
  private pending: Notification | undefined;
  private key: string | undefined;
  /** The gap baseline before anything is handed: the stored cursor, when it decides the start. */
  private baseline: number | undefined;
  /** A `sequence_reset` came off the wire and the consumer has not met it yet. */
  private resetAhead = false;

  /** `explicitStart`: the request names its start (`from`), which beats a stored cursor. */
  constructor(
    private readonly store: StateStore | undefined,
    private readonly explicitStart: boolean,
  ) {}

  /** Reads the stored cursor (with a store): the key is computed with the store's `key_format_version`. */
  async load(baseUrlInput: string, eventType: string, identifier: Identifier): Promise<void> {
    const store = this.store;
    if (!store) return;
    let version: number | undefined;
    try {
      version = store.keyFormatVersion ? await store.keyFormatVersion() : undefined;
    } catch (error) {
      throw storeFailure('get', error);
    }
    this.key = await resumeKey(baseUrlInput, eventType, identifier, version);
    let checkpoint;
    try {
      checkpoint = await store.get(this.key);
    } catch (error) {
      throw storeFailure('get', error);
    }
    if (checkpoint === undefined) return;
    this.committed = checkpoint.lastCommittedSequence;
    // An explicit start is a rewind: its first sequence is unknown, so only a stored cursor sets the gap baseline.
    if (!this.explicitStart) this.baseline = this.committed;
  }

  /** A stored cursor was found. */
  get hasStoredCursor(): boolean {
    return this.committed !== undefined;
  }

  /** Highest sequence handed so far, in the stream's current numbering. */
  get lastHanded(): number | undefined {
    return this.handed === 0 ? undefined : this.handed;
  }

  /** What a new connection's repeats are recognised against: the last handed sequence, else the stored cursor. */
  get wireBaseline(): number | undefined {
    return this.resetAhead ? 0 : (this.handed ?? this.baseline);
  }

  /**
   * The supervisor queued a `sequence_reset`. Until the consumer meets it, a new connection
   * already resumes in the new numbering (from sequence 1): the server says a reset only while the
   * old position is beyond the new numbering's end, so asking from the old position again could
   * skip the new numbering's first notifications once it passed that position.
   */
  resetQueued(): void {
    this.resetAhead = true;
  }

  handOver(item: Notification): void {
    this.handed = item.sequence;
    if (this.store) this.pending = item;
  }

  /** Commits the last handed notification, if it is not yet. */
  async commitPending(): Promise<void> {
    const item = this.pending;
    if (!this.store || item === undefined || this.key === undefined) return;
    this.pending = undefined;
    if (this.committed !== undefined && item.sequence <= this.committed) return;
    try {
      await this.store.put(this.key, { lastCommittedSequence: item.sequence, lastEventId: `${item.eventType}@${item.sequence}` });
    } catch (error) {
      throw storeFailure('put', error);
    }
    this.committed = item.sequence;
  }

  /**
   * D41: the position belongs to a numbering the server no longer has. The stream replays the new
   * one from its first sequence, so the position becomes "before 1": a reconnect asks for sequence
   * 1, and the stored cursor is moved back deliberately (the one way back, `StateStore.rewind`),
   * so that a later run does not take the new numbering's notifications for ones already handled.
   * Called once the consumer has taken (and the store committed) everything before the reset.
   */
  async moveToNewNumbering(): Promise<void> {
    // Set before the store is written: a reconnect meanwhile resumes in the new numbering.
    this.resetAhead = false;
    this.handed = 0;
    this.pending = undefined;
    if (!this.store || this.key === undefined) return;
    this.committed = 0;
    try {
      await this.store.rewind?.(this.key, { lastCommittedSequence: 0, lastEventId: null });
    } catch (error) {
      throw storeFailure('rewind', error);
    }
  }

  /** The sequence after which a new connection resumes, if any is known. */
  resumeAfter(): number | undefined {
    if (this.resetAhead) return 0;
    if (this.store) {
      if (this.handed !== undefined && (this.committed === undefined || this.handed > this.committed)) {
        // The handed one is not committed yet: resume at it (it is recognised and skipped as a duplicate).
        return this.committed !== undefined ? Math.max(this.committed, this.handed - 1) : this.handed - 1;
      }
      return this.explicitStart && this.handed === undefined ? undefined : this.committed;
    }
    return this.handed;
  }
}
