import { availableParallelism } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigValidationError, validateConfig, validateJetStreamSettings, type ValidatedConfig } from '../../../src/config/validate.js';
import type { JetStreamConfig } from '../../../src/config/model.js';
import { loadDoc, merged, removeSandboxes, schema, type Doc } from './config-fixture.js';
import { thrownError } from '../../support/thrown-error.js';

afterAll(removeSandboxes);

const CONFIGURATION = 'startup.configuration.validation.failed';
const AUTH = 'startup.auth.validation.failed';
const PLUGIN = 'startup.auth.plugin_validation.failed';
const STREAM_AUTH = 'startup.auth.stream_validation.failed';
const METRICS = 'startup.metrics.validation.failed';
const ECPDS = 'startup.ecpds.validation.failed';
const BACKEND = 'startup.backend.initialization.failed';

function validate(patch: Doc): ValidatedConfig {
  return validateConfig(loadDoc(patch));
}

function failure(patch: Doc): ConfigValidationError {
  const error = thrownError(() => validate(patch), ConfigValidationError);
  expect(error.message).not.toContain('\n');
  return error;
}

function expectFailure(patch: Doc, event: string, message: string): void {
  const error = failure(patch);
  expect({ event: error.eventName, message: error.message }).toEqual({ event, message });
}

const JETSTREAM: Doc = { notification_backend: { kind: 'jetstream' } };
const AUTH_ON: Doc = {
  auth: { enabled: true, auth_o_tron_url: 'http://auth-o-tron:8080', jwt_secret: 'secret', admin_roles: { localrealm: ['admin'] } },
};
const withSchemas = (schemas: Doc, extra: Doc = {}): Doc => merged({ notification_schema: schemas }, extra);

describe('a valid configuration', () => {
  it('passes and is returned unchanged', () => {
    const config = loadDoc({ notification_schema: { mars: schema('mars') } });
    const result = validateConfig(config);
    expect(result.config).toBe(config);
    expect(result.strictMode).toBe(true);
  });
});

describe('B1.1 backend kind', () => {
  it('rejects an unknown kind even without any schema', () => {
    expectFailure({ notification_backend: { kind: 'redis' } }, CONFIGURATION, 'Unknown notification_backend kind: redis');
  });

  it('is case-sensitive', () => {
    expectFailure({ notification_backend: { kind: 'InMemory' } }, CONFIGURATION, 'Unknown notification_backend kind: InMemory');
  });

  it.each(['in_memory', 'jetstream'])('accepts %s', (kind) => {
    expect(() => validate({ notification_backend: { kind } })).not.toThrow();
  });

  it('runs before the schema checks', () => {
    const error = failure(withSchemas({ a: schema('x'), b: schema('x') }, { notification_backend: { kind: 'redis' } }));
    expect(error.message).toBe('Unknown notification_backend kind: redis');
  });
});

describe('backend settings (D8, D22)', () => {
  it.each(['max_history_per_topic', 'max_topics'])('rejects in_memory.%s: 0', (field) => {
    expectFailure(
      { notification_backend: { in_memory: { [field]: 0 } } },
      CONFIGURATION,
      `notification_backend.in_memory.${field}: must be greater than 0, got 0`,
    );
  });

  it('ignores in_memory settings when the backend is jetstream', () => {
    expect(() => validate({ notification_backend: { kind: 'jetstream', in_memory: { max_topics: 0 } } })).not.toThrow();
    expect(() => validate({ notification_backend: { kind: 'jetstream', in_memory: { max_total_size: '1K' } } })).not.toThrow();
  });

  it('rejects an in_memory.max_total_size that is not a size literal', () => {
    expectFailure(
      { notification_backend: { in_memory: { max_total_size: '256MB' } } },
      CONFIGURATION,
      "notification_backend.in_memory.max_total_size: size '256MB' has an unknown unit 'MB' (expected K, M, G, T, Ki, Mi, Gi or Ti, case-sensitive)",
    );
  });

  it('rejects an in_memory.max_total_size below 4 × max_body_bytes + 8 KiB, where a notify could not fit', () => {
    expectFailure(
      { notification_backend: { in_memory: { max_total_size: '1Mi' } } },
      CONFIGURATION,
      "notification_backend.in_memory.max_total_size: must be at least 1056768 bytes (4 × application.max_body_bytes + 8 KiB, so that any notification notify accepts fits), got '1Mi' (1048576 bytes)",
    );
  });

  it('accepts an in_memory.max_total_size of exactly 4 × max_body_bytes + 8 KiB', () => {
    // 4 × 1024 + 8192 = 12288 bytes = 12Ki.
    expect(() =>
      validate({ application: { max_body_bytes: 1024 }, notification_backend: { in_memory: { max_total_size: '12Ki' } } }),
    ).not.toThrow();
    expect(
      failure({ application: { max_body_bytes: 1025 }, notification_backend: { in_memory: { max_total_size: '12Ki' } } }).message,
    ).toMatch(/^notification_backend\.in_memory\.max_total_size: must be at least 12292 bytes/);
  });

  it.each(['workqueue', 'interest'])('rejects jetstream.retention_policy: %s', (policy) => {
    const error = failure({ notification_backend: { kind: 'jetstream', jetstream: { retention_policy: policy } } });
    expect(error.eventName).toBe(CONFIGURATION);
    expect(error.message).toMatch(new RegExp(`^notification_backend\\.jetstream\\.retention_policy: '${policy}' is not supported`));
  });

  it('ignores the jetstream retention policy when the backend is in_memory', () => {
    expect(() => validate({ notification_backend: { jetstream: { retention_policy: 'workqueue' } } })).not.toThrow();
  });
});

