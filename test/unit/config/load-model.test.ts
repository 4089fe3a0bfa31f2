import { afterAll, describe, expect, it } from 'vitest';
import { ConfigLoadError } from '../../../src/config/load.js';
import { HANDLER_NAMES } from '../../../src/schema/identifier-rule.js';
import { MINIMAL_YAML, loadDoc, loadYaml, removeSandboxes, schema } from './config-fixture.js';
import { thrownError } from '../../support/thrown-error.js';

afterAll(removeSandboxes);

/** Runs `load` and returns the ConfigLoadError message, failing the test if nothing is thrown. */
function loadError(load: () => unknown): string {
  const { message } = thrownError(load, ConfigLoadError);
  expect(message).not.toContain('\n');
  return message;
}

describe('defaults', () => {
  it('fills every section of the minimal configuration', () => {
    const config = loadYaml(MINIMAL_YAML);
    expect(config).toEqual({
      application: {
        host: '127.0.0.1',
        port: 8000,
        base_url: 'http://localhost',
        additional_origins: [],
        trusted_proxies: [],
        static_files_path: '/app/static',
        max_body_bytes: 262144,
        max_header_bytes: 16384,
        headers_timeout_ms: 30000,
        request_timeout_ms: 60000,
        keep_alive_timeout_ms: 72000,
        max_connections: 11000,
        max_streams: 10000,
        homepage: {
          client_documentation_url: 'https://sites.ecmwf.int/docs/aviso-client/main/',
          client_repository_url: 'https://github.com/ecmwf/aviso-client',
          server_documentation_url: 'https://github.com/aviso-ts/aviso-ts/tree/main/docs',
          server_repository_url: 'https://github.com/aviso-ts/aviso-ts',
        },
        cors: { allowed_origins: [] },
        workers: 1,
      },
      logging: {
        level: 'info',
        access_log: 'debug',
        max_buffered_bytes: 16_777_216,
        client_error_lines_per_second: 20,
        otlp: { enabled: false, protocol: 'grpc' },
      },
      auth: { enabled: false, mode: 'direct', auth_o_tron_url: '', jwt_secret: '', admin_roles: {}, timeout_ms: 5000 },
      metrics: { enabled: false, host: '127.0.0.1' },
      notification_backend: {
        kind: 'in_memory',
        in_memory: {
          max_history_per_topic: 1,
          max_topics: 10000,
          max_total_size: '256Mi',
          enable_metrics: false,
          persist_sequences: true,
          state_directory: './state',
        },
        jetstream: {
          nats_url: 'nats://localhost:4222',
          timeout_seconds: 30,
          retry_attempts: 3,
          storage_type: 'file',
          retention_policy: 'limits',
          discard_policy: 'old',
          max_reconnect_attempts: 0,
          reconnect_delay_ms: 2000,
          publish_retry_attempts: 5,
          publish_retry_base_delay_ms: 150,
          live_gap_wait_ms: 2000,
          idempotency_bucket: 'AVISO_IDEMPOTENCY',
          history_ledger_bucket: 'AVISO_HISTORY_LEDGER',
        },
      },
      watch_endpoint: {
        sse_heartbeat_interval_sec: 30,
        connection_max_duration_sec: 3600,
        replay_batch_size: 100,
        max_historical_notifications: 10000,
        replay_batch_delay_ms: 100,
        concurrent_notification_processing: 15,
        max_buffered_events: 10000,
        max_buffered_bytes: 8388608,
        max_total_buffered_bytes: 268435456,
        stall_timeout_sec: 30,
      },
      notification_endpoint: { max_batch_items: 1000, max_batch_bytes: 16777216 },
      idempotency: { window: '2m', in_memory_max_keys: 100000 },
    });
  });

  it('defaults each watch_endpoint field on its own in a partial section (docs/design/rules/operations.md §7 item 3)', () => {
    const config = loadDoc({ watch_endpoint: { replay_batch_size: 7, max_buffered_events: 50 } });
    expect(config.watch_endpoint).toEqual({
      sse_heartbeat_interval_sec: 30,
      connection_max_duration_sec: 3600,
      replay_batch_size: 7,
      max_historical_notifications: 10000,
      replay_batch_delay_ms: 100,
      concurrent_notification_processing: 15,
      max_buffered_events: 50,
      max_buffered_bytes: 8388608,
      max_total_buffered_bytes: 268435456,
      stall_timeout_sec: 30,
    });
  });

  it('defaults each logging field on its own (docs/design/rules/operations.md §7 item 3)', () => {
    const otlp = { enabled: false, protocol: 'grpc' };
    const bounds = { max_buffered_bytes: 16_777_216, client_error_lines_per_second: 20 };
    expect(loadDoc({ logging: { format: 'json' } }).logging).toEqual({
      level: 'info',
      format: 'json',
      access_log: 'debug',
      ...bounds,
      otlp,
    });
    expect(loadDoc({ logging: { level: 'debug' } }).logging).toEqual({ level: 'debug', access_log: 'debug', ...bounds, otlp });
    expect(loadDoc({ logging: { access_log: 'info' } }).logging).toEqual({ level: 'info', access_log: 'info', ...bounds, otlp });
    expect(loadDoc({ logging: { max_buffered_bytes: 1_048_576 } }).logging).toEqual({
      level: 'info',
      access_log: 'debug',
      ...bounds,
      max_buffered_bytes: 1_048_576,
      otlp,
    });
    expect(loadDoc({ logging: { client_error_lines_per_second: 1 } }).logging).toEqual({
      level: 'info',
      access_log: 'debug',
      ...bounds,
      client_error_lines_per_second: 1,
      otlp,
    });
  });

  it('refuses a stdout bound under 1 MiB and a line limit under 1 before any logger exists (D45)', () => {
    expect(loadError(() => loadDoc({ logging: { max_buffered_bytes: 4096 } }))).toBe(
      'logging.max_buffered_bytes: must be an integer >= 1048576, got 4096',
    );
    expect(loadError(() => loadDoc({ logging: { client_error_lines_per_second: 0 } }))).toBe(
      'logging.client_error_lines_per_second: must be an integer >= 1, got 0',
    );
  });

  it('accepts any logging level text (it is never a startup error)', () => {
    expect(loadDoc({ logging: { level: 'chatty' } }).logging.level).toBe('chatty');
  });

  it('defaults the auth fields of a partial auth section', () => {
    expect(loadDoc({ auth: { enabled: true } }).auth).toEqual({
      enabled: true,
      mode: 'direct',
      auth_o_tron_url: '',
      jwt_secret: '',
      admin_roles: {},
      timeout_ms: 5000,
    });
  });

  it('defaults the optional ecpds fields', () => {
    const config = loadDoc({ ecpds: { username: 'u', password: 'p', servers: ['https://e'], match_key: 'destination' } });
    expect(config.ecpds).toEqual({
      username: 'u',
      password: 'p',
      servers: ['https://e'],
      match_key: 'destination',
      target_field: 'name',
      cache_ttl_seconds: 300,
      max_entries: 10000,
      request_timeout_seconds: 30,
      connect_timeout_seconds: 5,
      partial_outage_policy: 'strict',
    });
  });

  it('leaves ecpds absent when it is not configured', () => {
    expect(loadYaml(MINIMAL_YAML).ecpds).toBeUndefined();
  });

  it('fills identifier rule defaults (DateHandler canonical_format, PointCloudHandler max_points)', () => {
    const config = loadDoc({
      notification_schema: {
        obs: {
          topic: { base: 'obs', key_order: ['date'] },
          identifier: {
            date: { type: 'DateHandler', required: true },
            point_cloud: { type: 'PointCloudHandler', required: true },
          },
        },
      },
    });
    expect(config.notification_schema?.obs?.identifier).toEqual({
      date: { type: 'DateHandler', required: true, canonical_format: '%Y%m%d' },
      point_cloud: { type: 'PointCloudHandler', required: true, max_points: 10000 },
    });
  });

  it('treats a declared field written as YAML null as absent', () => {
    expect(loadYaml(`${MINIMAL_YAML}metrics:\n  port:\n  host:\n`).metrics).toEqual({ enabled: false, host: '127.0.0.1' });
  });
});

