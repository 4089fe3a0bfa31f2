import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SCHEMAS, serverConfig } from '../support/schemas.js';
import { runServerToExit, startServer, type RunningServer } from '../support/server-process.js';
import { createTestCertificates, type TestCertificates, withTls } from '../support/test-certificates.js';
import { http2Client, type ProtocolClient, type ProtocolStream } from '../support/tls-clients.js';
import { replaceConfigFile } from './support/config-files.js';
import { expectStillServing } from './support/still-serving.js';

/**
 * Broken configurations on reload (docs/design/rules/browser.md §5) against the real server process on its TLS
 * port: syntax errors, wrong types, semantic errors and unusable TLS files, one after another, by
 * SIGHUP and by the admin route in turn. Each one is refused with the line startup prints for the
 * same file, and the running configuration keeps serving: the same event types, the same
 * certificate, and a watch opened before the first refusal that receives every notification. The
 * outside probe tried 14 such files; these are 19.
 */

const { mars, dissemination, test_polygon } = TEST_SCHEMAS;
const SCHEMAS = { mars, dissemination, test_polygon };
const EVENT_TYPES = ['dissemination', 'mars', 'test_polygon'];
const WATCH = { event_type: 'dissemination', identifier: { destination: '*', class: 'od' } };
const RELOAD_FAILED = 'configuration.reload.failed';
/** A startup run, a reload and the checks; generous, the machine is shared. */
const CASE_TIMEOUT_MS = 60_000;

let certificates: TestCertificates;
let server: RunningServer;
let client: ProtocolClient;
let watch: ProtocolStream;
const published: string[] = [];

type Config = Record<string, unknown>;
const base = (): Config => withTls(serverConfig({ notification_schema: SCHEMAS }), certificates);
const application = (): Config => base().application as Config;
const withApplication = (changes: Config): Config => ({ ...base(), application: { ...application(), ...changes } });
const withSchema = (name: string, schema: unknown): Config => ({ ...base(), notification_schema: { ...SCHEMAS, [name]: schema } });
const withoutKey = (config: Config, key: string): Config => Object.fromEntries(Object.entries(config).filter(([name]) => name !== key));
const withTlsFiles = (files: Config): Config =>
  withApplication({ tls: { cert_file: certificates.certFile, key_file: certificates.keyFile, ...files } });

/** Each broken configuration: a name, and the file's content (YAML from an object, or raw text). */
const BROKEN: readonly [string, () => Config | string][] = [
  ['a YAML syntax error', () => 'application: [unclosed\n'],
  ['a top level that is a list', () => '- application\n- notification_schema\n'],
  ['control characters instead of YAML', () => '\u0000\u0007\u001b[0m\n'],
  ['application.host missing', () => ({ ...base(), application: withoutKey(application(), 'host') })],
  ['application.port as words', () => withApplication({ port: 'eighty' })],
  ['notification_schema as a list', () => ({ ...base(), notification_schema: ['mars'] })],
  ['a heartbeat interval of 0', () => ({ ...base(), watch_endpoint: { sse_heartbeat_interval_sec: 0 } })],
  ['headers_timeout_ms above request_timeout_ms', () => withApplication({ headers_timeout_ms: 5000, request_timeout_ms: 4000 })],
  ['max_connections of 0', () => withApplication({ max_connections: 0 })],
  ['a CORS origin with a path', () => withApplication({ cors: { allowed_origins: ['https://console.example.org/app'] } })],
  [
    'a key_order field the identifier lacks',
    () => withSchema('flood', { topic: { base: 'flood', key_order: ['missing'] }, identifier: {} }),
  ],
  [
    'an IntHandler range with min above max',
    () =>
      withSchema('mars', { ...mars, identifier: { ...mars.identifier, step: { type: 'IntHandler', range: [10, 1], required: false } } }),
  ],
  [
    'a topic base with a dot',
    () => withSchema('dissemination', { ...dissemination, topic: { base: 'diss.v2', key_order: ['destination', 'class'] } }),
  ],
  [
    'an unknown identifier handler',
    () => withSchema('flood', { topic: { base: 'flood', key_order: ['region'] }, identifier: { region: { type: 'RegionHandler' } } }),
  ],
  ['an unknown key in the strict auth section', () => ({ ...base(), auth: { enabled: false, jwt_secrets: 'typo' } })],
  ['a missing certificate file', () => withTlsFiles({ cert_file: join(certificates.dir, 'renewed.pem') })],
  ['a key file that cannot be read', () => withTlsFiles({ key_file: join(certificates.dir, 'key-directory') })],
  ['a key that does not belong to the certificate', () => withTlsFiles({ key_file: join(certificates.dir, 'ca.key') })],
];