describe('application.workers needs a shared backend (D36)', () => {
  it('rejects several workers on the in_memory backend, saying why and what to do', () => {
    expectFailure(
      { application: { workers: 2 } },
      CONFIGURATION,
      'application.workers: 2 server processes need notification_backend.kind jetstream: the in_memory backend keeps its notifications inside one process (set application.workers to 1)',
    );
  });

  it('accepts one worker on the in_memory backend', () => {
    expect(() => validate({ application: { workers: 1 } })).not.toThrow();
  });

  it('accepts several workers on the jetstream backend', () => {
    expect(() => validate(merged(JETSTREAM, { application: { workers: 8 } }))).not.toThrow();
  });

  it('judges auto by the CPUs it resolves to here', () => {
    const cpus = availableParallelism();
    if (cpus === 1) {
      expect(() => validate({ application: { workers: 'auto' } })).not.toThrow();
      return;
    }
    expectFailure(
      { application: { workers: 'auto' } },
      CONFIGURATION,
      `application.workers: auto means ${cpus} server processes here (one per usable CPU), which need notification_backend.kind jetstream: the in_memory backend keeps its notifications inside one process (set application.workers to 1)`,
    );
  });
});

describe('B1.2 unique topic bases', () => {
  it('rejects two schemas with the same base ignoring ASCII case, naming both', () => {
    expectFailure(
      withSchemas({ mars: schema('mars'), mars_copy: schema('MARS') }),
      CONFIGURATION,
      "Schemas 'mars' and 'mars_copy' both define topic base 'MARS'",
    );
  });

  it('names the earlier schema first and quotes the base as the later one spells it', () => {
    expectFailure(
      withSchemas({ weather: schema('weather'), WEATHER: schema('WeAtHeR') }),
      CONFIGURATION,
      "Schemas 'weather' and 'WEATHER' both define topic base 'WeAtHeR'",
    );
  });

  it('rejects duplicates whether or not they have a storage_policy', () => {
    const error = failure(withSchemas({ a: schema('x', { storage_policy: { retention_time: '1d' } }), b: schema('x') }, JETSTREAM));
    expect(error.message).toBe("Schemas 'a' and 'b' both define topic base 'x'");
  });
});

describe('B1.3 key_order entries are declared identifiers (D8)', () => {
  it('rejects an undeclared name, naming the schema and the entry', () => {
    expectFailure(
      withSchemas({ mars: schema('mars', { topic: { key_order: ['class', 'stream'] } }) }),
      CONFIGURATION,
      "notification_schema.mars.topic.key_order[1]: 'stream' is not declared in notification_schema.mars.identifier",
    );
  });

  it('accepts an empty key_order', () => {
    expect(() => validate(withSchemas({ mars: schema('mars', { topic: { key_order: [] } }) }))).not.toThrow();
  });
});

describe('B1.4 storage_policy needs topic, and every schema needs a topic (S13)', () => {
  it('rejects a storage_policy without topic', () => {
    expectFailure(
      withSchemas({ mars: { identifier: {}, storage_policy: { retention_time: '1d' } } }, JETSTREAM),
      CONFIGURATION,
      'notification_schema.mars.storage_policy: requires notification_schema.mars.topic, which is missing',
    );
  });

  it('rejects a schema without topic', () => {
    expectFailure(
      withSchemas({ mars: { identifier: {} } }),
      CONFIGURATION,
      'notification_schema.mars.topic: required field is missing (every event schema needs topic.base and topic.key_order)',
    );
  });
});

describe('B1.5 storage_policy values', () => {
  it.each([
    ['abc', "duration 'abc' must be an integer followed by a unit (s, m, h, d or w)"],
    ['10', "duration '10' has no unit (expected s, m, h, d or w)"],
    ['0s', "must be greater than 0, got '0s'"],
  ])('rejects retention_time %j', (value, reason) => {
    expectFailure(
      withSchemas({ mars: schema('mars', { storage_policy: { retention_time: value } }) }, JETSTREAM),
      CONFIGURATION,
      `notification_schema.mars.storage_policy.retention_time: ${reason}`,
    );
  });

  it.each([
    ['10', "size '10' has no unit (expected K, M, G, T, Ki, Mi, Gi or Ti)"],
    ['0Mi', "size '0Mi' must be greater than 0"],
  ])('rejects max_size %j', (value, reason) => {
    expectFailure(
      withSchemas({ mars: schema('mars', { storage_policy: { max_size: value } }) }, JETSTREAM),
      CONFIGURATION,
      `notification_schema.mars.storage_policy.max_size: ${reason}`,
    );
  });

  it.each([0, -5])('rejects max_messages %i', (value) => {
    expectFailure(
      withSchemas({ mars: schema('mars', { storage_policy: { max_messages: value } }) }, JETSTREAM),
      CONFIGURATION,
      `notification_schema.mars.storage_policy.max_messages: must be greater than 0, got ${value}`,
    );
  });
});

