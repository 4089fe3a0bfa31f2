/** Messages between the bench and the SSE client fleet process (`support/sse-fleet.ts`). */

export interface FleetOpenCommand {
  readonly type: 'open';
  /** `http://host:port` */
  readonly origin: string;
  readonly path: string;
  /** Request bodies and how many streams to open with each, in order. */
  readonly groups: readonly { readonly body: string; readonly count: number }[];
  /** Streams being set up at once. */
  readonly concurrency: number;
  /** Notifications every stream must receive (payload `i` from 0 to n − 1); 0 for idle streams. */
  readonly expectedNotifications: number;
  /**
   * Selective delivery: notification `i` is meant for the one stream whose global index is
   * `targets[i]` (its length is `expectedNotifications`), and only that stream must receive it.
   * Without it every stream must receive every notification.
   */
  readonly targets?: readonly number[];
  /** The global index of this process's first stream, when the streams are spread over several fleets. */
  readonly streamOffset?: number;
  /** Whether `report` also returns every latency sample (to merge percentiles across fleets). */
  readonly keepSamples?: boolean;
  /**
   * `POST` with the group's body (aviso, the bare server; the default), or `GET` with none and
   * `Accept: text/event-stream`, as an EventSource subscribes (Nchan's subscriber location).
   */
  readonly method?: 'GET' | 'POST';
  /**
   * What tells that a stream is open: its first frame (aviso's opening frame; the default), or its
   * first comment line (Nchan writes `: hi` once the subscriber is on its channel, and no frame).
   */
  readonly opening?: 'frame' | 'comment';
  /**
   * How a stream is read: node:http and eventsource-parser (the default), or a bare TCP socket with
   * the bench's own small HTTP and SSE reading (`raw-sse-stream.ts`), which costs the fleet less
   * CPU per frame (the capacity search, where the readers share the cores with the server).
   */
  readonly reader?: 'node-http' | 'raw-socket';
}

/**
 * Starts a new counting window (every stream, no `targets`): from now on notifications
 * `first` … `first + count − 1` must reach every stream, once; counts, latencies and the
 * completion of the window before are forgotten (a stream that ended stays ended).
 */
export interface FleetWindowCommand {
  readonly type: 'window';
  readonly first: number;
  readonly count: number;
}

export interface FleetWindowSet {
  readonly type: 'window_set';
}

export type FleetCommand =
  FleetOpenCommand | FleetWindowCommand | { readonly type: 'progress' } | { readonly type: 'report' } | { readonly type: 'close' };

export interface FleetProgress {
  readonly type: 'progress';
  /** Distinct notifications received so far, summed over streams. */
  readonly received: number;
}

export interface FleetOpened {
  readonly type: 'opened';
  /** Streams that received their opening frame. */
  readonly opened: number;
  readonly failed: number;
  readonly failures: readonly string[];
  readonly elapsedMs: number;
}

export interface FleetReport {
  readonly type: 'report';
  readonly streams: number;
  readonly expectedPerStream: number;
  /** Distinct notifications received, summed over streams. */
  readonly received: number;
  readonly duplicates: number;
  /** Notifications whose payload index was outside 0…expected − 1, or unreadable. */
  readonly unexpected: number;
  /** Sum over streams of expected − distinct received. */
  readonly lost: number;
  readonly streamsWithLoss: number;
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number; readonly mean: number };
  readonly firstReceiveMs: number;
  readonly lastReceiveMs: number;
  /** `connection-closing` reasons seen, and streams that ended without one. */
  readonly closeReasons: Readonly<Record<string, number>>;
  readonly errorFrames: number;
  /** Notifications delivered to a stream they were not meant for (selective delivery only). */
  readonly misdelivered: number;
  /** Every latency sample, ms, when `keepSamples` was asked for. */
  readonly samplesMs?: readonly number[];
}

export interface FleetComplete {
  readonly type: 'complete';
}

export interface FleetClosed {
  readonly type: 'closed';
}
