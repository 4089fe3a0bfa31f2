import Type from 'typebox';
import type { StreamEndpoint } from '../../schema/watch-identifier.js';
import { OPTIONAL_AUTH, REQUIRED_AUTH, SSE_RESPONSE, ref } from './api-schemas.js';

/** The OpenAPI description of each route (docs/design/rules/operations.md §4.4), kept out of the handlers. */

const error = (description: string) => ({ ...ref('ErrorResponse'), description });
const authErrors = {
  401: error('Authentication required or credentials invalid'),
  403: error('Not allowed'),
  503: error('Authentication service unavailable'),
};
/** Routes that change state also refuse pages on other origins (docs/security.md, "Cross-site writes"). */
const writeErrors = {
  ...authErrors,
  403: error(
    "FORBIDDEN: not allowed; CROSS_ORIGIN_REQUEST_REFUSED: sent by a page on an origin that is neither the server's own (application.base_url, application.additional_origins) nor allowed by application.cors.allowed_origins (an Origin header, or Sec-Fetch-Site cross-site / same-site without one)",
  ),
};

/** Stream routes are also held to the stream limit (D44). */
const streamErrors = {
  400: error('Invalid request'),
  ...authErrors,
  500: error('Stream setup failed'),
  503: error(
    'SERVICE_UNAVAILABLE: authentication service unavailable; TOO_MANY_STREAMS: the process holds application.max_streams streams, retry after Retry-After seconds',
  ),
};

/** The GET streams' query (docs/design/rules/browser.md §1): the POST body's fields, `identifier` as JSON text. */
function streamQuery(endpoint: StreamEndpoint) {
  const text = (description: string) => Type.Optional(Type.String({ description }));
  return Type.Object(
    {
      event_type: Type.String({ description: 'A configured event type (or any name when strict mode is off).' }),
      identifier: text('The identifier object as URL-encoded JSON text, e.g. {"class":"od"}; omitted means {}.'),
      from_id: text('Inclusive start sequence; overridden by Last-Event-ID.'),
      from_date: text('Inclusive start time; overridden by Last-Event-ID.'),
      ...(endpoint === 'replay' ? { to_id: text('Inclusive end sequence.'), to_date: text('Inclusive end time.') } : {}),
    },
    { additionalProperties: false, description: 'Any other parameter (a token included) is a 400 UNKNOWN_FIELD.' },
  );
}

const LAST_EVENT_ID_HEADER = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      description: 'Sent by EventSource when it reconnects: <event_type>@<n> resumes at from_id = n + 1.',
    }),
  ),
});

/** docs/api.md "Idempotent notify": the request header of notify and the answers it adds. */
const IDEMPOTENCY_KEY_HEADER = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Makes a retry safe: a retry with the same key (and event type) inside idempotency.window is answered from the first success and stores nothing. An RFC 8941 sf-string or the bare text, 1 to 255 visible ASCII characters, sent once; otherwise 400 INVALID_IDEMPOTENCY_KEY.',
    }),
  ),
});
const IDEMPOTENT_REPLAYED = {
  'idempotent-replayed': {
    type: 'string',
    enum: ['true', 'false'],
    description: 'Only on requests with an Idempotency-Key: true when answered from the first success of the key (nothing stored now).',
  },
};