describe('B1.6 storage_policy support by backend', () => {
  it.each([
    ['retention_time', '1d'],
    ['max_messages', 10],
    ['max_size', '1Mi'],
    ['allow_duplicates', false],
    ['compression', false],
  ])('in_memory rejects storage_policy.%s', (field, value) => {
    expectFailure(
      withSchemas({ mars: schema('mars', { storage_policy: { [field]: value } }) }),
      CONFIGURATION,
      `Schema 'mars' storage_policy.${field} is not supported by backend 'in_memory'`,
    );
  });

  it('jetstream accepts all five fields', () => {
    const policy = { retention_time: '7d', max_messages: 5000, max_size: '64Mi', allow_duplicates: true, compression: true };
    expect(() => validate(withSchemas({ mars: schema('mars', { storage_policy: policy }) }, JETSTREAM))).not.toThrow();
  });

  it('an empty storage_policy is accepted on in_memory', () => {
    expect(() => validate(withSchemas({ mars: schema('mars', { storage_policy: {} }) }))).not.toThrow();
  });
});

describe('topic.base syntax (D31, docs/design/rules/reference-0.13.md §6)', () => {
  const rule = 'topic base must match [A-Za-z0-9][A-Za-z0-9_-]*';

  it.each([
    '',
    '.',
    '%',
    '*',
    '>',
    'ma.rs',
    'ma*',
    'ma>',
    'ma%2E',
    'ma rs',
    'ma\trs',
    'mars\n',
    '\u00e9',
    '_mars',
    '-mars',
    'ma/rs',
    'ma+rs',
  ])('rejects %j, naming the schema', (base) => {
    expectFailure(withSchemas({ mars: schema(base) }), CONFIGURATION, `Schema 'mars' has invalid topic base: ${rule}`);
  });

  it.each(['mars', 'extreme_event', 'Diss-2', 'weather_v2', '9', 'UPPER', 'a-', 'a_'])('accepts %j', (base) => {
    expect(() => validate(withSchemas({ mars: schema(base) }))).not.toThrow();
  });

  it('is checked before duplicate bases', () => {
    const error = failure(withSchemas({ a: schema('x'), b: schema('X'), c: schema('bad.base') }));
    expect(error.message).toBe(`Schema 'c' has invalid topic base: ${rule}`);
  });

  it('still accepts a key_order that leaves scalar fields out (D18 filters them)', () => {
    const partial = schema('mars', { topic: { key_order: ['class'] } });
    expect(Object.keys((partial as { identifier: Record<string, unknown> }).identifier).length).toBeGreaterThan(1);
    expect(() => validate(withSchemas({ mars: partial }))).not.toThrow();
  });
});

describe('spatial identifier fields (D19, docs/design/rules/schema-and-validation.md §5.9)', () => {
  const polygonRule = { type: 'PolygonHandler', required: false };
  const cloudRule = { type: 'PointCloudHandler', required: true };

  it('rejects a PolygonHandler field not named polygon', () => {
    expectFailure(
      withSchemas({ ev: schema('ev', { identifier: { area: polygonRule } }) }),
      CONFIGURATION,
      "notification_schema.ev.identifier.area: a PolygonHandler field must be named 'polygon' (spatial filters look it up by that name)",
    );
  });

  it('rejects a PointCloudHandler field not named point_cloud', () => {
    expectFailure(
      withSchemas({ ev: schema('ev', { identifier: { points: cloudRule } }) }),
      CONFIGURATION,
      "notification_schema.ev.identifier.points: a PointCloudHandler field must be named 'point_cloud'",
    );
  });

  it('rejects more than one spatial field', () => {
    expectFailure(
      withSchemas({ ev: schema('ev', { identifier: { polygon: polygonRule, point_cloud: cloudRule } }) }),
      CONFIGURATION,
      'notification_schema.ev.identifier: at most one spatial field (PolygonHandler or PointCloudHandler) per schema, got polygon, point_cloud',
    );
  });

  it('rejects a polygon identifier of another type in a point-cloud schema', () => {
    expectFailure(
      withSchemas({ ev: schema('ev', { identifier: { point_cloud: cloudRule, polygon: { type: 'StringHandler', required: false } } }) }),
      CONFIGURATION,
      "notification_schema.ev.identifier.polygon: a point-cloud schema must not declare a 'polygon' identifier (the name is reserved for the watch/replay filter)",
    );
  });

  it.each([0, 10001, -1])('rejects max_points %i', (max) => {
    expectFailure(
      withSchemas({ ev: schema('ev', { identifier: { point_cloud: { ...cloudRule, max_points: max } } }) }),
      CONFIGURATION,
      `notification_schema.ev.identifier.point_cloud.max_points: field 'point_cloud' max_points must be between 1 and 10000, got ${max}`,
    );
  });

  it.each([1, 10000])('accepts max_points %i', (max) => {
    expect(() =>
      validate(withSchemas({ ev: schema('ev', { identifier: { point_cloud: { ...cloudRule, max_points: max } } }) })),
    ).not.toThrow();
  });

  it('rejects point_cloud in key_order', () => {
    expectFailure(
      withSchemas({ ev: schema('ev', { topic: { key_order: ['class', 'point_cloud'] }, identifier: { point_cloud: cloudRule } }) }),
      CONFIGURATION,
      "notification_schema.ev.topic.key_order[1]: PointCloudHandler field 'point_cloud' must not be listed in key_order",
    );
  });

  it('accepts polygon in key_order with a warning', () => {
    const result = validate(
      withSchemas({ ev: schema('ev', { topic: { key_order: ['class', 'polygon'] }, identifier: { polygon: polygonRule } }) }),
    );
    const warning = result.warnings.find((w) => w.event === 'configuration.schema.spatial_key_order');
    expect(warning?.message).toMatch(
      /^notification_schema\.ev\.topic\.key_order\[1\]: PolygonHandler field 'polygon' is listed in key_order/,
    );
  });

  it('gives no spatial warning when polygon stays out of key_order', () => {
    const result = validate(withSchemas({ ev: schema('ev', { identifier: { polygon: polygonRule } }) }));
    expect(result.warnings.map((w) => w.event)).not.toContain('configuration.schema.spatial_key_order');
  });
});