describe('A3: missing required fields', () => {
  it.each([
    ['application.host', { application: { host: undefined } }],
    ['application.port', { application: { port: undefined } }],
    ['notification_backend.kind', { notification_backend: { kind: undefined } }],
    ['application', { application: undefined }],
    ['notification_backend', { notification_backend: undefined }],
  ])('%s', (field, patch) => {
    expect(loadError(() => loadDoc(patch))).toBe(`${field}: required field is missing`);
  });

  it.each(['username', 'password', 'servers', 'match_key'])('ecpds.%s', (field) => {
    const ecpds: Record<string, unknown> = { username: 'u', password: 'p', servers: ['https://e'], match_key: 'm' };
    delete ecpds[field];
    expect(loadError(() => loadDoc({ ecpds }))).toBe(`ecpds.${field}: required field is missing`);
  });

  it('a stream auth block without required', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { auth: { read_roles: { r: ['x'] } } }) } }))).toBe(
      'notification_schema.mars.auth.required: required field is missing',
    );
  });

  it('a payload block without required', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { payload: {} }) } }))).toBe(
      'notification_schema.mars.payload.required: required field is missing',
    );
  });

  it.each(['base', 'key_order'])('topic.%s', (field) => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { topic: { [field]: undefined } }) } }))).toBe(
      `notification_schema.mars.topic.${field}: required field is missing`,
    );
  });

  it('an event schema without identifier', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: { topic: { base: 'mars', key_order: [] } } } }))).toBe(
      'notification_schema.mars.identifier: required field is missing',
    );
  });

  it('accepts an empty identifier map', () => {
    const config = loadDoc({ notification_schema: { bare: { topic: { base: 'bare', key_order: [] }, identifier: {} } } });
    expect(config.notification_schema?.bare?.identifier).toEqual({});
  });

  it('an identifier rule without type', () => {
    expect(
      loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { identifier: { class: { type: undefined } } }) } })),
    ).toBe(
      'notification_schema.mars.identifier.class.type: required field is missing (one of StringHandler, DateHandler, TimeHandler, EnumHandler, ExpverHandler, IntHandler, FloatHandler, PolygonHandler, PointCloudHandler)',
    );
  });

  it('an identifier rule without required', () => {
    expect(
      loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { identifier: { class: { required: undefined } } }) } })),
    ).toBe('notification_schema.mars.identifier.class.required: required field is missing');
  });

  it('an EnumHandler without values', () => {
    expect(
      loadError(() =>
        loadDoc({ notification_schema: { mars: schema('mars', { identifier: { region: { type: 'EnumHandler', required: true } } }) } }),
      ),
    ).toBe('notification_schema.mars.identifier.region.values: required field is missing');
  });

  it('a legacy endpoint without base or key_order', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { endpoint: { base: 'mars' } }) } }))).toBe(
      'notification_schema.mars.endpoint.key_order: required field is missing',
    );
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { endpoint: { base: 1, key_order: [] } }) } }))).toBe(
      'notification_schema.mars.endpoint.base: must be a string, got 1 (quote it in YAML)',
    );
  });

  it('accepts a well-formed legacy endpoint and ignores it', () => {
    const config = loadDoc({ notification_schema: { mars: schema('mars', { endpoint: { base: 'x', key_order: ['a'] } }) } });
    expect(config.notification_schema?.mars?.endpoint).toEqual({ base: 'x', key_order: ['a'] });
  });
});

