import Type from 'typebox';
import { port, unsigned } from './model-fields.js';

/** The `auth`, `ecpds` and `metrics` sections of the configuration model (model.ts). */

// ---------------------------------------------------------------------------------------------
// auth (docs/design/rules/operations.md §1.4.3)

const AuthModeSchema = Type.Union([Type.Literal('direct'), Type.Literal('trusted_proxy')], {
  default: 'direct',
  description: '`direct`: credentials are verified by auth-o-tron, which returns a JWT. `trusted_proxy`: a fronting proxy forwards a JWT.',
});

export const AuthSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      description: 'Master switch. When false every endpoint, admin included, is reachable anonymously (startup warning).',
    }),
    mode: AuthModeSchema,
    auth_o_tron_url: Type.String({
      default: '',
      description: 'Base URL of auth-o-tron. Required (non-blank) when `enabled` and `mode` is `direct`.',
    }),
    jwt_secret: Type.String({
      default: '',
      description: 'HMAC secret used to verify JWTs in both modes. Required (non-blank) when `enabled`. Never logged.',
    }),
    admin_roles: Type.Record(Type.String(), Type.Array(Type.String()), {
      default: {},
      description: 'Realm → roles that grant admin. Needs at least one realm with a non-empty list when `enabled`.',
    }),
    timeout_ms: unsigned('Whole-exchange timeout of an auth-o-tron call, in milliseconds. Must be > 0 when `enabled`.', 5000),
    browser_cookie: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Name of a cookie that also carries the bearer token, read on `GET /api/v1/watch` and `GET /api/v1/replay` only (for `EventSource`, which cannot send headers; an `Authorization` header wins). Absent: off. Tokens in URLs are never accepted.',
      }),
    ),
  },
  {
    additionalProperties: false,
    default: {},
    description: 'Global authentication. Optional; absent means disabled. Unknown keys are a load error.',
  },
);

// ---------------------------------------------------------------------------------------------
// ecpds (docs/design/rules/operations.md §1.4.4)

export const EcpdsSchema = Type.Object(
  {
    username: Type.String({ description: 'Service account for HTTP Basic auth against ECPDS.' }),
    password: Type.String({ description: 'Service-account password. Redacted in every log and dump.' }),
    servers: Type.Array(Type.String(), {
      description:
        'ECPDS base URLs (path prefixes allowed; no query, no fragment). `https://` for any host; `http://` only for `127.0.0.1`, `[::1]`, `localhost`.',
    }),
    match_key: Type.String({ description: 'Identifier field whose canonical value is the destination to check.' }),
    target_field: Type.String({
      default: 'name',
      description: 'Field of each ECPDS destination record whose string value is compared.',
    }),
    cache_ttl_seconds: unsigned('Lifetime of a cached per-user destination list. > 0.', 300),
    max_entries: unsigned('Maximum number of cached usernames. > 0.', 10000),
    request_timeout_seconds: unsigned('Total budget of one ECPDS HTTP exchange (DNS, connect, TLS, send, full body read). > 0.', 30),
    connect_timeout_seconds: unsigned('Budget for DNS + TCP + TLS only, within the total. > 0.', 5),
    partial_outage_policy: Type.Union([Type.Literal('strict'), Type.Literal('any_success')], {
      default: 'strict',
      description: 'Failure tolerance when several servers are configured.',
    }),
  },
  {
    additionalProperties: false,
    description:
      'ECPDS destination plugin. Optional; parsed strictly even when no stream uses it, validated only when a stream lists `ecpds` in `auth.plugins`.',
  },
);

// ---------------------------------------------------------------------------------------------
// metrics (docs/design/rules/operations.md §1.4.5)

export const MetricsSchema = Type.Object(
  {
    enabled: Type.Boolean({
      default: false,
      description: 'When false no metrics are collected and no metrics server is started.',
    }),
    host: Type.String({
      default: '127.0.0.1',
      description: 'Bind address of the separate metrics server (loopback by default so it is not public).',
    }),
    port: Type.Optional(port('Port of the metrics server. Required when `enabled`; must be non-zero and differ from `application.port`.')),
  },
  { default: {}, description: 'Prometheus metrics on a separate listener.' },
);