describe('ranges (D19)', () => {
  it.each([
    ['IntHandler', [10, 1], 'min 10 is greater than max 1'],
    ['FloatHandler', [1.5, -2], 'min 1.5 is greater than max -2'],
  ])('rejects an inverted %s range', (type, range, reason) => {
    expectFailure(
      withSchemas({ mars: schema('mars', { identifier: { step: { type, required: false, range } } }) }),
      CONFIGURATION,
      `notification_schema.mars.identifier.step.range: ${reason}`,
    );
  });

  it('accepts a single-value range', () => {
    expect(() =>
      validate(withSchemas({ mars: schema('mars', { identifier: { step: { type: 'IntHandler', required: false, range: [3, 3] } } }) })),
    ).not.toThrow();
  });
});

describe('per-schema max_historical_notifications (D8)', () => {
  it.each([0, -1])('rejects %i', (value) => {
    expectFailure(
      withSchemas({ mars: schema('mars', { max_historical_notifications: value }) }),
      CONFIGURATION,
      `notification_schema.mars.max_historical_notifications: must be a positive integer, got ${value}`,
    );
  });

  it('accepts 1', () => {
    expect(() => validate(withSchemas({ mars: schema('mars', { max_historical_notifications: 1 }) }))).not.toThrow();
  });
});

describe('B2 global auth', () => {
  it('is not checked when auth is disabled', () => {
    expect(() => validate({ auth: { enabled: false, timeout_ms: 0, jwt_secret: ' padded ' } })).not.toThrow();
  });

  it('accepts a complete direct configuration', () => {
    expect(() => validate(AUTH_ON)).not.toThrow();
  });

  it.each(['auth_o_tron_url', 'jwt_secret'])('rejects a padded %s without echoing it', (field) => {
    const error = failure(merged(AUTH_ON, { auth: { [field]: ' value ' } }));
    expect({ event: error.eventName, message: error.message }).toEqual({
      event: AUTH,
      message: `auth.${field}: must not have leading or trailing whitespace`,
    });
  });

  it('rejects timeout_ms: 0', () => {
    expectFailure(merged(AUTH_ON, { auth: { timeout_ms: 0 } }), AUTH, 'auth.timeout_ms: must be greater than 0 when auth is enabled');
  });

  it('rejects empty admin_roles', () => {
    const patch = merged(AUTH_ON, {});
    (patch.auth as Doc).admin_roles = {};
    expectFailure(patch, AUTH, 'auth.admin_roles: must define at least one realm with roles when auth is enabled');
  });

  it('rejects an empty realm list', () => {
    expectFailure(merged(AUTH_ON, { auth: { admin_roles: { other: [] } } }), AUTH, 'auth.admin_roles.other: role list must not be empty');
  });

  it.each([' ', ' realm', 'realm '])('rejects the realm name %j', (realm) => {
    expectFailure(
      merged(AUTH_ON, { auth: { admin_roles: { [realm]: ['admin'] } } }),
      AUTH,
      `auth.admin_roles: realm name '${realm}' must not be blank or have leading/trailing whitespace`,
    );
  });

  it.each(['', ' admin'])('rejects the role %j', (role) => {
    expectFailure(
      merged(AUTH_ON, { auth: { admin_roles: { localrealm: ['admin', role] } } }),
      AUTH,
      `auth.admin_roles.localrealm[1]: role '${role}' must not be blank or have leading/trailing whitespace`,
    );
  });

  it('rejects direct mode without auth_o_tron_url', () => {
    expectFailure(
      merged(AUTH_ON, { auth: { auth_o_tron_url: '' } }),
      AUTH,
      'auth.auth_o_tron_url: must not be blank when auth.mode is direct',
    );
  });

  it('rejects direct mode without jwt_secret', () => {
    expectFailure(merged(AUTH_ON, { auth: { jwt_secret: '   ' } }), AUTH, 'auth.jwt_secret: must not be blank when auth.mode is direct');
  });

  it('rejects trusted_proxy mode without jwt_secret', () => {
    expectFailure(
      merged(AUTH_ON, { auth: { mode: 'trusted_proxy', jwt_secret: '' } }),
      AUTH,
      'auth.jwt_secret: must not be blank when auth.mode is trusted_proxy',
    );
  });

  it('accepts trusted_proxy mode without auth_o_tron_url', () => {
    expect(() => validate(merged(AUTH_ON, { auth: { mode: 'trusted_proxy', auth_o_tron_url: '' } }))).not.toThrow();
  });
});

describe('B3 stream plugins', () => {
  const ecpds = { username: 'svc', password: 'pw', servers: ['https://ecpds.example.int'], match_key: 'class' };
  const stream = (auth: Doc): Doc => merged(AUTH_ON, withSchemas({ mars: schema('mars', { auth }) }, { ecpds }));

  it('rejects an empty plugin list', () => {
    expectFailure(stream({ required: true, plugins: [] }), PLUGIN, 'notification_schema.mars.auth.plugins: must not be empty when present');
  });

  it('rejects an unknown plugin', () => {
    expectFailure(
      stream({ required: true, plugins: ['ldap'] }),
      PLUGIN,
      "notification_schema.mars.auth.plugins[0]: unknown plugin 'ldap' (known: ecpds)",
    );
  });

  it('rejects a plugin on a stream that does not require auth', () => {
    expectFailure(
      stream({ required: false, plugins: ['ecpds'] }),
      PLUGIN,
      'notification_schema.mars.auth.required: must be true when auth.plugins is set',
    );
  });

  it('accepts ecpds on a stream that requires auth', () => {
    expect(() => validate(stream({ required: true, plugins: ['ecpds'] }))).not.toThrow();
  });
});

