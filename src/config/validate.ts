import { smallestTotalBytes } from '../notification/stored-bytes.js';
import { otlpTarget } from '../logging/otlp/otlp-target.js';
import { MAX_POINT_CLOUD_POINTS } from '../schema/identifier-rule.js';
import { corsOriginProblem, tlsSettingProblem } from './browser-access.js';
import { homepageLinkProblem } from './homepage-links.js';
import { idempotencyBucketProblem, idempotencyProblem } from './idempotency-model.js';
import {
  BACKEND_KINDS,
  STORAGE_POLICY_FIELDS,
  type AppConfig,
  type EcpdsConfig,
  type EventSchemaConfig,
  type IdentifierRuleConfig,
  type JetStreamConfig,
} from './model.js';
import { parseDuration, parseSize } from './units.js';
import { resolveWorkerCount } from './worker-count.js';

/**
 * Stage B of startup (operations.md §1.6): semantic checks across fields, run after loading and
 * before anything is built, plus the decisions D8, D19, D22 and the point-cloud rules of
 * schema-and-validation.md §5.9. Checks run in the spec's order and the first failure wins;
 * each failure carries the §3.4.3 log event it must be logged with.
 *
 * Order: B1.1 kind, then the backend settings (D8 caps, the in-memory byte budget, D22, D36
 * workers), B1.2 bases, B1.3 key_order, B1.4 storage_policy needs topic, then "every schema has a
 * topic" (S13), B1.5 values, B1.6 capability, then the per-schema structure rules (D19, §5.9, D8),
 * B2 … B6, B7 (+ D8/D9).
 */

export const VALIDATION_EVENTS = {
  configuration: 'startup.configuration.validation.failed',
  auth: 'startup.auth.validation.failed',
  plugin: 'startup.auth.plugin_validation.failed',
  streamAuth: 'startup.auth.stream_validation.failed',
  metrics: 'startup.metrics.validation.failed',
  ecpds: 'startup.ecpds.validation.failed',
  backend: 'startup.backend.initialization.failed',
} as const;

export const WARNING_EVENTS = {
  strictDisabled: 'configuration.schema_strict.explicit_disabled',
  spatialKeyOrder: 'configuration.schema.spatial_key_order',
  adminOpen: 'configuration.auth.admin_open',
  deprecatedSetting: 'configuration.setting.deprecated',
} as const;

export class ConfigValidationError extends Error {
  constructor(
    /** The `event.name` the failure is logged with (§3.4.3). */
    readonly eventName: string,
    message: string,
  ) {
    // One line, always (operator-chosen names could hold a line break).
    super(message.replace(/\r?\n/g, '\\n'));
    this.name = 'ConfigValidationError';
  }
}

export interface ConfigWarning {
  event: string;
  message: string;
}

export interface ValidatedConfig {
  config: AppConfig;
  /** Effective `notification_schema_strict` (§1.4.8). */
  strictMode: boolean;
  /** Startup warnings to log at `warn` once the logger exists. */
  warnings: ConfigWarning[];
}

/** Known authorisation plugins; this build always ships ECPDS (§2.10), so "not available" cannot happen. */
export const KNOWN_PLUGINS: readonly string[] = ['ecpds'];

/**
 * D31 (reference-0.13.md §6): a base is used unescaped as the first subject token and, upper-cased,
 * as the stream name, so it is limited to what both accept without percent-encoding.
 */
