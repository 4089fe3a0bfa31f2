import Type from 'typebox';
import { port } from './model-fields.js';

/** The `application` and `logging` sections of the configuration model (model.ts). */

// ---------------------------------------------------------------------------------------------
// application

/**
 * The homepage's links (D29). This project has no published documentation
 * site or repository URL of its own yet, so the server defaults point at a chosen repository
 * location and its `docs/` folder; operators override them.
 */
export const HOMEPAGE_DEFAULTS = {
  client_documentation_url: 'https://sites.ecmwf.int/docs/aviso-client/main/',
  client_repository_url: 'https://github.com/ecmwf/aviso-client',
  server_documentation_url: 'https://github.com/aviso-ts/aviso-ts/tree/main/docs',
  server_repository_url: 'https://github.com/aviso-ts/aviso-ts',
} as const;

const homepageUrl = (key: keyof typeof HOMEPAGE_DEFAULTS, description: string) =>
  Type.String({
    default: HOMEPAGE_DEFAULTS[key],
    description: `${description} An absolute \`http\`/\`https\` URL with a host and no user info (checked at startup).`,
  });

export const HomepageSchema = Type.Object(
  {
    client_documentation_url: homepageUrl('client_documentation_url', 'Client documentation, under "Use aviso".'),
    client_repository_url: homepageUrl('client_repository_url', 'Client source repository, under "Use aviso".'),
    server_documentation_url: homepageUrl('server_documentation_url', 'Server documentation, under "Operate the server".'),
    server_repository_url: homepageUrl('server_repository_url', 'Server source repository, under "Operate the server".'),
  },
  { default: {}, description: 'Links shown on the homepage (`GET /`). Each field has its own default.' },
);

/** CORS for `/api/v1/*`, off unless origins are listed (src/http/routes/cors.ts). */
export const CorsSchema = Type.Object(
  {
    allowed_origins: Type.Array(Type.String(), {
      default: [],
      description:
        'Origins (`scheme://host[:port]`, e.g. `https://console.example.org`) whose pages may call `/api/v1/*`. A listed origin may send credentials (cookies, `Authorization`); `"*"` lets any other origin read without credentials. Empty: no CORS headers at all (streams keep their `Access-Control-Allow-Origin: *`). A page on an origin not allowed here (nor the server\'s own: `base_url`, `additional_origins`) cannot change state: its POST/DELETE requests get `403 CROSS_ORIGIN_REQUEST_REFUSED` (docs/security.md, "Cross-site writes").',
    }),
  },
  { default: {}, description: 'Cross-origin access for browser pages on other origins. Off by default.' },
);

/** HTTPS with HTTP/2 and HTTP/1.1 on one port, so browsers can hold more than six streams (src/http/transport/tls-options.ts). */
export const TlsSchema = Type.Object(
  {
    cert_file: Type.String({ description: 'PEM file with the server certificate (and its chain). Read at startup.' }),
    key_file: Type.String({ description: 'PEM file with the private key of `cert_file`. Read at startup.' }),
    ca_file: Type.Optional(
      Type.String({
        description:
          'PEM file with the CA certificates that complete the chain of `cert_file` (intermediates it does not hold itself). Optional; client certificates are not requested.',
      }),
    ),
  },
  {
    description: 'Serve HTTPS with HTTP/2 (ALPN `h2`) and HTTP/1.1 fallback on `port`. Unset: plain HTTP/1.1.',
  },
);

