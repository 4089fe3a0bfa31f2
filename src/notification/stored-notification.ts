/**
 * The stored notification model (docs/design/rules/backends.md §2): what notify stores and both
 * backends give back. It sits below the schema, filter and backend layers, which all read it, so
 * that none of them has to import the backend contract for its shape.
 */

/** Message headers written by notify and returned verbatim (docs/design/rules/backends.md §2.2, D7). */
export type Metadata = Readonly<Record<string, string>>;

export const METADATA_KEYS = {
  spatialBbox: 'spatial_bbox',
  spatialGeometry: 'spatial_geometry',
  spatialPointCloud: 'spatial_point_cloud',
  /** D7: the full canonical identifier as sorted compact JSON, next to the reference's headers. */
  identifier: 'aviso_identifier',
} as const;

export interface StoredNotification {
  /**
   * Backend sequence, ≥ 1, numbered per stream base on both backends (D28): dense from 1 in
   * memory, the stream sequence on JetStream.
   */
  readonly sequence: number;
  /** Wire topic exactly as published. */
  readonly topic: string;
  /** Stored payload text (notify stores compact JSON, `null` when absent). */
  readonly payload: string;
  /** Storage time in nanoseconds since the epoch (ms resolution in memory). */
  readonly timestampNs: bigint;
  readonly metadata?: Metadata;
}

export interface NotificationToStore {
  readonly topic: string;
  readonly payload: string;
  readonly metadata?: Metadata;
}
