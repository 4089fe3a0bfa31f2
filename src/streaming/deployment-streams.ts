import type { DeploymentAnswer, DeploymentExchange } from '../backend/deployment-exchange.js';
import type { OpenStream, OpenStreamDirectory, PlainJson, ProcessStreams, StreamsOfDeployment } from './open-streams.js';

/** The questions this module asks and answers on the exchange. */
const LIST = 'streams.list';
const CLOSE = 'streams.close';

/**
 * The open streams of every process of the deployment (D49): this process's own directory and
 * the answers of the others, gathered by the exchange within its bound. A close is tried here
 * first and asked of the others only when this process does not hold the stream.
 *
 * Answers travel as plain JSON (an open stream holds nothing else); a stream in an answer is rebuilt field by field, so one from a process of another version is
 * shown in this version's shape, and an answer that is not a list of streams counts as no answer.
 */
export function streamsAcrossDeployment(directory: OpenStreamDirectory, exchange: DeploymentExchange): StreamsOfDeployment {
  exchange.answer(LIST, () => JSON.stringify({ streams: directory.list() }));
  exchange.answer(CLOSE, (body) => {
    const request = readCloseRequest(body);
    return request === undefined ? undefined : JSON.stringify({ closed: directory.close(request.id, request.closedBy) });
  });
  return {
    async list() {
      const answered: ProcessStreams[] = [{ process: exchange.process, streams: directory.list() }];
      const gathered = await exchange.ask(LIST, '{}');
      const notAnswering = [...gathered.notAnswering];
      for (const answer of gathered.answers) {
        const streams = readStreams(answer.body);
        if (streams === undefined) notAnswering.push(answer.process);
        else answered.push({ process: answer.process, streams });
      }
      return { answered, notAnswering, clusterUnreachable: gathered.unreachable };
    },
    async close(id, closedBy) {
      if (directory.close(id, closedBy)) return { closedOn: exchange.process };
      const closedThere = (answer: DeploymentAnswer): boolean => readClosed(answer.body);
      const gathered = await exchange.ask(CLOSE, JSON.stringify({ id, closed_by: closedBy }), { settles: closedThere });
      const holder = gathered.answers.find(closedThere);
      return holder ? { closedOn: holder.process } : { closedOn: undefined, notAnswering: [...gathered.notAnswering] };
    },
  };
}

type Parsed = PlainJson | undefined;

function parsed(body: string): Parsed {
  try {
    return JSON.parse(body) as PlainJson;
  } catch {
    return undefined;
  }
}

function isObject(value: Parsed): value is { [key: string]: PlainJson } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readCloseRequest(body: string): { id: string; closedBy: string | null } | undefined {
  const request = parsed(body);
  if (!isObject(request) || typeof request.id !== 'string') return undefined;
  const closedBy = request.closed_by;
  if (closedBy !== null && typeof closedBy !== 'string') return undefined;
  return { id: request.id, closedBy };
}

function readClosed(body: string): boolean {
  const answer = parsed(body);
  return isObject(answer) && answer.closed === true;
}

/** The streams of a list answer, or undefined when it is not one; a malformed stream is left out. */
export function readStreams(body: string): OpenStream[] | undefined {
  const answer = parsed(body);
  if (!isObject(answer) || !Array.isArray(answer.streams)) return undefined;
  const streams: OpenStream[] = [];
  for (const item of answer.streams) {
    const stream = isObject(item) ? readOpenStream(item) : undefined;
    if (stream) streams.push(stream);
  }
  return streams;
}

function readOpenStream(item: { [key: string]: PlainJson }): OpenStream | undefined {
  const { id, route, method, event_type, filter, topic_pattern, user, client_address, opened_at, phase } = item;
  const lastSequence = item.last_sequence === null ? null : numberOf(item.last_sequence);
  const delivered = numberOf(item.delivered);
  const bufferedBytes = numberOf(item.buffered_bytes);
  const lagMs = numberOf(item.lag_ms);
  if (
    typeof id !== 'string' ||
    (route !== 'watch' && route !== 'replay') ||
    (method !== 'GET' && method !== 'POST') ||
    typeof event_type !== 'string' ||
    !isObject(filter) ||
    typeof topic_pattern !== 'string' ||
    (user !== null && typeof user !== 'string') ||
    typeof client_address !== 'string' ||
    typeof opened_at !== 'string' ||
    (phase !== 'replaying' && phase !== 'live') ||
    lastSequence === undefined ||
    delivered === undefined ||
    bufferedBytes === undefined ||
    lagMs === undefined
  ) {
    return undefined;
  }
  return {
    id,
    route,
    method,
    event_type,
    filter,
    topic_pattern,
    user,
    client_address,
    opened_at,
    phase,
    last_sequence: lastSequence,
    delivered,
    buffered_bytes: bufferedBytes,
    lag_ms: lagMs,
  };
}

function numberOf(value: Parsed): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
