import { DecodeError } from './errors.js';

/**
 * The open streams of a deployment, as `GET /api/v1/admin/streams` lists them, and the answer of
 * `DELETE /api/v1/admin/streams/{id}` (docs/api.md). The wire's snake_case fields become
 * camelCase here, as everywhere else in the library.
 */

/** One open watch or replay on one server process. */
export interface OpenStreamInfo {
  /** The request id of the request that opened the stream (`X-Request-ID`); the id to close it by. */
  readonly id: string;
  /** The process holding it: `<hostname>:<pid>`. */
  readonly process: string;
  readonly route: 'watch' | 'replay';
  readonly method: 'GET' | 'POST';
  readonly eventType: string;
  /** The canonical filter, as the server matches it. */
  readonly filter: Readonly<Record<string, unknown>>;
  readonly topicPattern: string;
  /** The authenticated user, or `null` (authentication disabled, or a public stream read anonymously). */
  readonly user: string | null;
  readonly clientAddress: string;
  /** RFC 3339, UTC, milliseconds. */
  readonly openedAt: string;
  readonly phase: 'replaying' | 'live';
  /** The sequence of the last notification queued for the client, or `null` before the first. */
  readonly lastSequence: number | null;
  /** Notifications queued for the client so far. */
  readonly delivered: number;
  /** Bytes held for the client and not yet taken by the kernel (the stream's queue and Node's socket buffer). */
  readonly bufferedBytes: number;
  /** How long the oldest frame in the stream's queue has waited to be handed to the socket, in milliseconds (0 when none waits). */
  readonly lagMs: number;
}

export interface StreamListFilter {
  readonly eventType?: string;
  readonly user?: string;
  /** At most this many streams in the answer: 1 to 1000, the server's default 100. */
  readonly limit?: number;
}

export interface StreamList {
  /** Oldest first (then by id); at most the limit. */
  readonly streams: readonly OpenStreamInfo[];
  /** The streams matching the filters on every process that answered. */
  readonly total: number;
  /** `total` is more than `streams.length`: raise the limit or narrow the filters. */
  readonly truncated: boolean;
  /** Open streams per event type over every stream of the answering processes, whatever the filters. */
  readonly counts: Readonly<Record<string, number>>;
  /**
   * The processes whose streams are in the answer, and the ones known to run that did not answer in
   * time. `clusterUnreachable`: the answering process could not ask the others at all (its NATS
   * account may not use the admin subjects), so only its own streams are listed.
   */
  readonly processes: {
    readonly answered: readonly string[];
    readonly notAnswering: readonly string[];
    readonly clusterUnreachable: boolean;
  };
  readonly requestId: string;
}

export interface StreamClosed {
  readonly success: boolean;
  readonly message: string;
  readonly streamId: string;
  /** The process that held the stream and closed it. */
  readonly process: string;
  readonly requestId: string;
}

type Json = Record<string, unknown>;

function fail(what: string): never {
  throw new DecodeError(`admin streams: unexpected response shape (${what})`);
}

function text(o: Json, key: string): string {
  const value = o[key];
  return typeof value === 'string' ? value : fail(key);
}

function count(o: Json, key: string): number {
  const value = o[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : fail(key);
}

function oneOf<T extends string>(o: Json, key: string, values: readonly T[]): T {
  const value = o[key];
  return values.includes(value as T) ? (value as T) : fail(key);
}

function object(value: unknown, what: string): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : fail(what);
}

function strings(value: unknown, what: string): string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : fail(what);
}

function openStream(value: unknown): OpenStreamInfo {
  const o = object(value, 'streams[]');
  const user = o.user;
  const lastSequence = o.last_sequence;
  return {
    id: text(o, 'id'),
    process: text(o, 'process'),
    route: oneOf(o, 'route', ['watch', 'replay']),
    method: oneOf(o, 'method', ['GET', 'POST']),
    eventType: text(o, 'event_type'),
    filter: object(o.filter, 'filter'),
    topicPattern: text(o, 'topic_pattern'),
    user: user === null || typeof user === 'string' ? user : fail('user'),
    clientAddress: text(o, 'client_address'),
    openedAt: text(o, 'opened_at'),
    phase: oneOf(o, 'phase', ['replaying', 'live']),
    lastSequence: lastSequence === null || typeof lastSequence === 'number' ? lastSequence : fail('last_sequence'),
    delivered: count(o, 'delivered'),
    bufferedBytes: count(o, 'buffered_bytes'),
    lagMs: count(o, 'lag_ms'),
  };
}

/** The body of a `200` listing, checked field by field so a caller can rely on the types. */
export function decodeStreamList(body: Json, requestId: string): StreamList {
  if (!Array.isArray(body.streams)) fail('streams');
  const counts = object(body.counts, 'counts');
  for (const key of Object.keys(counts)) count(counts, key);
  const processes = object(body.processes, 'processes');
  return {
    streams: body.streams.map(openStream),
    total: count(body, 'total'),
    truncated: typeof body.truncated === 'boolean' ? body.truncated : fail('truncated'),
    counts: counts as Record<string, number>,
    processes: {
      answered: strings(processes.answered, 'processes.answered'),
      notAnswering: strings(processes.not_answering, 'processes.not_answering'),
      clusterUnreachable: processes.cluster_unreachable === true,
    },
    requestId,
  };
}

export function decodeStreamClosed(body: Json, requestId: string): StreamClosed {
  return {
    success: typeof body.success === 'boolean' ? body.success : fail('success'),
    message: text(body, 'message'),
    streamId: text(body, 'stream_id'),
    process: text(body, 'process'),
    requestId,
  };
}

/** The query of a listing: only the filters given, in a fixed order. */
export function streamListQuery(filter: StreamListFilter): string {
  const query = new URLSearchParams();
  if (filter.eventType !== undefined) query.set('event_type', filter.eventType);
  if (filter.user !== undefined) query.set('user', filter.user);
  if (filter.limit !== undefined) query.set('limit', String(filter.limit));
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}