describe('A4: types and ranges', () => {
  it('application.port: 70000', () => {
    expect(loadError(() => loadYaml('application: { host: h, port: 70000 }\nnotification_backend: { kind: in_memory }\n'))).toBe(
      'application.port: must be an integer between 0 and 65535, got 70000',
    );
  });

  it('auth.enabled: maybe', () => {
    expect(loadError(() => loadDoc({ auth: { enabled: 'maybe' } }))).toBe(
      'auth.enabled: must be a boolean (true/false, yes/no, on/off or 1/0), got "maybe"',
    );
  });

  it('negative auth.timeout_ms', () => {
    expect(loadError(() => loadDoc({ auth: { timeout_ms: -1 } }))).toBe('auth.timeout_ms: must be a non-negative integer, got -1');
  });

  it('a fractional integer', () => {
    expect(loadError(() => loadDoc({ watch_endpoint: { replay_batch_size: 1.5 } }))).toBe(
      'watch_endpoint.replay_batch_size: must be a non-negative integer, got 1.5',
    );
  });

  it('application.max_body_bytes: 0', () => {
    expect(loadError(() => loadDoc({ application: { max_body_bytes: 0 } }))).toBe(
      'application.max_body_bytes: must be an integer >= 1, got 0',
    );
  });

  it('a section that is not a mapping', () => {
    expect(loadError(() => loadDoc({ watch_endpoint: [1] }))).toBe('watch_endpoint: must be a mapping, got a list');
  });

  it('a list that is not a list', () => {
    expect(loadError(() => loadDoc({ auth: { admin_roles: { realm: 'admin' } } }))).toBe(
      'auth.admin_roles.realm: must be a list, got "admin"',
    );
  });

  it('a list item of the wrong type', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { topic: { key_order: ['class', 7] } }) } }))).toBe(
      'notification_schema.mars.topic.key_order[1]: must be a string, got 7 (quote it in YAML)',
    );
  });

  it('an integer literal beyond Number.MAX_SAFE_INTEGER in YAML', () => {
    const yaml =
      'application: { host: h, port: 1 }\nnotification_backend:\n  kind: in_memory\n  jetstream:\n    max_messages: 9007199254740993\n';
    expect(loadError(() => loadYaml(yaml))).toBe(
      'notification_backend.jetstream.max_messages: must be an integer (at most 9007199254740991 in magnitude is supported), got 9007199254740992',
    );
  });

  it('coerces YAML scalars leniently in the settings sections', () => {
    const config = loadYaml(
      'application: { host: 127, port: "8000" }\nnotification_backend: { kind: in_memory }\nmetrics: { enabled: "yes", port: "9090" }\nauth: { enabled: off }\nnotification_schema_strict: "on"\n',
    );
    expect(config.application.host).toBe('127');
    expect(config.application.port).toBe(8000);
    expect(config.metrics).toMatchObject({ enabled: true, port: 9090 });
    expect(config.auth.enabled).toBe(false);
    expect(config.notification_schema_strict).toBe(true);
  });

  it('reads YAML numbers 1 and 0 as booleans in the settings sections', () => {
    expect(loadDoc({ metrics: { enabled: 1 } }).metrics.enabled).toBe(true);
  });

  it('keeps notification_schema strictly typed: "true" is not a boolean there', () => {
    expect(
      loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { identifier: { class: { required: 'true' } } }) } })),
    ).toBe('notification_schema.mars.identifier.class.required: must be a boolean (true or false), got "true"');
  });

  it('keeps notification_schema strictly typed: "2" is not an integer there', () => {
    expect(
      loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { identifier: { class: { max_length: '2' } } }) } })),
    ).toBe('notification_schema.mars.identifier.class.max_length: must be a non-negative integer, got "2"');
  });

  it('keeps notification_schema strictly typed: a YAML yes is a string there', () => {
    const yaml = `${MINIMAL_YAML}notification_schema:\n  mars:\n    topic: { base: mars, key_order: [] }\n    identifier: {}\n    payload: { required: yes }\n`;
    expect(loadError(() => loadYaml(yaml))).toBe('notification_schema.mars.payload.required: must be a boolean (true or false), got "yes"');
  });

  it('asks for quotes when a YAML number is given for a string rule field', () => {
    const yaml = `${MINIMAL_YAML}notification_schema:\n  mars:\n    topic: { base: mars, key_order: [expver] }\n    identifier:\n      expver: { type: ExpverHandler, default: 0001, required: false }\n`;
    expect(loadError(() => loadYaml(yaml))).toBe(
      'notification_schema.mars.identifier.expver.default: must be a string, got 1 (quote it in YAML)',
    );
  });

  it('rejects a range that is not a pair', () => {
    expect(
      loadError(() =>
        loadDoc({
          notification_schema: {
            mars: schema('mars', { identifier: { step: { type: 'IntHandler', required: false, range: [1, 2, 3] } } }),
          },
        }),
      ),
    ).toBe('notification_schema.mars.identifier.step.range: must be a list of exactly 2 items, got 3');
  });

  it('rejects a fractional IntHandler range', () => {
    expect(
      loadError(() =>
        loadDoc({
          notification_schema: { mars: schema('mars', { identifier: { step: { type: 'IntHandler', required: false, range: [0, 1.5] } } }) },
        }),
      ),
    ).toBe('notification_schema.mars.identifier.step.range[1]: must be an integer, got 1.5');
  });

  it('rejects a storage_policy field of the wrong type', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { storage_policy: { compression: 'yes' } }) } }))).toBe(
      'notification_schema.mars.storage_policy.compression: must be a boolean (true or false), got "yes"',
    );
  });

  it('rejects per-schema max_historical_notifications "unlimited"', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { max_historical_notifications: 'unlimited' }) } }))).toBe(
      'notification_schema.mars.max_historical_notifications: must be an integer, got "unlimited"',
    );
  });

  it('rejects an event schema that is not a mapping', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: null } }))).toBe('notification_schema.mars: must be a mapping, got null');
  });
});