export const ApplicationSchema = Type.Object(
  {
    host: Type.String({ description: 'Bind address of the public HTTP server.' }),
    port: port('Bind port of the public HTTP server. `0` picks an ephemeral port (the actual port is logged in `startup.server.started`).'),
    base_url: Type.String({
      default: 'http://localhost',
      description:
        'Prefix used when building CloudEvent `source` values. Its origin (`scheme://host[:port]`) is also the server\'s own origin for browser pages: a state-changing request whose `Origin` is neither this one, one of `additional_origins` nor allowed by `cors.allowed_origins` is refused with `403 CROSS_ORIGIN_REQUEST_REFUSED`. Set it to the public origin browsers use (behind a proxy, the proxy\'s). The `Host` header never counts (D46, docs/security.md, "DNS rebinding").',
    }),
    additional_origins: Type.Array(Type.String(), {
      default: [],
      description:
        "Further origins (`scheme://host[:port]`, e.g. `https://aviso.example.org`) at which browsers reach this server itself, besides `base_url`'s: its pages there (the console) may change state. Written as browsers send them (checked at startup). When `base_url` names `localhost`, `127.0.0.1` or `[::1]`, the other two at `base_url`'s port, and all three at the listening port, count as its own without being listed. Requests without `Origin` (curl, the aviso client) are not affected.",
    }),
    trusted_proxies: Type.Array(Type.String(), {
      default: [],
      description:
        "Addresses (`10.0.0.7`, `::1`) and networks (`10.0.0.0/8`, `fd00::/8`) of the reverse proxies in front of this server. A connection from one of them is taken to come from the address its `X-Forwarded-For` names (the last one not itself a listed proxy), which the admin streams list shows as a stream's `client_address` (D49). Empty: every connection's own peer address, `X-Forwarded-For` ignored. Only the client address changes: the origin checks never read forwarded headers. Applied at the next restart.",
    }),
    static_files_path: Type.String({
      default: '/app/static',
      description: 'Directory served under `/static/` and holding `index.html` for `/`.',
    }),
    max_body_bytes: Type.Integer({
      minimum: 1,
      default: 262144,
      description: 'Largest accepted request body in bytes; a larger body is answered `413 PAYLOAD_TOO_LARGE` (D15).',
    }),
    max_header_bytes: Type.Integer({
      minimum: 1024,
      maximum: 1048576,
      default: 16384,
      description:
        'Largest accepted request head (request line and all headers together) in bytes; a larger one is answered `431` and the connection is closed.',
    }),
    headers_timeout_ms: Type.Integer({
      minimum: 1,
      default: 30000,
      description:
        'Time a client has to send the complete request head, in milliseconds; a slower one (slow-loris) is answered `408 REQUEST_TIMEOUT` and disconnected. Checked at least every 1 s: the effective bound is up to one check interval longer.',
    }),
    request_timeout_ms: Type.Integer({
      minimum: 1,
      default: 60000,
      description:
        'Time a client has to send the complete request (head and body), in milliseconds; must be ≥ `headers_timeout_ms`. It bounds receiving the request only: a watch/replay stream may then stay open for its whole lifetime.',
    }),
    keep_alive_timeout_ms: Type.Integer({
      minimum: 1,
      default: 72000,
      description: 'How long an idle keep-alive connection is kept open between requests, in milliseconds.',
    }),
    max_connections: Type.Integer({
      minimum: 2,
      default: 11000,
      description:
        'Most simultaneous client connections of one process; further connections are closed at once, without an answer, counted by `aviso_http_connections_refused_total` and logged (`http.connection.refused`, at most once per 10 s). Must exceed `max_streams` (checked at startup): over HTTP/1.1 each watch/replay stream holds a connection, and the connections above `max_streams` stay for `/health`, `/ready`, notify and the other requests. An HTTP/2 connection carries up to 256 streams. The default is `max_streams` plus a reserve of 1,000. It also bounds what connections that never send a request can cost: a TLS handshake left unfinished keeps about 55 KB of native memory until `headers_timeout_ms`, so 11,000 of them take about 600 MiB (see the security docs). Per process: each of `workers` has its own.',
    }),
    max_streams: Type.Integer({
      minimum: 1,
      default: 10000,
      description:
        'Most watch and replay streams (POST and GET) one process holds at once. A stream request beyond it is answered `503 TOO_MANY_STREAMS` with `Retry-After`, counted by `aviso_sse_streams_refused_total` and logged (`stream.limit.refused`, at most once per 10 s); every other request is still served. Must be less than `max_connections` (checked at startup). Per process: each of `workers` has its own. See the operations docs for sizing both.',
    }),
    homepage: HomepageSchema,
    cors: CorsSchema,
    tls: Type.Optional(TlsSchema),
    workers: Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('auto')], {
      default: 1,
      description:
        'Server processes sharing `port` (D36): `1` is one process as always; `N` runs a primary process that serves the metrics port and N worker processes that each serve the public port; `auto` is the number of CPUs this process may use (its CPU affinity, `os.availableParallelism()`). Above 1 needs `notification_backend.kind: jetstream` (checked at startup). See the deployment docs for sizing.',
    }),
  },
  { description: 'The public HTTP server.' },
);

// ---------------------------------------------------------------------------------------------
// logging: each field has its own default, so a file may set one field of the section alone.

/** OTLP log export: a second sink beside stdout, off unless enabled. */
const OtlpSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      description: 'Also export every log record to an OpenTelemetry collector. stdout logging continues unchanged.',
    }),
    endpoint: Type.Optional(
      Type.String({
        description:
          'Collector address, required (non-blank) when `enabled`. Without a scheme `http://` is assumed; with `protocol: http`, `/v1/logs` is appended unless already there.',
      }),
    ),
    protocol: Type.Union([Type.Literal('grpc'), Type.Literal('http')], {
      default: 'grpc',
      description: '`grpc` (OTLP/gRPC, usually port 4317) or `http` (OTLP/HTTP with JSON bodies, usually port 4318).',
    }),
  },
  { default: {}, description: 'OTLP log export. Optional; disabled by default.' },
);

export const LoggingSchema = Type.Object(
  {
    level: Type.String({
      default: 'info',
      description:
        '`trace`, `debug`, `info`, `warn` or `error`, case-insensitive. Any other value means `info` (never a startup error). Overridden by `RUST_LOG` (see the logging docs).',
    }),
    format: Type.Optional(Type.String({ description: 'Accepted for compatibility and ignored: logs are always pino JSON lines.' })),
    access_log: Type.Union([Type.Literal('debug'), Type.Literal('info')], {
      default: 'debug',
      description:
        'Level of the per-request access line `http.request.completed` (D34; the reference writes none). `debug` (default): written only when `level` is `debug` or `trace`, so a notify writes its one `api.notification.processed` line. `info`: business routes write it at `info` again; infrastructure paths (`/health`, `/ready`, `/metrics`, static files, docs) stay at `debug`.',
    }),
    max_buffered_bytes: Type.Integer({
      minimum: 1024 * 1024,
      default: 16 * 1024 * 1024,
      description:
        'Bytes of log lines stdout may hold while its reader is slower than the server writes (D45). A line that would pass it is dropped whole and counted in `aviso_log_lines_dropped_total`, so a slow log shipper costs at most this much memory instead of holding every line. At least 1 MiB. Default 16 MiB.',
    }),
    client_error_lines_per_second: Type.Integer({
      minimum: 1,
      default: 20,
      description:
        'Most lines per second of each event a client causes with a bad request (`api.request.validation.failed`, `api.request.parse.failed`, `auth.middleware.request.denied`, … see the logging docs), per process. Past it the lines of that second are counted in `aviso_log_lines_rate_limited_total` and one `logging.lines.rate_limited` line says how many there were (D45).',
    }),
    otlp: OtlpSchema,
  },
  { default: {}, description: 'Log output. Optional; each field has its own default.' },
);
