import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AuthUser } from '../../auth/auth-user.js';
import type { ReadAuthorizationPlugin } from '../../auth/read-plugin.js';
import type { StreamAccess } from '../../auth/stream-access.js';
import type { EventSchema } from '../../schema/event-schema.js';
import type { WatchSelection } from '../../filter/watch-filter.js';
import { IdentifierError } from '../../schema/identifier-error.js';
import type { SchemaRegistry } from '../../schema/schema-registry.js';
import { checkSpatialShape, prepareWatch, type StreamEndpoint } from '../../schema/watch-identifier.js';
import { LATEST, type ReplayEndRequest, type StartCursorRequest } from '../../streaming/stream-range.js';
import type { OpenOutcome, StreamSupervisor } from '../../streaming/stream-supervisor.js';
import type { StreamSlot } from '../../streaming/stream-slots.js';
import { StreamAdmission } from './stream-admission.js';
import { addLogContext } from '../../logging/logger.js';
import type { AvisoMetrics } from '../../metrics/aviso-metrics.js';
import { takeOverForStream } from '../transport/http-stream-sink.js';
import { recordResponseHead } from './request-telemetry.js';
import { RouteStreamTelemetry } from './stream-telemetry.js';
import { asRefusal, streamSetupFailureAnswer } from './error-answers.js';
import { authError, unknownEventTypeError, validationError } from './error-bodies.js';
import { parseNotificationRequest, type NotificationRequest } from './request-body.js';
import { endPointNotSupported, hasEndPoint, resolveEndPoint, resolveStartCursor } from './request-range.js';
import { requestLog } from './request-log.js';
import { parseLastEventId, parseStreamQuery } from './stream-query.js';
import { ROUTE_DOCS } from './route-docs.js';
import { MAX_TOPIC_BYTES, patternSubjectBytes, topicTooLongMessage } from '../../topic/topic-limit.js';

export interface StreamRouteDeps {
  readonly registry: SchemaRegistry;
  readonly streams: StreamSupervisor;
  readonly access: StreamAccess;
  /** Read-authorization plugins by name, for schemas listing them in `auth.plugins` (ECPDS). */
  readonly readPlugins: ReadonlyMap<string, ReadAuthorizationPlugin>;
  /** `watch_endpoint.max_historical_notifications`, the cap when a schema sets none. */
  readonly defaultReplayCap: number;
  readonly metrics: AvisoMetrics;
}

/**
 * `POST /api/v1/watch` and `POST /api/v1/replay`, and their GET forms for a browser's
 * `EventSource` (docs/design/rules/browser.md §1): the query becomes the same request, served the same way.
 */
export function registerStreamRoutes(app: FastifyInstance, deps: StreamRouteDeps): void {
  const admission = new StreamAdmission(deps.streams, deps.metrics);
  const serve = async (...[request, reply, endpoint, body, browser]: ServeArguments): Promise<void> => {
    const slot = admission.admit(request, endpoint);
    let opened = false;
    try {
      opened = await serveStream(deps, slot, request, reply, endpoint, body, browser);
    } finally {
      // An open stream gives its slot back when it is released (StreamSupervisor).
      if (!opened) slot.release();
    }
  };
  for (const endpoint of ['watch', 'replay'] as const) {
    app.post(`/api/v1/${endpoint}`, { schema: ROUTE_DOCS[endpoint] }, async (request, reply) => {
      const body = parseNotificationRequest(endpoint, request.body as Buffer | undefined);
      await serve(request, reply, endpoint, body, undefined);
    });
    // No HEAD form: a HEAD would set a stream up only to send no body.
    app.get(`/api/v1/${endpoint}`, { schema: ROUTE_DOCS[`${endpoint}Get`], exposeHeadRoute: false }, async (request, reply) => {
      const body = parseStreamQuery(endpoint, request.url);
      await serve(request, reply, endpoint, body, { lastEventId: request.headers['last-event-id'] });
    });
  }
}

type ServeArguments = [FastifyRequest, FastifyReply, StreamEndpoint, NotificationRequest, BrowserStream | undefined];

/** What a GET stream adds to a request: the header `EventSource` resumes with. */
interface BrowserStream {
  readonly lastEventId: string | string[] | undefined;
}

/**
 * A parsed request, POST or GET, once it holds a place under the stream limit, in the order the
 * reference answers: the strict-mode gate, the read check, validation, the read plugins, then the
 * stream's setup and start. True when a stream was opened.
 */