const TOPIC_BASE = /^[A-Za-z0-9][A-Za-z0-9_-]*$/u;
const TOPIC_BASE_RULE = 'topic base must match [A-Za-z0-9][A-Za-z0-9_-]*';
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function validateConfig(config: AppConfig): ValidatedConfig {
  const warnings: ConfigWarning[] = [];
  checkLogging(config);
  checkApplicationLimits(config);
  checkHomepageLinks(config);
  checkBrowserAccess(config);
  checkBackend(config);
  checkSchemas(config, warnings);
  checkGlobalAuth(config);
  checkStreamPlugins(config);
  checkStreamAuth(config);
  checkMetrics(config);
  checkEcpds(config);
  checkWatchEndpoint(config);
  const idempotency = idempotencyProblem(config.idempotency);
  if (idempotency !== undefined) configError(idempotency);

  const strict = resolveStrictMode(config);
  if (strict.warning !== undefined) warnings.push(strict.warning);
  if (config.notification_backend.jetstream.enable_auto_reconnect !== undefined) {
    // Gone in aviso-server 0.13; still accepted so existing files keep starting (reference-0.13.md §6).
    warnings.push({
      event: WARNING_EVENTS.deprecatedSetting,
      message:
        'notification_backend.jetstream.enable_auto_reconnect is deprecated and ignored: the NATS client always reconnects, bounded by max_reconnect_attempts (0 = unlimited)',
    });
  }
  if (!config.auth.enabled) {
    warnings.push({
      event: WARNING_EVENTS.adminOpen,
      message: 'auth.enabled is false: the admin endpoints (/api/v1/admin/*) are open to anyone who can reach the server (D12)',
    });
  }
  return { config, strictMode: strict.strict, warnings };
}

/** §1.4.8 / schema-and-validation.md §3.1 truth table. */
export function resolveStrictMode(config: AppConfig): { strict: boolean; warning?: ConfigWarning } {
  const schemaCount = Object.keys(config.notification_schema ?? {}).length;
  const explicit = config.notification_schema_strict;
  if (explicit === undefined) return { strict: schemaCount > 0 };
  if (!explicit && schemaCount > 0) {
    return {
      strict: false,
      warning: {
        event: WARNING_EVENTS.strictDisabled,
        message: `notification_schema_strict is explicitly false although notification_schema defines ${schemaCount} event type(s): unknown event types are accepted (generic mode)`,
      },
    };
  }
  return { strict: explicit };
}

/**
 * Stage C1 (run when the JetStream backend starts): settings whose zero or blank value would
 * make the backend unusable.
 */
export function validateJetStreamSettings(js: JetStreamConfig): void {
  const fail: (field: string, rule: string) => never = (field, rule) => {
    throw new ConfigValidationError(VALIDATION_EVENTS.backend, `notification_backend.jetstream.${field}: ${rule}`);
  };
  if (js.nats_url.trim() === '') fail('nats_url', 'must not be blank');
  for (const field of [
    'timeout_seconds',
    'retry_attempts',
    'reconnect_delay_ms',
    'publish_retry_attempts',
    'publish_retry_base_delay_ms',
  ] as const) {
    if (js[field] <= 0) fail(field, `must be greater than 0, got ${js[field]}`);
  }
  if (js.retention_time !== undefined) {
    const seconds = parseOr(js.retention_time, parseDuration, (reason) => fail('retention_time', reason));
    if (seconds <= 0) fail('retention_time', `must be greater than 0, got '${js.retention_time}'`);
  }
  const bucket = idempotencyBucketProblem(js.idempotency_bucket);
  if (bucket !== undefined) throw new ConfigValidationError(VALIDATION_EVENTS.backend, bucket);
}

/** reference-0.13.md §7: OTLP export needs somewhere to export to. */
function checkLogging(config: AppConfig): void {
  try {
    otlpTarget(config.logging.otlp);
  } catch (error) {
    configError(error instanceof Error ? error.message : String(error));
  }
}

// ---------------------------------------------------------------------------------------------

type Fail = (message: string) => never;

function failWith(event: string): Fail {
  return (message) => {
    throw new ConfigValidationError(event, message);
  };
}

function configError(message: string): never {
  throw new ConfigValidationError(VALIDATION_EVENTS.configuration, message);
}

function parseOr(text: string, parse: (text: string) => number, onError: (reason: string) => never): number {
  try {
    return parse(text);
  } catch (error) {
    return onError(error instanceof Error ? error.message : String(error));
  }
}

