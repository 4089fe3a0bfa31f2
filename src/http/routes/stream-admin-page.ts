import { compareCodePoints } from '../../json/canonical-json.js';
import type { OpenStream, StreamsOfDeployment } from '../../streaming/open-streams.js';
import { echo } from '../../text/echo.js';
import { invalidQueryError } from './error-bodies.js';

/** `GET /api/v1/admin/streams`'s query and answer (D49), apart from the route so both can be tested alone. */

const DEFAULT_STREAMS_LIMIT = 100;
const MAX_STREAMS_LIMIT = 1000;
const PARAMETERS = ['event_type', 'user', 'limit'];

export interface StreamsQuery {
  readonly eventType: string | undefined;
  readonly user: string | undefined;
  readonly limit: number;
}

/**
 * The list's filters from the URL: `event_type` and `user` compared exactly, `limit` a decimal
 * from 1 to MAX_STREAMS_LIMIT. A parameter given twice, or one the list does not know (a typo
 * would otherwise list everything), is a 400 INVALID_QUERY.
 */
export function parseStreamsQuery(url: string): StreamsQuery {
  const question = url.indexOf('?');
  const params = new URLSearchParams(question < 0 ? '' : url.slice(question + 1));
  for (const key of new Set(params.keys())) {
    if (!PARAMETERS.includes(key)) {
      throw invalidQueryError(`Unknown query parameter '${echo(key)}'. Allowed: event_type, user, limit`);
    }
    if (params.getAll(key).length > 1) throw invalidQueryError(`Query parameter '${key}' is given more than once`);
  }
  const limitText = params.get('limit');
  let limit = DEFAULT_STREAMS_LIMIT;
  if (limitText !== null) {
    limit = /^[0-9]{1,7}$/.test(limitText) ? Number(limitText) : 0;
    if (limit < 1 || limit > MAX_STREAMS_LIMIT) {
      throw invalidQueryError(`limit must be an integer from 1 to ${MAX_STREAMS_LIMIT}, got '${echo(limitText)}'`);
    }
  }
  return { eventType: params.get('event_type') ?? undefined, user: params.get('user') ?? undefined, limit };
}

/** An open stream as the answer lists it: `process` after `id`, then the stream's own fields. */
export type ListedStream = { readonly id: string; readonly process: string } & Omit<OpenStream, 'id'>;

export interface StreamsPage {
  readonly streams: ListedStream[];
  readonly total: number;
  readonly truncated: boolean;
  readonly counts: Record<string, number>;
  readonly processes: { readonly answered: string[]; readonly not_answering: string[]; readonly cluster_unreachable: boolean };
}

type Gathered = Awaited<ReturnType<StreamsOfDeployment['list']>>;

/**
 * The answer's body (without `request_id`), fields in the documented order: the matching streams
 * by `opened_at`, then id, at most `limit`; `total` all that match; `counts` per event type over
 * every open stream, filters not applied.
 */
export function streamsPage(gathered: Gathered, query: StreamsQuery): StreamsPage {
  const all: ListedStream[] = [];
  for (const { process, streams } of gathered.answered) {
    for (const { id, ...rest } of streams) all.push({ id, process, ...rest });
  }
  const byType = new Map<string, number>();
  for (const stream of all) byType.set(stream.event_type, (byType.get(stream.event_type) ?? 0) + 1);
  const counts: Record<string, number> = {};
  for (const type of [...byType.keys()].sort(compareCodePoints)) counts[type] = byType.get(type) as number;

  const matching = all.filter(
    (stream) =>
      (query.eventType === undefined || stream.event_type === query.eventType) && (query.user === undefined || stream.user === query.user),
  );
  matching.sort((a, b) => compareCodePoints(a.opened_at, b.opened_at) || compareCodePoints(a.id, b.id));
  const streams = matching.slice(0, query.limit);
  return {
    streams,
    total: matching.length,
    truncated: matching.length > streams.length,
    counts,
    processes: {
      answered: gathered.answered.map((answer) => answer.process),
      not_answering: [...gathered.notAnswering],
      cluster_unreachable: gathered.clusterUnreachable,
    },
  };
}