beforeAll(async () => {
  certificates = createTestCertificates();
  // A directory cannot be read as a file, whoever runs the test (root reads past chmod 000).
  mkdirSync(join(certificates.dir, 'key-directory'));
  server = await startServer({ config: base() });
  client = http2Client(`https://localhost:${server.port}`, certificates.ca);
  watch = await client.stream('/api/v1/watch', WATCH);
  expect((await watch.nextSignificant())?.json.type).toBe('connection_established');
});
afterAll(async () => {
  watch?.close();
  client?.close();
  await server?.stop();
  certificates?.remove();
});

/** The line startup prints for `content` (after `aviso-server: `), naming this server's config file where it names its own. */
async function startupLine(config: Config | string): Promise<string> {
  const startup = await runServerToExit({ config });
  expect(startup.code).toBe(1);
  const line = startup.stderr.trim();
  expect(line).toMatch(/^aviso-server: (configuration error|backend initialization failed): /);
  expect(line).not.toContain('\n');
  const ownFile = new RegExp(`${tmpdir().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/aviso-e2e-[^/]+/config\\.yaml`, 'g');
  return line.slice('aviso-server: '.length).replace(ownFile, server.configFile);
}

/** Reloads by the admin route (even cases) or SIGHUP (odd ones); resolves with the refusal's message. */
async function refusedReload(index: number): Promise<string> {
  const from = server.logs.length;
  if (index % 2 === 0) {
    const response = await client.request('/api/v1/admin/reload', { method: 'POST' });
    expect(response.status).toBe(400);
    expect(Object.keys(response.json)).toEqual(['code', 'error', 'message', 'request_id']);
    expect(response.json).toMatchObject({
      code: 'INVALID_CONFIGURATION',
      error: 'invalid_configuration',
      request_id: response.headers['x-request-id'],
    });
    const failed = await server.waitForLog(RELOAD_FAILED, { from });
    expect(failed.body).toBe(response.json.message);
    return String(response.json.message);
  }
  server.signal('SIGHUP');
  const failed = await server.waitForLog(RELOAD_FAILED, { from });
  expect(failed.attributes?.source).toBe('signal');
  return String(failed.body);
}

/** The running configuration still serves: its event types, and the watch opened at the start gets a new notification. */
async function expectOldConfigServing(note: string): Promise<void> {
  const schema = await client.request('/api/v1/schema');
  expect(schema.json.event_types).toEqual(EVENT_TYPES);
  const body = { event_type: 'dissemination', identifier: { destination: 'ecmwf', class: 'od' }, payload: { note } };
  expect((await client.request('/api/v1/notification', { body })).status).toBe(200);
  published.push(note);
  const event = await watch.nextSignificant();
  expect((event?.json.data as { payload: { note: string } } | undefined)?.payload.note).toBe(note);
}

describe('broken configurations on reload', () => {
  it.each(BROKEN.map(([name, content], index) => ({ name, content, index })))(
    'refuses $name with the startup line and keeps the old configuration',
    async ({ name, content, index }) => {
      const file = content();
      const expected = await startupLine(file);
      replaceConfigFile(server.configFile, file);
      expect(await refusedReload(index)).toBe(expected);
      await expectOldConfigServing(`after ${name}`);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'refuses a reload once the configuration file is gone, with the line startup prints for it',
    async () => {
      rmSync(server.configFile);
      const message = await refusedReload(0);
      expect(message).toBe(`configuration error: AVISOSERVER_CONFIG_FILE: '${server.configFile}' is not an existing regular file`);
      await expectOldConfigServing('after the file was removed');
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'applies the good configuration again, and the watch opened first got every notification once, in order',
    async () => {
      replaceConfigFile(server.configFile, base());
      const response = await client.request('/api/v1/admin/reload', { method: 'POST' });
      expect(response.status, response.text).toBe(200);
      expect(response.json).toMatchObject({ success: true, restart_required: [], event_types_added: [], event_types_removed: [] });
      await expectOldConfigServing('after the good configuration');
      expect(published).toHaveLength(BROKEN.length + 2);
      expect(watch.hasEnded).toBe(false);
      const refusals = server.logs.filter((line) => line.attributes?.['event.name'] === RELOAD_FAILED);
      expect(refusals).toHaveLength(BROKEN.length + 1);
      await expectStillServing(server, certificates.ca, [RELOAD_FAILED]);
    },
    CASE_TIMEOUT_MS,
  );
});
