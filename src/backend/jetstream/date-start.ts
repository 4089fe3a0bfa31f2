import type { MsgRequest, StreamInfo } from '@nats-io/jetstream';
import { readRfc3339 } from '../../time/instant-text.js';
import type { NatsClients } from './nats-link.js';

/**
 * The first sequence of a stream at or after which `filter`'s notifications were stored at or
 * after `atNs`, found by a binary search over sequences with `next_by_subj` reads (one round trip
 * each, about log₂ of the stream's length).
 *
 * Used instead of a consumer with `opt_start_time` on memory-storage streams: nats-server 2.9
 * crashes (a nil dereference in `memStore.GetSeqFromTime`) when a memory stream holding gaps (a
 * deleted or superseded notification) is asked for a start time, so a `from_date` replay there
 * would take the whole NATS server down.
 */
export async function firstSequenceStoredFrom(clients: NatsClients, info: StreamInfo, filter: string, atNs: bigint): Promise<number> {
  const { jsm } = clients;
  const name = info.config.name;
  let lo = Math.max(1, info.state.first_seq);
  let hi = info.state.last_seq + 1;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    // STREAM.MSG.GET takes `next_by_subj` with `seq` (nats-server ≥ 2.9); nats.js passes the request
    // through, though its type for this call names only `seq` and `last_by_subj`.
    const request = { seq: mid, next_by_subj: filter } as unknown as MsgRequest;
    const found = await jsm.streams.getMessage(name, request);
    if (!found) {
      hi = mid;
      continue;
    }
    const storedNs = readRfc3339(found.timestamp) ?? BigInt(found.time.getTime()) * 1_000_000n;
    // Nothing is held between `mid` and what was found: `mid` starts the same range.
    if (storedNs >= atNs) hi = mid;
    else lo = found.seq + 1;
  }
  return lo;
}

/** Whether a date start on this stream must be resolved by `firstSequenceStoredFrom`. */
export function needsDateSearch(info: StreamInfo): boolean {
  return info.config.storage === 'memory';
}
