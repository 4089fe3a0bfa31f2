import { afterAll, describe, expect, it } from 'vitest';
import { ConfigLoadError } from '../../../src/config/load.js';
import { MINIMAL_YAML, loadDoc, loadYaml, removeSandboxes, schema } from './config-fixture.js';

afterAll(removeSandboxes);

describe('environment overrides: the docs/design/rules/operations.md §1.2 examples', () => {
  it.each([
    ['AVISOSERVER_APPLICATION__HOST', '0.0.0.0', (c: Cfg) => c.application.host, '0.0.0.0'],
    ['AVISOSERVER_APPLICATION__PORT', '8000', (c: Cfg) => c.application.port, 8000],
    ['AVISOSERVER_NOTIFICATION_BACKEND__KIND', 'jetstream', (c: Cfg) => c.notification_backend.kind, 'jetstream'],
    [
      'AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__NATS_URL',
      'nats://nats:4222',
      (c: Cfg) => c.notification_backend.jetstream.nats_url,
      'nats://nats:4222',
    ],
    ['AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__TOKEN', 's3cret', (c: Cfg) => c.notification_backend.jetstream.token, 's3cret'],
    ['AVISOSERVER_WATCH_ENDPOINT__REPLAY_BATCH_SIZE', '200', (c: Cfg) => c.watch_endpoint.replay_batch_size, 200],
    ['AVISOSERVER_AUTH__ENABLED', 'true', (c: Cfg) => c.auth.enabled, true],
    ['AVISOSERVER_AUTH__JWT_SECRET', 'secret', (c: Cfg) => c.auth.jwt_secret, 'secret'],
    ['AVISOSERVER_METRICS__ENABLED', 'true', (c: Cfg) => c.metrics.enabled, true],
    ['AVISOSERVER_METRICS__PORT', '9090', (c: Cfg) => c.metrics.port, 9090],
    ['AVISOSERVER_NOTIFICATION_SCHEMA_STRICT', 'false', (c: Cfg) => c.notification_schema_strict, false],
    ['AVISOSERVER_LOGGING__LEVEL', 'debug', (c: Cfg) => c.logging.level, 'debug'],
  ])('%s=%s sets a typed value', (variable, value, read, expected) => {
    expect(read(loadYaml(MINIMAL_YAML, { [variable]: value }))).toStrictEqual(expected);
  });

  it('overrides a value from the file', () => {
    expect(loadYaml(MINIMAL_YAML, { AVISOSERVER_APPLICATION__HOST: '10.0.0.1' }).application.host).toBe('10.0.0.1');
  });

  it('keeps the rest of a partially written watch_endpoint at its defaults (docs/design/rules/operations.md §7 item 3)', () => {
    const config = loadYaml(`${MINIMAL_YAML}watch_endpoint:\n  sse_heartbeat_interval_sec: 5\n`, {
      AVISOSERVER_WATCH_ENDPOINT__REPLAY_BATCH_SIZE: '200',
    });
    expect(config.watch_endpoint).toEqual({
      sse_heartbeat_interval_sec: 5,
      connection_max_duration_sec: 3600,
      replay_batch_size: 200,
      max_historical_notifications: 10000,
      replay_batch_delay_ms: 100,
      concurrent_notification_processing: 15,
      max_buffered_events: 10000,
      max_buffered_bytes: 8388608,
      max_total_buffered_bytes: 268435456,
      stall_timeout_sec: 30,
    });
  });
});

type Cfg = ReturnType<typeof loadYaml>;