describe('B4 stream auth', () => {
  const withStreamAuth = (auth: Doc, global: Doc = AUTH_ON): Doc => merged(global, withSchemas({ mars: schema('mars', { auth }) }));

  it.each(['read_roles', 'write_roles'])('rejects an empty %s map', (field) => {
    expectFailure(
      withStreamAuth({ required: true, [field]: {} }),
      STREAM_AUTH,
      `notification_schema.mars.auth.${field}: must not be empty when present`,
    );
  });

  it('rejects an empty realm list', () => {
    expectFailure(
      withStreamAuth({ required: true, read_roles: { localrealm: [] } }),
      STREAM_AUTH,
      'notification_schema.mars.auth.read_roles.localrealm: role list must not be empty',
    );
  });

  it('rejects a padded realm', () => {
    expectFailure(
      withStreamAuth({ required: true, write_roles: { 'localrealm ': ['producer'] } }),
      STREAM_AUTH,
      "notification_schema.mars.auth.write_roles: realm name 'localrealm ' must not be blank or have leading/trailing whitespace",
    );
  });

  it('rejects a blank role', () => {
    expectFailure(
      withStreamAuth({ required: true, read_roles: { localrealm: [' '] } }),
      STREAM_AUTH,
      "notification_schema.mars.auth.read_roles.localrealm[0]: role ' ' must not be blank or have leading/trailing whitespace",
    );
  });

  it('checks the role maps even when global auth is disabled', () => {
    expectFailure(
      withStreamAuth({ required: false, read_roles: {} }, {}),
      STREAM_AUTH,
      'notification_schema.mars.auth.read_roles: must not be empty when present',
    );
  });

  it('rejects required: false with role maps when global auth is enabled', () => {
    expectFailure(
      withStreamAuth({ required: false, read_roles: { localrealm: ['*'] } }),
      STREAM_AUTH,
      'notification_schema.mars.auth.required: is false but read_roles is set',
    );
  });

  it('rejects required: true when global auth is disabled', () => {
    expectFailure(
      withStreamAuth({ required: true }, {}),
      STREAM_AUTH,
      'notification_schema.mars.auth.required: is true but global auth is disabled (auth.enabled is false)',
    );
  });

  it('rejects role maps when global auth is disabled', () => {
    expectFailure(
      withStreamAuth({ required: false, write_roles: { localrealm: ['producer'] } }, {}),
      STREAM_AUTH,
      'notification_schema.mars.auth.write_roles: is set but global auth is disabled (auth.enabled is false)',
    );
  });

  it('accepts required: false alone when global auth is disabled', () => {
    expect(() => validate(withStreamAuth({ required: false }, {}))).not.toThrow();
  });

  it('accepts required: true with role maps when global auth is enabled', () => {
    expect(() =>
      validate(withStreamAuth({ required: true, read_roles: { localrealm: ['*'] }, write_roles: { localrealm: ['producer'] } })),
    ).not.toThrow();
  });
});

describe('B5 metrics', () => {
  it('is not checked when metrics are disabled', () => {
    expect(() => validate({ metrics: { enabled: false, port: 8000 } })).not.toThrow();
  });

  it('rejects a missing port', () => {
    expectFailure({ metrics: { enabled: true } }, METRICS, 'metrics.port: is required when metrics.enabled is true');
  });

  it('rejects port 0', () => {
    expectFailure({ metrics: { enabled: true, port: 0 } }, METRICS, 'metrics.port: must not be 0 when metrics.enabled is true');
  });

  it('rejects the application port, whatever the hosts', () => {
    expectFailure(
      { metrics: { enabled: true, host: '10.0.0.1', port: 8000 } },
      METRICS,
      'metrics.port: must differ from application.port (both are 8000)',
    );
  });

  it('accepts a distinct port', () => {
    expect(() => validate({ metrics: { enabled: true, port: 9090 } })).not.toThrow();
  });
});

