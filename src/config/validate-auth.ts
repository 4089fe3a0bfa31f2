import type { AppConfig, EcpdsConfig, EventSchemaConfig } from './model.js';
import { VALIDATION_EVENTS, at, blankOrPadded, failWith, schemaEntries, type Fail } from './validation-errors.js';

/** Known authorisation plugins; this build always ships ECPDS (docs/design/rules/operations.md §2.10), so "not available" cannot happen. */
export const KNOWN_PLUGINS: readonly string[] = ['ecpds'];

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

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
export function checkGlobalAuth(config: AppConfig): void {
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
export function checkStreamPlugins(config: AppConfig): void {
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
export function checkStreamAuth(config: AppConfig): void {
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

/** The event types whose schema lists the ECPDS read plugin, in configuration order. */
export function schemasListingEcpds(config: AppConfig): string[] {
  return schemaEntries(config)
    .filter(([, schema]) => schema.auth?.plugins?.includes('ecpds') ?? false)
    .map(([eventType]) => eventType);
}

/** B6: the ECPDS block, only when a stream uses the plugin. */
export function checkEcpds(config: AppConfig): void {
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
