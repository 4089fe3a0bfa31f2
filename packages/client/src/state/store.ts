/** A committed resume cursor (the aviso client's `Checkpoint`). */
export interface Checkpoint {
  /** Sequence of the last fully processed notification. */
  readonly lastCommittedSequence: number;
  /** `<event_type>@<sequence>`, for humans reading the file; never consulted on resume. */
  readonly lastEventId: string | null;
}

/**
 * Where watches keep their cursors, keyed by the resume key (`resumeKey`). `put` is monotonic: a
 * checkpoint at or below the stored sequence is a no-op. `rewind` is the one way back.
 */
export interface StateStore {
  get(key: string): Promise<Checkpoint | undefined>;
  put(key: string, checkpoint: Checkpoint): Promise<void>;
  /**
   * Replaces the key's checkpoint even when it is lower than the stored one. A watch calls it only
   * when the server said its numbering was reset (`sequence_reset`, docs/streaming.md "A start
   * beyond the stream"): the stored sequence belongs to the old numbering, and kept, it would hide
   * the new numbering's notifications up to it. A store without it keeps the old cursor: nothing
   * is lost, but a later run is told of the reset again and may deliver some notifications twice.
   */
  rewind?(key: string, checkpoint: Checkpoint): Promise<void>;
  /**
   * The resume-key recipe (`key_format_version`) this store's keys use, when it is not the
   * default: a state file keeps the version it was created with, so a watch computes its key with
   * that one.
   */
  keyFormatVersion?(): Promise<number>;
}