describe('application.workers: a count or auto (D36)', () => {
  it.each([
    ['a count in YAML', { application: { workers: 4 } }, {}, 4],
    ['a quoted count in YAML', { application: { workers: '3' } }, {}, 3],
    ['auto', { application: { workers: 'auto' } }, {}, 'auto'],
    ['a count from the environment', {}, { AVISOSERVER_APPLICATION__WORKERS: '2' }, 2],
    ['auto from the environment', {}, { AVISOSERVER_APPLICATION__WORKERS: 'auto' }, 'auto'],
  ])('accepts %s', (_what, patch, env, expected) => {
    expect(loadDoc(patch, env).application.workers).toBe(expected);
  });

  it.each([
    ['0', { application: { workers: 0 } }, {}, '0'],
    ['a fraction', { application: { workers: 1.5 } }, {}, '1.5'],
    ['another word', { application: { workers: 'all' } }, {}, '"all"'],
    ['Auto in another case', {}, { AVISOSERVER_APPLICATION__WORKERS: 'AUTO' }, '"AUTO" (from AVISOSERVER_APPLICATION__WORKERS)'],
  ])('rejects %s', (_what, patch, env, got) => {
    expect(loadError(() => loadDoc(patch, env))).toBe(`application.workers: must be an integer >= 1 or "auto", got ${got}`);
  });
});

