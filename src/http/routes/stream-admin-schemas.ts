import Type from 'typebox';

/** TypeBox models of the admin streams list and close (D49) for the OpenAPI document; see api-schemas.ts. */

const OpenStream = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: "The stream request's request id (its X-Request-ID)." }),
    process: Type.String({ description: 'The process that holds the stream: <hostname>:<pid>.' }),
    route: Type.Union([Type.Literal('watch'), Type.Literal('replay')]),
    method: Type.Union([Type.Literal('GET'), Type.Literal('POST')]),
    event_type: Type.String(),
    filter: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'The fields the request constrained with their canonical values (constraints as objects, point/polygon as arrays); fields left open are * in topic_pattern.',
    }),
    topic_pattern: Type.String({ description: 'The topic pattern the stream matches, e.g. mars.od.*.0001' }),
    user: Type.Union([Type.String(), Type.Null()], { description: 'The authenticated user, null when anonymous.' }),
    client_address: Type.String({ description: "The client's IP address as the server's socket sees it." }),
    opened_at: Type.String({ description: 'When the stream opened: RFC 3339 UTC with milliseconds.' }),
    phase: Type.Union([Type.Literal('replaying'), Type.Literal('live')]),
    last_sequence: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Sequence of the last notification queued for the client; null before the first.',
    }),
    delivered: Type.Integer({ minimum: 0, description: 'Notifications queued for the client since the stream opened.' }),
    buffered_bytes: Type.Integer({
      minimum: 0,
      description: 'Bytes the client has not taken yet: the stream queue and the socket write buffer.',
    }),
    lag_ms: Type.Integer({
      minimum: 0,
      description: 'How long the oldest frame of the stream queue (not yet handed to the socket) has waited, in ms; 0 when none waits.',
    }),
  },
  { $id: 'OpenStream' },
);

export const OpenStreamsResponse = Type.Object(
  {
    streams: Type.Array(Type.Ref('OpenStream'), { description: 'Matching streams by opened_at, then id; at most limit.' }),
    total: Type.Integer({ minimum: 0, description: 'Streams matching the filters on every process that answered.' }),
    truncated: Type.Boolean({ description: 'total > streams.length' }),
    counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'Open streams per event type on every process that answered, filters not applied.',
    }),
    processes: Type.Object({
      answered: Type.Array(Type.String()),
      not_answering: Type.Array(Type.String(), { description: 'Processes seen recently that did not answer within the bound.' }),
      cluster_unreachable: Type.Boolean({ description: 'The other processes could not be asked: only this process is listed.' }),
    }),
    request_id: Type.String({ format: 'uuid' }),
  },
  { $id: 'OpenStreamsResponse' },
);

export const CloseStreamResponse = Type.Object(
  {
    success: Type.Boolean(),
    message: Type.String(),
    stream_id: Type.String(),
    process: Type.Optional(Type.String({ description: 'On success: the process that held the stream.' })),
    not_answering: Type.Optional(Type.Array(Type.String(), { description: 'On 404: processes that did not answer and may hold it.' })),
    request_id: Type.String({ format: 'uuid' }),
  },
  { $id: 'CloseStreamResponse' },
);

export const STREAM_ADMIN_COMPONENTS = [OpenStream, OpenStreamsResponse, CloseStreamResponse];