function schemaEntries(config: AppConfig): [string, EventSchemaConfig][] {
  return Object.entries(config.notification_schema ?? {});
}

function at(eventType: string, rest: string): string {
  return `notification_schema.${eventType}.${rest}`;
}

/** B1.1 and the backend's own settings (D8 zero caps, D22 retention policy). */
function checkBackend(config: AppConfig): void {
  const backend = config.notification_backend;
  if (!(BACKEND_KINDS as readonly string[]).includes(backend.kind)) {
    configError(`Unknown notification_backend kind: ${backend.kind}`);
  }
  if (backend.kind === 'in_memory') {
    for (const field of ['max_history_per_topic', 'max_topics'] as const) {
      const value = backend.in_memory[field];
      if (value <= 0) configError(`notification_backend.in_memory.${field}: must be greater than 0, got ${value}`);
    }
    checkMaxTotalSize(backend.in_memory.max_total_size, config.application.max_body_bytes);
  }
  if (backend.kind === 'in_memory') checkWorkersShareHistory(config.application.workers);
  if (backend.kind === 'jetstream') {
    const policy = backend.jetstream.retention_policy;
    if (policy !== 'limits') {
      configError(
        `notification_backend.jetstream.retention_policy: '${policy}' is not supported (only 'limits'): it would delete notifications that watch and replay still need (D22)`,
      );
    }
  }
}

/** A budget every notify fits in: below it, a notification within the body limit could be refused for its size. */
function checkMaxTotalSize(text: string, maxBodyBytes: number): void {
  const where = 'notification_backend.in_memory.max_total_size';
  const bytes = parseOr(text, parseSize, (reason) => configError(`${where}: ${reason}`));
  const smallest = smallestTotalBytes(maxBodyBytes);
  if (bytes < smallest) {
    configError(
      `${where}: must be at least ${smallest} bytes (4 × application.max_body_bytes + 8 KiB, so that any notification notify accepts fits), got '${text}' (${bytes} bytes)`,
    );
  }
}

/**
 * D36: worker processes share nothing but the backend, and the in-memory backend's history lives
 * in the process that stored it, so a watch on one worker would never see another's notifications.
 */
function checkWorkersShareHistory(setting: AppConfig['application']['workers']): void {
  const count = resolveWorkerCount(setting);
  if (count > 1) {
    const asked = setting === 'auto' ? `auto means ${count} server processes here (one per usable CPU), which` : `${count} server processes`;
    configError(
      `application.workers: ${asked} need notification_backend.kind jetstream: the in_memory backend keeps its notifications inside one process (set application.workers to 1)`,
    );
  }
}