describe('A5: enumerations', () => {
  it.each([
    ['auth.mode', { auth: { mode: 'proxy' } }, 'direct, trusted_proxy', '"proxy"'],
    [
      'notification_backend.jetstream.storage_type',
      { notification_backend: { jetstream: { storage_type: 'disk' } } },
      'file, memory',
      '"disk"',
    ],
    [
      'notification_backend.jetstream.retention_policy',
      { notification_backend: { jetstream: { retention_policy: 'Limits' } } },
      'limits, interest, workqueue',
      '"Limits"',
    ],
    [
      'notification_backend.jetstream.discard_policy',
      { notification_backend: { jetstream: { discard_policy: 'oldest' } } },
      'old, new',
      '"oldest"',
    ],
    [
      'ecpds.partial_outage_policy',
      { ecpds: { username: 'u', password: 'p', servers: [], match_key: 'm', partial_outage_policy: 'any' } },
      'strict, any_success',
      '"any"',
    ],
  ])('%s', (field, patch, allowed, got) => {
    expect(loadError(() => loadDoc(patch))).toBe(`${field}: must be one of ${allowed}, got ${got}`);
  });

  it('DateHandler canonical_format other than the two formats (D19)', () => {
    expect(
      loadError(() =>
        loadDoc({ notification_schema: { mars: schema('mars', { identifier: { date: { canonical_format: '%d/%m/%Y' } } }) } }),
      ),
    ).toBe('notification_schema.mars.identifier.date.canonical_format: must be one of %Y%m%d, %Y-%m-%d, got "%d/%m/%Y"');
  });

  it('accepts the dashed date format', () => {
    const config = loadDoc({ notification_schema: { mars: schema('mars', { identifier: { date: { canonical_format: '%Y-%m-%d' } } }) } });
    expect(config.notification_schema?.mars?.identifier.date).toMatchObject({ canonical_format: '%Y-%m-%d' });
  });

  it('leaves notification_backend.kind to the semantic stage', () => {
    expect(loadDoc({ notification_backend: { kind: 'redis' } }).notification_backend.kind).toBe('redis');
  });
});