describe('B6 ECPDS', () => {
  const ecpds: Doc = { username: 'svc', password: 'pw', servers: ['https://ecpds.example.int/api'], match_key: 'destination' };
  const diss = (identifierPatch: Doc = {}): Doc =>
    schema('diss', {
      topic: { key_order: ['class'] },
      identifier: merged({ destination: { type: 'StringHandler', required: true } }, identifierPatch),
      auth: { required: true, plugins: ['ecpds'] },
    });
  const config = (ecpdsPatch: Doc | undefined, identifierPatch: Doc = {}): Doc => {
    const doc = merged(AUTH_ON, withSchemas({ diss: diss(identifierPatch) }));
    return ecpdsPatch === undefined ? doc : merged(doc, { ecpds: merged(ecpds, ecpdsPatch) });
  };

  it('accepts a complete setup', () => {
    expect(() => validate(config({}))).not.toThrow();
  });

  it('does not validate an ecpds section no stream uses', () => {
    expect(() => validate({ ecpds: merged(ecpds, { servers: [], username: '' }) })).not.toThrow();
  });

  it('requires the section when a stream lists the plugin', () => {
    expectFailure(config(undefined), ECPDS, "ecpds: section is required because schema 'diss' lists the ecpds plugin");
  });

  it('rejects an empty server list', () => {
    expectFailure(config({ servers: [] }), ECPDS, 'ecpds.servers: must list at least one server');
  });

  it.each([
    ['', 'must not be blank'],
    ['ecpds.example.int', "'ecpds.example.int' is not an absolute URL"],
    ['ftp://ecpds.example.int', "'ftp://ecpds.example.int' must use http or https"],
    ['http://ecpds.example.int', "'http://ecpds.example.int' uses http for a host other than 127.0.0.1, [::1] or localhost; use https"],
    ['https://ecpds.example.int/?x=1', "'https://ecpds.example.int/?x=1' must not have a query string"],
    ['https://ecpds.example.int/#top', "'https://ecpds.example.int/#top' must not have a fragment"],
  ])('rejects the server %j', (server, reason) => {
    expectFailure(config({ servers: ['https://ok.example.int', server] }), ECPDS, `ecpds.servers[1]: ${reason}`);
  });

  it.each(['http://127.0.0.1:8080', 'http://[::1]:8080/ecpds', 'http://localhost'])('accepts plain http to %s', (server) => {
    expect(() => validate(config({ servers: [server] }))).not.toThrow();
  });

  it.each(['username', 'password', 'target_field'])('rejects a blank or padded %s', (field) => {
    expectFailure(config({ [field]: ' x' }), ECPDS, `ecpds.${field}: must not be blank or have leading/trailing whitespace`);
    expectFailure(config({ [field]: '' }), ECPDS, `ecpds.${field}: must not be blank or have leading/trailing whitespace`);
  });

  it.each(['', 'dest ination', 'a/b', 'a\u0000b'])('rejects the match_key %j', (key) => {
    const error = failure(config({ match_key: key }));
    expect(error.eventName).toBe(ECPDS);
    expect(error.message).toMatch(/^ecpds\.match_key: must not be blank or contain whitespace, '\/' or NUL/);
  });

  it.each(['cache_ttl_seconds', 'max_entries', 'request_timeout_seconds', 'connect_timeout_seconds'])('rejects %s: 0', (field) => {
    expectFailure(config({ [field]: 0 }), ECPDS, `ecpds.${field}: must be greater than 0, got 0`);
  });

  it('rejects a match_key that is not an identifier of a plugin stream', () => {
    expectFailure(
      config({ match_key: 'target' }),
      ECPDS,
      "notification_schema.diss.identifier: ecpds.match_key 'target' is not a declared identifier field",
    );
  });

  it('rejects a match_key field that is not required', () => {
    expectFailure(
      config({}, { destination: { required: false } }),
      ECPDS,
      'notification_schema.diss.identifier.destination.required: must be true because ecpds.match_key names this field',
    );
  });
});

describe('B7 watch limits (+ D8, D9)', () => {
  it.each([
    'sse_heartbeat_interval_sec',
    'connection_max_duration_sec',
    'replay_batch_size',
    'concurrent_notification_processing',
    'max_historical_notifications',
    'max_buffered_events',
    'max_buffered_bytes',
    'max_total_buffered_bytes',
    'stall_timeout_sec',
  ])('rejects %s: 0', (field) => {
    expectFailure({ watch_endpoint: { [field]: 0 } }, CONFIGURATION, `watch_endpoint.${field}: must be greater than 0, got 0`);
  });

  it('rejects a per-stream byte bound that cannot hold four of the largest notifications', () => {
    expectFailure(
      { application: { max_body_bytes: 1000 }, watch_endpoint: { max_buffered_bytes: 3999 } },
      CONFIGURATION,
      'watch_endpoint.max_buffered_bytes: must be at least 4 × application.max_body_bytes (4000), got 3999',
    );
    expect(() => validate({ application: { max_body_bytes: 1000 }, watch_endpoint: { max_buffered_bytes: 4000 } })).not.toThrow();
  });

  it('rejects a process byte bound below the per-stream one', () => {
    expectFailure(
      { watch_endpoint: { max_buffered_bytes: 2_000_000, max_total_buffered_bytes: 1_999_999 } },
      CONFIGURATION,
      'watch_endpoint.max_total_buffered_bytes: must be at least watch_endpoint.max_buffered_bytes (2000000), got 1999999',
    );
  });

  it('accepts replay_batch_delay_ms: 0 (no pause)', () => {
    expect(() => validate({ watch_endpoint: { replay_batch_delay_ms: 0 } })).not.toThrow();
  });

  it('runs after the other stages', () => {
    const error = failure({ watch_endpoint: { replay_batch_size: 0 }, metrics: { enabled: true } });
    expect(error.eventName).toBe(METRICS);
  });
});

describe('strict mode (docs/design/rules/operations.md §1.4.8, docs/design/rules/schema-and-validation.md §3.1)', () => {
  const some = { notification_schema: { mars: schema('mars') } };
  it.each([
    ['non-empty', 'unset', some, undefined, true, false],
    ['empty', 'unset', { notification_schema: {} }, undefined, false, false],
    ['absent', 'unset', {}, undefined, false, false],
    ['non-empty', 'false', some, false, false, true],
    ['empty', 'false', { notification_schema: {} }, false, false, false],
    ['absent', 'false', {}, false, false, false],
    ['non-empty', 'true', some, true, true, false],
    ['empty', 'true', { notification_schema: {} }, true, true, false],
    ['absent', 'true', {}, true, true, false],
  ])('schema %s, strict %s', (_schemas, _strict, patch, explicit, strictMode, warns) => {
    const result = validate(merged(patch, explicit === undefined ? {} : { notification_schema_strict: explicit }));
    expect(result.strictMode).toBe(strictMode);
    const warning = result.warnings.find((w) => w.event === 'configuration.schema_strict.explicit_disabled');
    expect(warning !== undefined).toBe(warns);
  });
});

