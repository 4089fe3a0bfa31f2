/** A committed resume cursor (the aviso client's `Checkpoint`). */
export interface Checkpoint {
  /** Sequence of the last fully processed notification. */
  readonly lastCommittedSequence: number;
  /** `<event_type>@<sequence>`, for humans reading the file; never consulted on resume. */
  readonly lastEventId: string | null;
}

/**
 * Where watches keep their cursors, keyed by the resume key (`resumeKey`). `put` is monotonic: a
 * checkpoint at or below the stored sequence is a no-op.
 */
export interface StateStore {
  get(key: string): Promise<Checkpoint | undefined>;
  put(key: string, checkpoint: Checkpoint): Promise<void>;
  /**
   * The resume-key recipe (`key_format_version`) this store's keys use, when it is not the
   * default: a state file keeps the version it was created with, so a watch computes its key with
   * that one.
   */
  keyFormatVersion?(): Promise<number>;
}