describe('environment override grammar', () => {
  it('matches the prefix case-insensitively and lower-cases the rest', () => {
    expect(loadYaml(MINIMAL_YAML, { avisoserver_Application__Port: '8123' }).application.port).toBe(8123);
  });

  it('creates a missing section when a leaf is set', () => {
    const config = loadYaml('application: { host: h }\n', {
      AVISOSERVER_APPLICATION__PORT: '1',
      AVISOSERVER_NOTIFICATION_BACKEND__KIND: 'in_memory',
      AVISOSERVER_METRICS__ENABLED: 'true',
    });
    expect(config.metrics).toEqual({ enabled: true, host: '127.0.0.1' });
  });

  it('builds a whole configuration from the environment alone', () => {
    const config = loadDoc(
      { application: undefined, notification_backend: undefined },
      {
        AVISOSERVER_APPLICATION__HOST: '0.0.0.0',
        AVISOSERVER_APPLICATION__PORT: '8000',
        AVISOSERVER_NOTIFICATION_BACKEND__KIND: 'in_memory',
      },
    );
    expect(config.application).toMatchObject({ host: '0.0.0.0', port: 8000 });
  });

  it('does not treat AVISOSERVER_CONFIG_FILE as a key', () => {
    // loadYaml passes the file through AVISOSERVER_CONFIG_FILE; it must not surface as a key
    const config = loadYaml(MINIMAL_YAML, {});
    expect(Object.keys(config)).not.toContain('config_file');
  });

  it('ignores a name with an empty segment', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__: 'x', AVISOSERVER_AUTH____ENABLED: 'x' })).not.toThrow();
  });

  it('ignores unrelated variables', () => {
    expect(() => loadYaml(MINIMAL_YAML, { PATH: '/bin', AVISO_PORT: 'x', AVISOSERVER: 'x' })).not.toThrow();
  });

  it('applies a broader override before a narrower one', () => {
    const config = loadYaml(MINIMAL_YAML, {
      AVISOSERVER_AUTH: '{"enabled": false, "jwt_secret": "a"}',
      AVISOSERVER_AUTH__JWT_SECRET: 'b',
    });
    expect(config.auth.jwt_secret).toBe('b');
  });

  it('addresses operator-chosen map keys in lower case', () => {
    const config = loadDoc(
      { notification_schema: { mars: schema('mars') } },
      {
        AVISOSERVER_NOTIFICATION_SCHEMA__MARS__TOPIC__BASE: 'mars2',
      },
    );
    expect(config.notification_schema?.mars?.topic?.base).toBe('mars2');
  });
});

describe('environment value typing', () => {
  it.each(['true', 'TRUE', 'True', 'yes', 'YES', 'on', 'On', '1'])('reads %j as true', (value) => {
    expect(loadYaml(MINIMAL_YAML, { AVISOSERVER_METRICS__ENABLED: value }).metrics.enabled).toBe(true);
  });

  it.each(['false', 'FALSE', 'no', 'No', 'off', 'OFF', '0'])('reads %j as false', (value) => {
    expect(loadYaml(MINIMAL_YAML, { AVISOSERVER_METRICS__ENABLED: value }).metrics.enabled).toBe(false);
  });

  it.each(['maybe', '', ' true', '2', 'y'])('rejects %j as a boolean, naming the field and the variable', (value) => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__ENABLED: value })).toThrow(
      `auth.enabled: must be a boolean (true/false, yes/no, on/off or 1/0), got ${JSON.stringify(value)} (from AVISOSERVER_AUTH__ENABLED)`,
    );
  });

  it('accepts a leading + and leading zeros in integers', () => {
    expect(loadYaml(MINIMAL_YAML, { AVISOSERVER_APPLICATION__PORT: '+08080' }).application.port).toBe(8080);
  });

  it.each(['abc', '8000.0', '1e3', ' 8000', '0x10'])('rejects %j as an integer', (value) => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_APPLICATION__PORT: value })).toThrow(
      `application.port: must be an integer between 0 and 65535, got ${JSON.stringify(value)}`,
    );
  });

  it('rejects an out-of-range port', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_APPLICATION__PORT: '70000' })).toThrow(
      'application.port: must be an integer between 0 and 65535, got "70000" (from AVISOSERVER_APPLICATION__PORT)',
    );
  });

  it('rejects a negative unsigned value', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__TIMEOUT_MS: '-5' })).toThrow(
      'auth.timeout_ms: must be a non-negative integer, got "-5"',
    );
  });

  it('accepts a negative signed value', () => {
    const config = loadYaml(MINIMAL_YAML, { AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__MAX_MESSAGES: '-1' });
    expect(config.notification_backend.jetstream.max_messages).toBe(-1);
  });

  it('rejects integers beyond the safe JS range', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__MAX_BYTES: '9223372036854775807' })).toThrow(
      'notification_backend.jetstream.max_bytes: must be an integer (at most 9007199254740991 in magnitude is supported)',
    );
  });

  it('takes strings verbatim, without trimming', () => {
    expect(loadYaml(MINIMAL_YAML, { AVISOSERVER_APPLICATION__BASE_URL: ' https://x ' }).application.base_url).toBe(' https://x ');
  });

  it('takes a numeric-looking string verbatim for a string field', () => {
    expect(loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__JWT_SECRET: '0001' }).auth.jwt_secret).toBe('0001');
  });

  it('accepts an enumeration in its exact spelling only', () => {
    expect(loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__MODE: 'trusted_proxy' }).auth.mode).toBe('trusted_proxy');
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__MODE: 'Direct' })).toThrow(
      'auth.mode: must be one of direct, trusted_proxy, got "Direct"',
    );
  });
});