describe('warnings', () => {
  it('warns that admin endpoints are open when global auth is disabled (D12)', () => {
    const warning = validate({}).warnings.find((w) => w.event === 'configuration.auth.admin_open');
    expect(warning?.message).toContain('admin endpoints');
  });

  it('does not warn about admin endpoints when auth is enabled', () => {
    expect(validate(AUTH_ON).warnings.map((w) => w.event)).not.toContain('configuration.auth.admin_open');
  });
});

describe('JetStream reconnect settings (docs/design/rules/reference-0.13.md §6)', () => {
  const DEPRECATED = 'configuration.setting.deprecated';

  it('defaults max_reconnect_attempts to 0 (unlimited)', () => {
    expect(loadDoc(JETSTREAM).notification_backend.jetstream.max_reconnect_attempts).toBe(0);
  });

  it.each([true, false])('accepts enable_auto_reconnect: %s with a deprecation warning', (value) => {
    const result = validate(merged(JETSTREAM, { notification_backend: { jetstream: { enable_auto_reconnect: value } } }));
    const warning = result.warnings.find((w) => w.event === DEPRECATED);
    expect(warning?.message).toBe(
      'notification_backend.jetstream.enable_auto_reconnect is deprecated and ignored: the NATS client always reconnects, bounded by max_reconnect_attempts (0 = unlimited)',
    );
  });

  it('does not warn when enable_auto_reconnect is absent', () => {
    expect(validate(JETSTREAM).warnings.map((w) => w.event)).not.toContain(DEPRECATED);
  });
});

describe('application.homepage links (D29, docs/design/rules/reference-0.13.md §5)', () => {
  const KEYS = ['client_documentation_url', 'client_repository_url', 'server_documentation_url', 'server_repository_url'];
  const homepage = (key: string, value: string): Doc => ({ application: { homepage: { [key]: value } } });

  it('has the documented defaults, all of them valid', () => {
    const config = loadDoc({});
    expect(config.application.homepage).toEqual({
      client_documentation_url: 'https://sites.ecmwf.int/docs/aviso-client/main/',
      client_repository_url: 'https://github.com/ecmwf/aviso-client',
      server_documentation_url: 'https://github.com/aviso-ts/aviso-ts/tree/main/docs',
      server_repository_url: 'https://github.com/aviso-ts/aviso-ts',
    });
    expect(() => validateConfig(config)).not.toThrow();
  });

  it.each(KEYS)('takes %s from AVISOSERVER_APPLICATION__HOMEPAGE__<KEY>', (key) => {
    const config = loadDoc({}, { [`AVISOSERVER_APPLICATION__HOMEPAGE__${key.toUpperCase()}`]: 'https://docs.example.int/aviso' });
    expect(config.application.homepage[key as keyof typeof config.application.homepage]).toBe('https://docs.example.int/aviso');
  });

  const BAD = [
    '',
    '/docs',
    'docs.example.int',
    'javascript:alert(1)',
    'data:text/html,<b>x</b>',
    'https://',
    'https://user@host',
    'https://user:pw@host',
    'https://:pw@host',
    'ftp://host/docs',
    'mailto:ops@example.int',
    ' https://host',
    'https://host/\tdocs',
    'https://ho\nst',
  ];
  for (const key of KEYS) {
    it.each(BAD)(`rejects ${key} %j without echoing the value`, (value) => {
      expectFailure(
        homepage(key, value),
        CONFIGURATION,
        `application.homepage.${key} must be an absolute HTTP(S) URL with a host and no embedded credentials`,
      );
    });
  }

  it.each(['http://localhost:8000/docs', 'https://docs.example.int/a?b=c#d', 'https://[::1]/x', 'HTTPS://Example.INT'])(
    'accepts %j',
    (value) => {
      for (const key of KEYS) expect(() => validate(homepage(key, value))).not.toThrow();
    },
  );

  it('reports the first bad key in the documented order', () => {
    const error = failure({ application: { homepage: { server_repository_url: '/x', client_repository_url: '/y' } } });
    expect(error.message).toMatch(/^application\.homepage\.client_repository_url /);
  });
});