async function serveStream(
  deps: StreamRouteDeps,
  slot: StreamSlot,
  request: FastifyRequest,
  reply: FastifyReply,
  endpoint: StreamEndpoint,
  body: NotificationRequest,
  browser: BrowserStream | undefined,
): Promise<boolean> {
  if (deps.registry.rejectsEventType(body.event_type)) {
    throw unknownEventTypeError(body.event_type, deps.registry.eventTypes);
  }
  const schema = deps.registry.get(body.event_type);
  deps.access.checkRead(schema, request.authUser);
  const eventType = deps.registry.eventTypeLabel(body.event_type);
  addLogContext(requestLog(request), { event_type: eventType });
  // Read with the schemas that validate the request: a reload between here and the opening frame must not change it.
  const schemaVersion = deps.registry.version;
  const validated = validateStreamRequest(deps.registry, endpoint, body);
  // The URL is judged first, as it is; then `Last-Event-ID`, which replaces only the URL's start.
  const resumeAfter = browser && parseLastEventId(endpoint, browser.lastEventId, body.event_type);
  const { selection } = validated;
  let { cursor, end } = validated;
  const topic = selection.pattern.display;
  addLogContext(requestLog(request), { topic });
  await runReadPlugins(deps, schema, request.authUser, selection, requestLog(request));
  if (resumeAfter !== undefined) {
    // Past `to_id` already: nothing is left, and `from_id = n + 1` would fail the to_id check.
    if (end.kind === 'sequence' && resumeAfter >= end.requested) {
      await reply.code(204).send();
      return false;
    }
    // Only the start changes: the selection, and so what the plugins judged, stays the same.
    ({ cursor, end } = asValidationErrors(endpoint, () => resolveRange(endpoint, resumedRequest(body, resumeAfter))));
  }
  const telemetry = new RouteStreamTelemetry(deps.metrics, endpoint, eventType, request.authUser?.username);
  let outcome: OpenOutcome;
  try {
    const opening = {
      endpoint,
      slot,
      requestId: request.id,
      logger: requestLog(request),
      credentialsExpireAt: request.authUser?.expiresAt,
      selection,
      schema,
      cursor,
      end,
      quota: schema?.maxHistoricalNotifications ?? deps.defaultReplayCap,
      telemetry,
      schemaVersion,
      // The admin streams list (D49): the user's name only, never a credential.
      owner: { user: request.authUser?.username ?? null, clientAddress: request.ip },
      ...(browser ? { browser: { eventType: body.event_type } } : {}),
      ...(resumeAfter !== undefined ? { resumeAfter } : {}),
    };
    outcome = await deps.streams.open(opening, () => takeOverForStream(reply));
  } catch (error) {
    telemetry.released();
    throw streamSetupFailureAnswer(error, topic);
  }
  if (outcome === 'finished') {
    await reply.code(204).send();
    return false;
  }
  recordResponseHead(request, reply, deps.metrics);
  request.log.info({ event_name: `api.${endpoint}.stream.established` }, 'Stream established');
  return true;
}

/** `Last-Event-ID: <event_type>@<n>` is the last event the browser saw: resume at `from_id = n + 1`, whatever start the URL gives. */
function resumedRequest(body: NotificationRequest, lastDelivered: bigint): NotificationRequest {
  const { from_date: _fromDate, ...rest } = body;
  return { ...rest, from_id: String(lastDelivered + 1n) };
}

/**
 * The read plugins the schema lists (ECPDS), run only for a schema that requires auth, with a
 * user, and last: after authentication, the read-role check and the request's validation, so a
 * plugin sees only a valid request from a user who may read the stream.
 */
async function runReadPlugins(
  deps: StreamRouteDeps,
  schema: EventSchema | undefined,
  user: AuthUser | undefined,
  selection: WatchSelection,
  logger: Logger,
): Promise<void> {
  const names = schema?.auth?.required ? (schema.auth.plugins ?? []) : [];
  if (!schema || !user || names.length === 0) return;
  const exact = new Map<string, string>();
  for (const filter of selection.fieldFilters) if (filter.kind === 'exact') exact.set(filter.field, filter.value);
  for (const name of names) {
    const plugin = deps.readPlugins.get(name);
    // Startup refuses a schema that names an unknown plugin; a missing one here would silently widen access.
    if (!plugin) throw authError(500, 'Server configuration error');
    await plugin.check({
      eventType: schema.eventType,
      user,
      isAdmin: deps.access.isAdmin(user),
      canonicalValue: (field) => exact.get(field),
      logger,
    });
  }
}

/** A request's start and end fields, as every stream request has them. */
interface RangeFields {
  readonly from_id?: string;
  readonly from_date?: string;
  readonly to_id?: string;
  readonly to_date?: string;
}

/**
 * The request's validation, in the reference's order, so that a request with several faults gets
 * the same first message: the spatial shape, the start cursor, the end point (validated on a
 * replay, refused on a watch), the identifier, then the topic's length (D33).
 */
function validateStreamRequest(
  registry: SchemaRegistry,
  endpoint: StreamEndpoint,
  body: Parameters<typeof prepareWatch>[2] & RangeFields,
): { selection: WatchSelection; cursor: StartCursorRequest; end: ReplayEndRequest } {
  return asValidationErrors(endpoint, () => {
    const point = checkSpatialShape(body.identifier);
    const { cursor, end } = resolveRange(endpoint, body);
    const selection = prepareWatch(registry, endpoint, body, point);
    // D33: last, once the identifier is known to be valid, and before any backend call.
    const bytes = patternSubjectBytes(selection.pattern);
    if (bytes > MAX_TOPIC_BYTES) throw new IdentifierError(topicTooLongMessage(bytes));
    return { selection, cursor, end };
  });
}

/** The start cursor and, on a replay, the end point; a watch refuses an end point. */
function resolveRange(endpoint: StreamEndpoint, body: RangeFields): { cursor: StartCursorRequest; end: ReplayEndRequest } {
  const cursor = resolveStartCursor(endpoint, body.from_id, body.from_date);
  if (endpoint === 'replay') return { cursor, end: resolveEndPoint(cursor, body.to_id, body.to_date) };
  if (hasEndPoint(body)) throw validationError(endpoint, endPointNotSupported('/watch'));
  return { cursor, end: LATEST };
}

/** The validation failures as the endpoint's 400 (`INVALID_WATCH_REQUEST` or `INVALID_REPLAY_REQUEST`). */
function asValidationErrors<T>(endpoint: StreamEndpoint, validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    throw asRefusal(error, endpoint);
  }
}