describe('empty environment values', () => {
  it('set an empty string', () => {
    expect(loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__JWT_SECRET: '' }).auth.jwt_secret).toBe('');
  });

  it('make an optional string present', () => {
    expect(loadYaml(MINIMAL_YAML, { AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__TOKEN: '' }).notification_backend.jetstream.token).toBe(
      '',
    );
  });

  it('are a load error for a numeric field', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_APPLICATION__PORT: '' })).toThrow(
      'application.port: must be an integer between 0 and 65535, got ""',
    );
  });

  it('are a load error for an optional numeric field', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_METRICS__PORT: '' })).toThrow('metrics.port: must be an integer');
  });
});

describe('unknown keys set through the environment follow the section strictness (docs/design/rules/operations.md §1.3)', () => {
  it.each([
    'AVISOSERVER_FOO',
    'AVISOSERVER_APPLICATION__FOO',
    'AVISOSERVER_LOGGING__FOO',
    'AVISOSERVER_METRICS__FOO',
    'AVISOSERVER_WATCH_ENDPOINT__FOO',
    'AVISOSERVER_NOTIFICATION_BACKEND__FOO',
    'AVISOSERVER_NOTIFICATION_BACKEND__IN_MEMORY__FOO',
    'AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__FOO',
  ])('%s is ignored', (variable) => {
    const config = loadYaml(MINIMAL_YAML, { [variable]: 'x' });
    expect(JSON.stringify(config)).not.toContain('"foo"');
  });

  it('AVISOSERVER_AUTH__FOO is rejected', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__FOO: 'x' })).toThrow(new ConfigLoadError('auth: unknown field(s): foo'));
  });

  it('AVISOSERVER_ECPDS__FOO is rejected', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_ECPDS__FOO: 'x' })).toThrow('ecpds: unknown field(s): foo');
  });

  it('an unknown key inside a stream auth block is rejected', () => {
    expect(() =>
      loadDoc({ notification_schema: { mars: schema('mars') } }, { AVISOSERVER_NOTIFICATION_SCHEMA__MARS__AUTH__ALLOWED_ROLES: 'x' }),
    ).toThrow('notification_schema.mars.auth: unknown field(s): allowed_roles');
  });
});

describe('environment values inside notification_schema', () => {
  it('are coerced to the rule type (unlike YAML values there)', () => {
    const config = loadDoc(
      { notification_schema: { mars: schema('mars') } },
      {
        AVISOSERVER_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__CLASS__REQUIRED: 'no',
        AVISOSERVER_NOTIFICATION_SCHEMA__MARS__IDENTIFIER__CLASS__MAX_LENGTH: '3',
      },
    );
    expect(config.notification_schema?.mars?.identifier.class).toEqual({ type: 'StringHandler', required: false, max_length: 3 });
  });

  it('accept a JSON list literal for a list field', () => {
    const config = loadDoc(
      { notification_schema: { mars: schema('mars') } },
      {
        AVISOSERVER_NOTIFICATION_SCHEMA__MARS__TOPIC__KEY_ORDER: '["date", "class"]',
      },
    );
    expect(config.notification_schema?.mars?.topic?.key_order).toEqual(['date', 'class']);
  });

  it('accept a JSON object literal for a map field', () => {
    const config = loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__ADMIN_ROLES: '{"localrealm": ["admin"]}' });
    expect(config.auth.admin_roles).toEqual({ localrealm: ['admin'] });
  });

  it('report a list field given a plain string', () => {
    expect(() =>
      loadDoc({ notification_schema: { mars: schema('mars') } }, { AVISOSERVER_NOTIFICATION_SCHEMA__MARS__TOPIC__KEY_ORDER: 'class,date' }),
    ).toThrow('notification_schema.mars.topic.key_order: must be a list (from the environment, a JSON literal), got "class,date"');
  });

  it('report an invalid JSON literal', () => {
    expect(() => loadYaml(MINIMAL_YAML, { AVISOSERVER_AUTH__ADMIN_ROLES: '{"a": [' })).toThrow(
      'auth.admin_roles: must be a mapping, got "{\\"a\\": [" (from AVISOSERVER_AUTH__ADMIN_ROLES) which is not valid JSON',
    );
  });
});

describe('NATS_TOKEN', () => {
  it('fills jetstream.token when the configuration has none', () => {
    expect(loadYaml(MINIMAL_YAML, { NATS_TOKEN: 'from-env' }).notification_backend.jetstream.token).toBe('from-env');
  });

  it('loses to a configured token', () => {
    const config = loadYaml(MINIMAL_YAML, {
      NATS_TOKEN: 'from-env',
      AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__TOKEN: 'configured',
    });
    expect(config.notification_backend.jetstream.token).toBe('configured');
  });

  it('counts as unset when blank', () => {
    expect(loadYaml(MINIMAL_YAML, { NATS_TOKEN: '' }).notification_backend.jetstream.token).toBeUndefined();
  });
});