function checkSchemas(config: AppConfig, warnings: ConfigWarning[]): void {
  const schemas = schemaEntries(config);
  const kind = config.notification_backend.kind;

  // D31 valid topic bases, then B1.2 unique ones, ignoring ASCII case. The message names the
  // earlier schema first and quotes the base as the later one spells it, as the reference does.
  for (const [eventType, schema] of schemas) {
    if (schema.topic !== undefined && !TOPIC_BASE.test(schema.topic.base)) {
      configError(`Schema '${eventType}' has invalid topic base: ${TOPIC_BASE_RULE}`);
    }
  }
  const owners = new Map<string, string>();
  for (const [eventType, schema] of schemas) {
    if (schema.topic === undefined) continue;
    const key = asciiLower(schema.topic.base);
    const owner = owners.get(key);
    if (owner !== undefined) {
      configError(`Schemas '${owner}' and '${eventType}' both define topic base '${schema.topic.base}'`);
    }
    owners.set(key, eventType);
  }

  // B1.3 key_order ⊆ identifier (D8)
  for (const [eventType, schema] of schemas) {
    schema.topic?.key_order.forEach((name, index) => {
      if (!Object.hasOwn(schema.identifier, name)) {
        configError(
          `${at(eventType, `topic.key_order[${index}]`)}: '${name}' is not declared in ${at(eventType, 'identifier')}`,
        );
      }
    });
  }

  // B1.4 storage_policy needs topic
  for (const [eventType, schema] of schemas) {
    if (schema.storage_policy !== undefined && schema.topic === undefined) {
      configError(`${at(eventType, 'storage_policy')}: requires ${at(eventType, 'topic')}, which is missing`);
    }
  }

  // Every schema has a topic (S13: without one the topic and CloudEvents cannot be built)
  for (const [eventType, schema] of schemas) {
    if (schema.topic === undefined) {
      configError(`${at(eventType, 'topic')}: required field is missing (every event schema needs topic.base and topic.key_order)`);
    }
  }

  // B1.5 storage_policy values
  for (const [eventType, schema] of schemas) {
    const policy = schema.storage_policy;
    if (policy === undefined) continue;
    if (policy.retention_time !== undefined) {
      const where = at(eventType, 'storage_policy.retention_time');
      const seconds = parseOr(policy.retention_time, parseDuration, (reason) => configError(`${where}: ${reason}`));
      if (seconds <= 0) configError(`${where}: must be greater than 0, got '${policy.retention_time}'`);
    }
    if (policy.max_size !== undefined) {
      const where = at(eventType, 'storage_policy.max_size');
      parseOr(policy.max_size, parseSize, (reason) => configError(`${where}: ${reason}`));
    }
    if (policy.max_messages !== undefined && policy.max_messages <= 0) {
      configError(`${at(eventType, 'storage_policy.max_messages')}: must be greater than 0, got ${policy.max_messages}`);
    }
  }

  // B1.6 backend capability: in_memory supports no storage_policy field, jetstream all of them
  if (kind !== 'jetstream') {
    for (const [eventType, schema] of schemas) {
      const policy = schema.storage_policy;
      if (policy === undefined) continue;
      const field = STORAGE_POLICY_FIELDS.find((name) => policy[name] !== undefined);
      if (field !== undefined) configError(`Schema '${eventType}' storage_policy.${field} is not supported by backend '${kind}'`);
    }
  }

  // Per-schema structure (D19, schema-and-validation.md §5.9, D8)
  for (const [eventType, schema] of schemas) checkSchemaStructure(eventType, schema, warnings);
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

function checkSchemaStructure(eventType: string, schema: EventSchemaConfig, warnings: ConfigWarning[]): void {
  const topic = schema.topic;
  const fields = Object.entries(schema.identifier);
  for (const [name, rule] of fields) {
    if (rule.type === 'PolygonHandler' && name !== 'polygon') {
      configError(`${at(eventType, `identifier.${name}`)}: a PolygonHandler field must be named 'polygon' (spatial filters look it up by that name)`);
    }
    if (rule.type === 'PointCloudHandler' && name !== 'point_cloud') {
      configError(`${at(eventType, `identifier.${name}`)}: a PointCloudHandler field must be named 'point_cloud'`);
    }
  }
  const spatial = fields.filter(([, rule]) => isSpatial(rule)).map(([name]) => name);
  if (spatial.length > 1) {
    configError(`${at(eventType, 'identifier')}: at most one spatial field (PolygonHandler or PointCloudHandler) per schema, got ${spatial.join(', ')}`);
  }
  const pointCloud = schema.identifier.point_cloud;
  if (pointCloud?.type === 'PointCloudHandler') {
    if (Object.hasOwn(schema.identifier, 'polygon')) {
      configError(`${at(eventType, 'identifier.polygon')}: a point-cloud schema must not declare a 'polygon' identifier (the name is reserved for the watch/replay filter)`);
    }
    const max = pointCloud.max_points ?? MAX_POINT_CLOUD_POINTS;
    if (max < 1 || max > MAX_POINT_CLOUD_POINTS) {
      configError(`${at(eventType, 'identifier.point_cloud.max_points')}: field 'point_cloud' max_points must be between 1 and ${MAX_POINT_CLOUD_POINTS}, got ${max}`);
    }
  }

  topic?.key_order.forEach((name, index) => {
    const rule = schema.identifier[name];
    if (rule?.type === 'PointCloudHandler') {
      configError(`${at(eventType, `topic.key_order[${index}]`)}: PointCloudHandler field '${name}' must not be listed in key_order`);
    }
    if (rule?.type === 'PolygonHandler') {
      warnings.push({
        event: WARNING_EVENTS.spatialKeyOrder,
        message: `${at(eventType, `topic.key_order[${index}]`)}: PolygonHandler field '${name}' is listed in key_order; its text goes into the subject, and watch/replay leave that position open so the geometry still decides (D19)`,
      });
    }
  });

  for (const [name, rule] of fields) {
    if ((rule.type === 'IntHandler' || rule.type === 'FloatHandler') && rule.range !== undefined) {
      const [min, max] = rule.range;
      if (min !== undefined && max !== undefined && min > max) {
        configError(`${at(eventType, `identifier.${name}.range`)}: min ${min} is greater than max ${max}`);
      }
    }
  }

  const cap = schema.max_historical_notifications;
  if (cap !== undefined && cap <= 0) {
    configError(`${at(eventType, 'max_historical_notifications')}: must be a positive integer, got ${cap}`);
  }
}

function isSpatial(rule: IdentifierRuleConfig): boolean {
  return rule.type === 'PolygonHandler' || rule.type === 'PointCloudHandler';
}

/** Blank, or with surrounding whitespace: both are typos in a name or secret. */
function blankOrPadded(text: string): boolean {
  return text.trim() === '' || text.trim() !== text;
}

/**
 * Realm → roles checks shared by B2 and B4, in the spec's order: empty realm lists, then
 * blank/padded realm names, then blank/padded roles.
 */
function checkRoleLists(map: Record<string, string[]>, where: string, fail: Fail): void {
  const realms = Object.entries(map);
  for (const [realm, roles] of realms) {
    if (roles.length === 0) fail(`${where}.${realm}: role list must not be empty`);
  }
  for (const [realm] of realms) {
    if (blankOrPadded(realm)) fail(`${where}: realm name '${realm}' must not be blank or have leading/trailing whitespace`);
  }
  for (const [realm, roles] of realms) {
    roles.forEach((role, index) => {
      if (blankOrPadded(role)) {
        fail(`${where}.${realm}[${index}]: role '${role}' must not be blank or have leading/trailing whitespace`);
      }
    });
  }
}

/** B2: global auth, only when enabled. Secret values are never echoed. */
function checkGlobalAuth(config: AppConfig): void {
  const auth = config.auth;
  if (!auth.enabled) return;
  const fail: Fail = failWith(VALIDATION_EVENTS.auth);
  for (const field of ['auth_o_tron_url', 'jwt_secret'] as const) {
    const value = auth[field];
    if (value.trim() !== '' && value.trim() !== value) fail(`auth.${field}: must not have leading or trailing whitespace`);
  }
  if (auth.timeout_ms <= 0) fail('auth.timeout_ms: must be greater than 0 when auth is enabled');
  if (Object.keys(auth.admin_roles).length === 0) {
    fail('auth.admin_roles: must define at least one realm with roles when auth is enabled');
  }
  checkRoleLists(auth.admin_roles, 'auth.admin_roles', fail);
  if (auth.mode === 'direct') {
    if (auth.auth_o_tron_url.trim() === '') fail('auth.auth_o_tron_url: must not be blank when auth.mode is direct');
    if (auth.jwt_secret.trim() === '') fail('auth.jwt_secret: must not be blank when auth.mode is direct');
  } else if (auth.jwt_secret.trim() === '') {
    fail('auth.jwt_secret: must not be blank when auth.mode is trusted_proxy');
  }
}

/** B3: stream plugins. */
function checkStreamPlugins(config: AppConfig): void {
  const fail: Fail = failWith(VALIDATION_EVENTS.plugin);
  for (const [eventType, schema] of schemaEntries(config)) {
    const plugins = schema.auth?.plugins;
    if (schema.auth === undefined || plugins === undefined) continue;
    if (plugins.length === 0) fail(`${at(eventType, 'auth.plugins')}: must not be empty when present`);
    plugins.forEach((plugin, index) => {
      if (!KNOWN_PLUGINS.includes(plugin)) {
        fail(`${at(eventType, `auth.plugins[${index}]`)}: unknown plugin '${plugin}' (known: ${KNOWN_PLUGINS.join(', ')})`);
      }
    });
    if (!schema.auth.required) fail(`${at(eventType, 'auth.required')}: must be true when auth.plugins is set`);
  }
}

/** B4: stream auth blocks, whatever the global switch. */
function checkStreamAuth(config: AppConfig): void {
  const fail: Fail = failWith(VALIDATION_EVENTS.streamAuth);
  const globalEnabled = config.auth.enabled;
  for (const [eventType, schema] of schemaEntries(config)) {
    const auth = schema.auth;
    if (auth === undefined) continue;
    for (const field of ['read_roles', 'write_roles'] as const) {
      const map = auth[field];
      if (map === undefined) continue;
      const where = at(eventType, `auth.${field}`);
      if (Object.keys(map).length === 0) fail(`${where}: must not be empty when present`);
      checkRoleLists(map, where, fail);
    }
    const roleMaps = (['read_roles', 'write_roles'] as const).filter((field) => auth[field] !== undefined);
    if (globalEnabled) {
      if (!auth.required && roleMaps.length > 0) {
        fail(`${at(eventType, 'auth.required')}: is false but ${roleMaps.join(' and ')} ${roleMaps.length > 1 ? 'are' : 'is'} set`);
      }
    } else {
      if (auth.required) fail(`${at(eventType, 'auth.required')}: is true but global auth is disabled (auth.enabled is false)`);
      const [first] = roleMaps;
      if (first !== undefined) fail(`${at(eventType, `auth.${first}`)}: is set but global auth is disabled (auth.enabled is false)`);
    }
  }
}

/**
 * The connection limits of `application`: Node refuses a head timeout longer than the whole-request
 * timeout, so say which field is wrong before anything is built.
 */
function checkApplicationLimits(config: AppConfig): void {
  const { headers_timeout_ms: headers, request_timeout_ms: request } = config.application;
  if (headers > request) {
    failWith(VALIDATION_EVENTS.configuration)(
      `application.headers_timeout_ms: must not exceed application.request_timeout_ms (${headers} > ${request})`,
    );
  }
}

/** browser.md §2, §3: CORS origins as browsers send them, TLS files named. */
function checkBrowserAccess(config: AppConfig): void {
  const problem = corsOriginProblem(config.application.cors) ?? tlsSettingProblem(config.application.tls);
  if (problem !== undefined) configError(problem);
}

/** D29: the homepage links. */
function checkHomepageLinks(config: AppConfig): void {
  const problem = homepageLinkProblem(config.application.homepage);
  if (problem !== undefined) configError(problem);
}

/** B5: metrics, only when enabled. */
function checkMetrics(config: AppConfig): void {
  const metrics = config.metrics;
  if (!metrics.enabled) return;
  const fail: Fail = failWith(VALIDATION_EVENTS.metrics);
  if (metrics.port === undefined) fail('metrics.port: is required when metrics.enabled is true');
  if (metrics.port === 0) fail('metrics.port: must not be 0 when metrics.enabled is true');
  if (metrics.port === config.application.port) {
    fail(`metrics.port: must differ from application.port (both are ${metrics.port})`);
  }
}

/** The event types whose schema lists the ECPDS read plugin, in configuration order. */
export function schemasListingEcpds(config: AppConfig): string[] {
  return schemaEntries(config)
    .filter(([, schema]) => schema.auth?.plugins?.includes('ecpds') ?? false)
    .map(([eventType]) => eventType);
}

/** B6: the ECPDS block, only when a stream uses the plugin. */
function checkEcpds(config: AppConfig): void {
  const fail: Fail = failWith(VALIDATION_EVENTS.ecpds);
  const users = schemasListingEcpds(config);
  const [firstUser] = users;
  if (firstUser === undefined) return;
  const ecpds = config.ecpds;
  if (ecpds === undefined) fail(`ecpds: section is required because schema '${firstUser}' lists the ecpds plugin`);

  if (ecpds.servers.length === 0) fail('ecpds.servers: must list at least one server');
  ecpds.servers.forEach((server, index) => {
    const problem = serverProblem(server);
    if (problem !== undefined) fail(`ecpds.servers[${index}]: ${problem}`);
  });
  for (const field of ['username', 'password', 'target_field'] as const) {
    if (blankOrPadded(ecpds[field])) fail(`ecpds.${field}: must not be blank or have leading/trailing whitespace`);
  }
  if (ecpds.match_key.trim() === '' || /[\s/\0]/u.test(ecpds.match_key)) {
    fail(`ecpds.match_key: must not be blank or contain whitespace, '/' or NUL, got '${ecpds.match_key}'`);
  }
  for (const field of ['cache_ttl_seconds', 'max_entries', 'request_timeout_seconds', 'connect_timeout_seconds'] as const) {
    if (ecpds[field] <= 0) fail(`ecpds.${field}: must be greater than 0, got ${ecpds[field]}`);
  }
  const schemas = config.notification_schema ?? {};
  for (const eventType of users) checkMatchKey(eventType, schemas[eventType] as EventSchemaConfig, ecpds, fail);
}

function checkMatchKey(eventType: string, schema: EventSchemaConfig, ecpds: EcpdsConfig, fail: Fail): void {
  const rule = schema.identifier[ecpds.match_key];
  if (rule === undefined) {
    fail(`${at(eventType, 'identifier')}: ecpds.match_key '${ecpds.match_key}' is not a declared identifier field`);
  }
  if (!rule.required) {
    fail(`${at(eventType, `identifier.${ecpds.match_key}.required`)}: must be true because ecpds.match_key names this field`);
  }
}

function serverProblem(server: string): string | undefined {
  if (server.trim() === '') return 'must not be blank';
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return `'${server}' is not an absolute URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `'${server}' must use http or https`;
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    return `'${server}' uses http for a host other than 127.0.0.1, [::1] or localhost; use https`;
  }
  if (server.includes('?')) return `'${server}' must not have a query string`;
  if (server.includes('#')) return `'${server}' must not have a fragment`;
  return undefined;
}

/** B7 (§7 item 4) plus D8/D9: values that must be positive. `replay_batch_delay_ms: 0` means no pause. */
function checkWatchEndpoint(config: AppConfig): void {
  const watch = config.watch_endpoint;
  for (const field of [
    'sse_heartbeat_interval_sec',
    'connection_max_duration_sec',
    'replay_batch_size',
    'concurrent_notification_processing',
    'max_historical_notifications',
    'max_buffered_events',
    'max_buffered_bytes',
    'max_total_buffered_bytes',
    'stall_timeout_sec',
  ] as const) {
    if (watch[field] <= 0) configError(`watch_endpoint.${field}: must be greater than 0, got ${watch[field]}`);
  }
  const largestBody = config.application.max_body_bytes;
  if (watch.max_buffered_bytes < 4 * largestBody) {
    configError(
      `watch_endpoint.max_buffered_bytes: must be at least 4 × application.max_body_bytes (${4 * largestBody}), got ${watch.max_buffered_bytes}`,
    );
  }
  if (watch.max_total_buffered_bytes < watch.max_buffered_bytes) {
    configError(
      `watch_endpoint.max_total_buffered_bytes: must be at least watch_endpoint.max_buffered_bytes (${watch.max_buffered_bytes}), got ${watch.max_total_buffered_bytes}`,
    );
  }
}