describe('A6: unknown keys', () => {
  it.each([
    ['auth', { auth: { enabled: false, tokn: 'x' } }, 'tokn'],
    ['ecpds', { ecpds: { username: 'u', password: 'p', servers: [], match_key: 'm', cache: 1, ttl: 2 } }, 'cache, ttl'],
  ])('inside %s', (section, patch, names) => {
    expect(loadError(() => loadDoc(patch))).toBe(`${section}: unknown field(s): ${names}`);
  });

  it('inside a stream auth block', () => {
    expect(
      loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { auth: { required: false, allowed_roles: [] } }) } })),
    ).toBe('notification_schema.mars.auth: unknown field(s): allowed_roles');
  });

  it('inside a payload block (e.g. a legacy type list)', () => {
    expect(
      loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { payload: { required: true, type: ['json'] } }) } })),
    ).toBe('notification_schema.mars.payload: unknown field(s): type');
  });

  it('inside an identifier rule', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { identifier: { class: { max_len: 2 } } }) } }))).toBe(
      'notification_schema.mars.identifier.class: unknown field(s): max_len',
    );
  });

  it("inside an identifier rule: another handler's field", () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { identifier: { date: { values: ['a'] } } }) } }))).toBe(
      'notification_schema.mars.identifier.date: unknown field(s): values',
    );
  });

  it('inside storage_policy (a typo would silently lose retention)', () => {
    expect(loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { storage_policy: { retention: '1d' } }) } }))).toBe(
      'notification_schema.mars.storage_policy: unknown field(s): retention',
    );
  });

  it('an unknown handler type lists the known ones', () => {
    expect(
      loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { identifier: { class: { type: 'StrHandler' } } }) } })),
    ).toBe(
      'notification_schema.mars.identifier.class.type: unknown type "StrHandler"; expected one of StringHandler, DateHandler, TimeHandler, EnumHandler, ExpverHandler, IntHandler, FloatHandler, PolygonHandler, PointCloudHandler',
    );
  });

  it('lists exactly the handler names of IDENTIFIER_RULES for an unknown type', () => {
    const message = loadError(() => loadDoc({ notification_schema: { mars: schema('mars', { identifier: { class: { type: 'X' } } }) } }));
    expect(message.endsWith(`expected one of ${HANDLER_NAMES.join(', ')}`)).toBe(true);
  });

  it.each([
    ['top level', { extra: 1 }],
    ['application', { application: { extra: 1 } }],
    ['logging', { logging: { extra: 1 } }],
    ['metrics', { metrics: { extra: 1 } }],
    ['watch_endpoint', { watch_endpoint: { extra: 1 } }],
    ['notification_backend', { notification_backend: { extra: 1 } }],
    ['notification_backend.in_memory', { notification_backend: { in_memory: { extra: 1 } } }],
    ['notification_backend.jetstream', { notification_backend: { jetstream: { extra: 1 } } }],
    ['an event schema', { notification_schema: { mars: schema('mars', { storage_polcy: {} }) } }],
    ['a topic (legacy separator)', { notification_schema: { mars: schema('mars', { topic: { separator: '.' } }) } }],
  ])('are ignored and dropped at %s', (_where, patch) => {
    const config = loadDoc(patch);
    expect(JSON.stringify(config)).not.toMatch(/extra|storage_polcy|separator/);
  });
});
