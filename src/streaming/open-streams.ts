import { hostname } from 'node:os';
import type { StreamEndpoint } from '../schema/watch-identifier.js';
import type { WatchSelection } from '../filter/watch-filter.js';
import { compareCodePoints } from '../json/canonical-json.js';

/**
 * The open streams of this process and of the deployment, as the admin streams list shows them
 * (D49, docs/api.md#get-apiv1adminstreams). The admin route asks a `StreamsOfDeployment`: on the
 * memory backend this process alone (`thisProcessOnly`), on JetStream every process of the
 * deployment over core NATS.
 */

/** JSON as it crosses processes: plain values only, so an answer survives `JSON.stringify` and back. */
export type PlainJson = string | number | boolean | null | PlainJson[] | { [key: string]: PlainJson };

/** The canonical identifier object a stream selects with: what the client asked for, as its topic uses it. */
export interface StreamFilter {
  [field: string]: PlainJson;
}

/** One open stream (its fields in the order of the answer; the route adds `process` after `id`). */
export interface OpenStream {
  /** The stream request's request id. */
  readonly id: string;
  readonly route: StreamEndpoint;
  readonly method: 'GET' | 'POST';
  readonly event_type: string;
  readonly filter: StreamFilter;
  readonly topic_pattern: string;
  /** The authenticated user's name; never a token or credential. */
  readonly user: string | null;
  readonly client_address: string;
  /** RFC 3339 UTC with milliseconds. */
  readonly opened_at: string;
  readonly phase: 'replaying' | 'live';
  /** The sequence of the last notification queued for the client; `null` before the first. */
  readonly last_sequence: number | null;
  /** Notifications queued for the client since the stream opened. */
  readonly delivered: number;
  /** Bytes waiting for the client: the stream's queue and what Node holds for its socket. */
  readonly buffered_bytes: number;
  /** How long the oldest frame of the stream's queue has waited; 0 when the queue is empty. */
  readonly lag_ms: number;
}

/** This process's streams. */
export interface OpenStreamDirectory {
  list(): OpenStream[];
  /** Closes the stream with its close frame; true when this process held it. */
  close(id: string, closedBy: string | null): boolean;
}

export interface ProcessStreams {
  readonly process: string;
  readonly streams: readonly OpenStream[];
}

/** What the admin route asks: the streams of every process that answers, and who did not. */
export interface StreamsOfDeployment {
  list(): Promise<{ answered: ProcessStreams[]; notAnswering: string[]; clusterUnreachable: boolean }>;
  close(id: string, closedBy: string | null): Promise<{ closedOn: string } | { closedOn: undefined; notAnswering: string[] }>;
}

/** How the admin answers name this process: stable for its life, and distinct across hosts. */
export const PROCESS_ID = `${hostname()}:${process.pid}`;

/** The memory backend's deployment: this process alone, which always answers. */
export function thisProcessOnly(directory: OpenStreamDirectory, processId: string): StreamsOfDeployment {
  return {
    list: () =>
      Promise.resolve({ answered: [{ process: processId, streams: directory.list() }], notAnswering: [], clusterUnreachable: false }),
    close: (id, closedBy) =>
      Promise.resolve(directory.close(id, closedBy) ? { closedOn: processId } : { closedOn: undefined, notAnswering: [] }),
  };
}

/**
 * The filter a selection stands for: each constrained field with its canonical value (a
 * constraint as its object), and the spatial filter under the name the request gave it. Fields the
 * request left open are not listed (they are `*` in `topic_pattern`).
 */
export function filterOf(selection: WatchSelection): StreamFilter {
  const filter: StreamFilter = {};
  for (const field of selection.fieldFilters) {
    filter[field.field] = field.kind === 'exact' ? field.value : (JSON.parse(field.source) as PlainJson);
  }
  const { spatial } = selection;
  if (spatial?.kind === 'point_in_polygon') filter.point = [spatial.point[0], spatial.point[1]];
  else if (spatial) filter.polygon = spatial.polygon.canonical.map((pair) => [...pair]);
  return sortedKeys(filter);
}

function sortedKeys(filter: StreamFilter): StreamFilter {
  const sorted: StreamFilter = {};
  for (const key of Object.keys(filter).sort(compareCodePoints)) sorted[key] = filter[key] as PlainJson;
  return sorted;
}