describe('C1 JetStream settings', () => {
  const js = (patch: Partial<JetStreamConfig> = {}): JetStreamConfig => ({
    ...loadDoc(JETSTREAM).notification_backend.jetstream,
    ...patch,
  });

  const c1Failure = (settings: JetStreamConfig): ConfigValidationError =>
    thrownError(() => validateJetStreamSettings(settings), ConfigValidationError);

  it('accepts the defaults', () => {
    expect(() => validateJetStreamSettings(js())).not.toThrow();
  });

  it('rejects a blank nats_url', () => {
    const error = c1Failure(js({ nats_url: '  ' }));
    expect({ event: error.eventName, message: error.message }).toEqual({
      event: BACKEND,
      message: 'notification_backend.jetstream.nats_url: must not be blank',
    });
  });

  it.each([
    'timeout_seconds',
    'retry_attempts',
    'reconnect_delay_ms',
    'publish_retry_attempts',
    'publish_retry_base_delay_ms',
    'live_gap_wait_ms',
  ] as const)('rejects %s: 0', (field) => {
    const error = c1Failure(js({ [field]: 0 }));
    expect({ event: error.eventName, message: error.message }).toEqual({
      event: BACKEND,
      message: `notification_backend.jetstream.${field}: must be greater than 0, got 0`,
    });
  });

  it('accepts max_reconnect_attempts: 0 (unlimited)', () => {
    expect(() => validateJetStreamSettings(js({ max_reconnect_attempts: 0 }))).not.toThrow();
  });

  it.each([
    ['1mo', "notification_backend.jetstream.retention_time: duration '1mo' has an unknown unit 'mo' (expected s, m, h, d or w)"],
    ['0d', "notification_backend.jetstream.retention_time: must be greater than 0, got '0d'"],
  ])('rejects retention_time %j', (value, message) => {
    const error = c1Failure(js({ retention_time: value }));
    expect({ event: error.eventName, message: error.message }).toEqual({ event: BACKEND, message });
  });

  it('accepts a valid retention_time', () => {
    expect(() => validateJetStreamSettings(js({ retention_time: '30d' }))).not.toThrow();
  });
});

describe('notification_endpoint (D48, docs/api.md#batch-notify-decision-d48)', () => {
  it('defaults to 1000 items and 16 MiB a batch, and takes a partial section', () => {
    expect(loadDoc({}).notification_endpoint).toEqual({ max_batch_items: 1000, max_batch_bytes: 16777216 });
    expect(loadDoc({ notification_endpoint: { max_batch_items: 50 } }).notification_endpoint).toEqual({
      max_batch_items: 50,
      max_batch_bytes: 16777216,
    });
    expect(() => validate({ notification_endpoint: { max_batch_items: 1, max_batch_bytes: 1 } })).not.toThrow();
  });

  it.each(['max_batch_items', 'max_batch_bytes'])('rejects %s: 0', (field) => {
    expectFailure(
      { notification_endpoint: { [field]: 0 } },
      CONFIGURATION,
      `notification_endpoint.${field}: must be greater than 0, got 0`,
    );
  });

  it('takes max_batch_items from AVISOSERVER_NOTIFICATION_ENDPOINT__MAX_BATCH_ITEMS', () => {
    expect(loadDoc({}, { AVISOSERVER_NOTIFICATION_ENDPOINT__MAX_BATCH_ITEMS: '20' }).notification_endpoint.max_batch_items).toBe(20);
  });
});

describe('idempotency (docs/configuration.md, docs/api.md "Idempotent notify")', () => {
  it('defaults to a 2m window, 100000 in-memory keys and the AVISO_IDEMPOTENCY bucket', () => {
    const config = loadDoc({});
    expect(config.idempotency).toEqual({ window: '2m', in_memory_max_keys: 100000 });
    expect(config.notification_backend.jetstream.idempotency_bucket).toBe('AVISO_IDEMPOTENCY');
    expect(() => validateConfig(config)).not.toThrow();
  });

  it.each(['1s', '90s', '1h', '24h', '1d'])('accepts window %s', (window) => {
    expect(() => validate({ idempotency: { window } })).not.toThrow();
  });

  it.each(['0s', '25h', '2d', '1w'])('rejects window %s outside 1s..24h', (window) => {
    expectFailure({ idempotency: { window } }, CONFIGURATION, `idempotency.window: must be between 1s and 24h, got '${window}'`);
  });

  it('rejects a window that is no duration literal, with the parser reason', () => {
    expectFailure(
      { idempotency: { window: '2 minutes' } },
      CONFIGURATION,
      "idempotency.window: duration '2 minutes' has an unknown unit ' minutes' (expected s, m, h, d or w)",
    );
  });

  it('rejects in_memory_max_keys: 0', () => {
    expectFailure(
      { idempotency: { in_memory_max_keys: 0 } },
      CONFIGURATION,
      'idempotency.in_memory_max_keys: must be greater than 0, got 0',
    );
  });

  it('takes the window from AVISOSERVER_IDEMPOTENCY__WINDOW', () => {
    expect(loadDoc({}, { AVISOSERVER_IDEMPOTENCY__WINDOW: '5m' }).idempotency.window).toBe('5m');
  });

  it('refuses a bucket name NATS cannot take when the JetStream backend starts', () => {
    const settings = loadDoc(merged(JETSTREAM, { notification_backend: { jetstream: { idempotency_bucket: 'a.b' } } })).notification_backend
      .jetstream;
    let caught: unknown;
    try {
      validateJetStreamSettings(settings);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigValidationError);
    expect((caught as ConfigValidationError).eventName).toBe(BACKEND);
    expect((caught as ConfigValidationError).message).toBe(
      "notification_backend.jetstream.idempotency_bucket: must consist of letters, digits, '_' and '-', got 'a.b'",
    );
  });

  it.each([
    ['a.b', "notification_backend.jetstream.history_ledger_bucket: must consist of letters, digits, '_' and '-', got 'a.b'"],
    [
      'AVISO_IDEMPOTENCY',
      "notification_backend.jetstream.history_ledger_bucket: must differ from idempotency_bucket ('AVISO_IDEMPOTENCY')",
    ],
  ])('refuses the history ledger bucket %s when the JetStream backend starts (D42)', (name, message) => {
    const settings = loadDoc(merged(JETSTREAM, { notification_backend: { jetstream: { history_ledger_bucket: name } } }))
      .notification_backend.jetstream;
    expect(thrownError(() => validateJetStreamSettings(settings), ConfigValidationError).message).toBe(message);
  });
});