export const ROUTE_DOCS = {
  health: {
    tags: ['health'],
    summary: 'Liveness',
    response: { 200: ref('HealthResponse') },
  },
  ready: {
    tags: ['health'],
    summary: 'Readiness: whether the backend is connected (503 while NATS is down or reconnecting)',
    response: {
      200: { ...ref('ReadyResponse'), description: 'The backend is connected' },
      503: { ...ref('NotReadyResponse'), description: 'The backend is disconnected (JetStream: NATS down or reconnecting)' },
    },
  },
  home: {
    tags: ['general'],
    summary: 'Landing page',
    response: { 200: { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } } },
  },
  schemaList: {
    tags: ['schema'],
    summary: 'Every configured event type (public view)',
    response: { 200: ref('SchemaListResponse') },
  },
  schemaOne: {
    tags: ['schema'],
    summary: 'One event type (public view)',
    params: Type.Object({ event_type: Type.String() }),
    response: { 200: ref('SchemaResponse'), 404: ref('SchemaNotFoundResponse') },
  },
  notify: {
    tags: ['notification'],
    summary: 'Publish one notification',
    body: ref('NotificationRequest'),
    headers: IDEMPOTENCY_KEY_HEADER,
    security: OPTIONAL_AUTH,
    response: {
      200: { ...ref('NotificationResponse'), headers: IDEMPOTENT_REPLAYED },
      400: error('Invalid request; INVALID_IDEMPOTENCY_KEY: a malformed Idempotency-Key, or one sent twice'),
      ...writeErrors,
      409: {
        ...error('IDEMPOTENCY_KEY_IN_PROGRESS: the first request with this Idempotency-Key is still being processed'),
        headers: { 'retry-after': { type: 'string', description: 'Seconds to wait before retrying: 1' } },
      },
      413: error('Body too large, or too large for the broker'),
      422: error('IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was already used for a different notification'),
      500: error('Storage failed'),
    },
  },
  notifyBatch: {
    tags: ['notification'],
    summary: 'Publish several notifications in one request, each judged as a single notify would be',
    description:
      "A JSON array of notification objects, or with Content-Type application/x-ndjson one object per line (blank lines ignored). The valid ones are stored in request order; the answer lists every notification's outcome in that order. Limits: notification_endpoint.max_batch_items and max_batch_bytes.",
    body: {
      content: {
        'application/json': { schema: Type.Array(ref('NotificationRequest'), { minItems: 1 }) },
        'application/x-ndjson': { schema: { type: 'string', description: 'One NotificationRequest object per line' } },
      },
    },
    headers: Type.Object({
      'idempotency-key': Type.Optional(
        Type.String({
          description:
            "Covers the whole batch: a retry of the batch with the same key inside idempotency.window answers each notification stored the first time from that success (nothing stored again) and stores only the others. The form of notify's key; otherwise 400 INVALID_IDEMPOTENCY_KEY.",
        }),
      ),
    }),
    security: OPTIONAL_AUTH,
    response: {
      200: { ...ref('NotificationBatchResponse'), description: 'Every notification stored', headers: IDEMPOTENT_REPLAYED },
      207: { ...ref('NotificationBatchResponse'), description: 'Some stored, some not: see each result', headers: IDEMPOTENT_REPLAYED },
      400: {
        description:
          'Whole batch refused, nothing stored (ErrorResponse: INVALID_JSON, BATCH_NOT_AN_ARRAY, BATCH_EMPTY, BATCH_ITEM_NOT_AN_OBJECT, INVALID_IDEMPOTENCY_KEY), or every notification refused by validation or auth (NotificationBatchResponse)',
        anyOf: [ref('ErrorResponse'), ref('NotificationBatchResponse')],
      },
      ...writeErrors,
      413: error(
        'BATCH_TOO_MANY_ITEMS: more than notification_endpoint.max_batch_items; PAYLOAD_TOO_LARGE: body over notification_endpoint.max_batch_bytes. Nothing stored',
      ),
      500: {
        ...ref('NotificationBatchResponse'),
        description: 'None stored: the store failed (each result says NOTIFICATION_STORAGE_FAILED)',
      },
    },
  },
  watch: {
    tags: ['streaming'],
    summary: 'Live notifications, optionally preceded by history (from_id / from_date)',
    body: ref('NotificationRequest'),
    security: OPTIONAL_AUTH,
    response: { 200: SSE_RESPONSE, ...streamErrors },
  },
  replay: {
    tags: ['streaming'],
    summary: 'History from from_id or from_date, up to to_id or to_date when given, then the stream ends',
    body: ref('NotificationRequest'),
    security: OPTIONAL_AUTH,
    response: { 200: SSE_RESPONSE, ...streamErrors },
  },
  watchGet: {
    tags: ['streaming'],
    summary: 'The watch stream for EventSource: the body fields as query parameters, resumed with Last-Event-ID',
    querystring: streamQuery('watch'),
    headers: LAST_EVENT_ID_HEADER,
    security: OPTIONAL_AUTH,
    response: { 200: SSE_RESPONSE, ...streamErrors },
  },
  replayGet: {
    tags: ['streaming'],
    summary: 'The replay stream for EventSource: 204 once Last-Event-ID is at or past its end',
    querystring: streamQuery('replay'),
    headers: LAST_EVENT_ID_HEADER,
    security: OPTIONAL_AUTH,
    response: {
      200: SSE_RESPONSE,
      204: { description: 'The replay already reached its end: nothing to resume (EventSource stops)' },
      ...streamErrors,
    },
  },
  deleteNotification: {
    tags: ['admin'],
    summary: 'Delete one stored notification by <stream>@<sequence>',
    params: Type.Object({ notification_id: Type.String() }),
    security: REQUIRED_AUTH,
    response: {
      200: ref('DeleteNotificationResponse'),
      400: ref('DeleteNotificationResponse'),
      404: ref('DeleteNotificationResponse'),
      500: ref('DeleteNotificationResponse'),
      ...writeErrors,
    },
  },
  wipeStream: {
    tags: ['admin'],
    summary: 'Delete every notification of one stream',
    body: ref('WipeStreamRequest'),
    security: REQUIRED_AUTH,
    response: { 200: ref('WipeResponse'), 400: ref('WipeResponse'), 404: ref('WipeResponse'), 500: ref('WipeResponse'), ...writeErrors },
  },
  wipeAll: {
    tags: ['admin'],
    summary: 'Delete every stored notification',
    security: REQUIRED_AUTH,
    response: { 200: ref('WipeResponse'), 500: ref('WipeResponse'), ...writeErrors },
  },
  listStreams: {
    tags: ['admin'],
    summary: 'Every open watch and replay stream of the deployment, with counts per event type',
    querystring: Type.Object(
      {
        event_type: Type.Optional(Type.String({ description: 'Only streams of this event type (exact).' })),
        user: Type.Optional(Type.String({ description: 'Only streams of this user (exact).' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'At most this many streams.' })),
      },
      { additionalProperties: false, description: 'Any other parameter, or one given twice, is a 400 INVALID_QUERY.' },
    ),
    security: REQUIRED_AUTH,
    response: {
      200: ref('OpenStreamsResponse'),
      400: error('INVALID_QUERY: an unknown or repeated parameter, or limit not an integer from 1 to 1000'),
      ...authErrors,
    },
  },
  closeStream: {
    tags: ['admin'],
    summary: 'Close one open stream: its client gets end_of_stream with cause operator_closed and resumes from its cursor',
    params: Type.Object({ id: Type.String({ description: "The stream's id: its request id." }) }),
    security: REQUIRED_AUTH,
    response: {
      200: ref('CloseStreamResponse'),
      404: ref('CloseStreamResponse'),
      500: ref('CloseStreamResponse'),
      ...writeErrors,
    },
  },
  reload: {
    tags: ['admin'],
    summary: 'Re-read the configuration and apply its schemas and admin roles without a restart (same as SIGHUP)',
    security: REQUIRED_AUTH,
    response: {
      200: { ...ref('ReloadResponse'), description: 'The new configuration is in use' },
      400: error('INVALID_CONFIGURATION: the configuration would not start; the old one keeps serving'),
      ...writeErrors,
    },
  },
} as const;
