import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { reapOnExit } from '../support/child-reaper.js';
import { postJson, request } from '../support/http.js';
import { LETTERS, MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { SERVER_ENTRY, startServer, type LogLine, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';
import { BackendUnderTest } from '../support/backends.js';
import { startNatsServer, type NatsServerProcess } from '../support/nats-server.js';

/**
 * The JSON log stream of the real server process (docs/design/rules/operations.md §3.4, §3.5, §4.1, §4.2): line
 * format, request correlation, the event catalogue, level selection, redaction.
 *
 * Servers (all in-memory):
 * - `main`: info level, auth in `trusted_proxy` mode, an `ecpds` section, `NATS_TOKEN` and the
 *   `K8S_*` variables set, so secrets and resource attributes can be checked; stopped with SIGTERM
 *   at the end for the shutdown events;
 * - `debug`: `logging.level: debug`, only `HOSTNAME` set, non-strict mode, blank `RUST_LOG`;
 *   both write the access line of business routes at info (`logging.access_log: info`);
 * - the D34 default (`access_log` unset): at info no access line at all, at debug every one at debug;
 * - level servers: `warn` (spawned here, since `startServer` waits for an info line), `warn` +
 *   `RUST_LOG=debug`, `info` + invalid `RUST_LOG` values.
 */

const PACKAGE_VERSION = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string })
  .version;

const SECOND = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const SEVERITIES: Readonly<Record<string, number>> = { TRACE: 1, DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17, FATAL: 21 };
const TOP_LEVEL = new Set(['timestamp', 'severityText', 'severityNumber', 'body', 'resource', 'attributes', 'traceId', 'spanId']);

const REALM = 'logrealm';
const SECRETS = {
  jwt: 'jwt-secret-Zq81vv',
  nats: 'nats-token-Kp27xx',
  ecpds: 'ecpds-pass-Wm93yy',
  urlPassword: 'url-pass-Hx55zz',
  freeTextPassword: 'hunter2-Ab19',
  freeTextBearer: 'bearer-tok-Qp66.part2.part3',
  urlInValue: 'pw-Jk44ww',
} as const;

const DISS_A = { event_type: 'dissemination', identifier: { destination: 'A', class: 'od' } };
/** An enum value far over the echo length: its validation line quotes it cut, once. */
const LONG_VALUE = 'd'.repeat(4_000);

function eventName(line: LogLine): string | undefined {
  const name = line.attributes?.['event.name'];
  return typeof name === 'string' ? name : undefined;
}

function linesOf(logs: readonly LogLine[], requestId: string | null | undefined): LogLine[] {
  return logs.filter((l) => l.attributes?.request_id === requestId);
}

function find(logs: readonly LogLine[], name: string, requestId?: string | null): LogLine | undefined {
  return logs.find((l) => eventName(l) === name && (requestId === undefined || l.attributes?.request_id === requestId));
}

/** Log lines are written asynchronously to the request; wait until `ready` holds. */
async function waitFor(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('log line did not appear in time');
    await new Promise((done) => setTimeout(done, 20));
  }
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

async function bearer(username: string, roles: readonly string[], secret: string): Promise<string> {
  const token = await new SignJWT({ sub: username, username, realm: REALM, roles: [...roles], attributes: {} })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));
  return `Bearer ${token}`;
}

/** Checks one line against docs/design/rules/operations.md §3.4.1; `resource` is the exact expected resource. */
function expectLineShape(line: LogLine, resource: Record<string, string>): void {
  for (const key of Object.keys(line)) expect(TOP_LEVEL.has(key), `top-level member ${key}`).toBe(true);
  expect(line.timestamp).toMatch(SECOND);
  expect(Math.abs(Date.parse(String(line.timestamp)) - Date.now())).toBeLessThan(10 * 60_000);
  expect(SEVERITIES[String(line.severityText)], String(line.severityText)).toBe(line.severityNumber);
  expect(typeof line.body).toBe('string');
  expect(line.resource).toEqual(resource);
  expect(typeof line.attributes).toBe('object');
  for (const key of ['event_name', 'error_type', 'error_message', 'service.name', 'service.version']) {
    expect(Object.hasOwn(line.attributes ?? {}, key), `attribute ${key} in ${eventName(line)}`).toBe(false);
  }
}

/** A server spawned without waiting for an info line (for `logging.level: warn`); ready once /health answers. */
interface QuietServer {
  readonly url: string;
  readonly logs: LogLine[];
  stderr(): string;
  stop(): Promise<number | null>;
}

async function spawnQuiet(config: Record<string, unknown>, env: Record<string, string> = {}): Promise<QuietServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'aviso-log-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, stringify({ ...config, application: { host: '127.0.0.1', port } }));
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, AVISOSERVER_CONFIG_FILE: file, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  reapOnExit(child);
  const logs: LogLine[] = [];
  let stderr = '';
  let pending = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
      if (line.trim()) logs.push(JSON.parse(line) as LogLine);
    }
  });
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start; stderr: ${stderr}`);
    await new Promise((done) => setTimeout(done, 50));
  }
  return {
    url,
    logs,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

// ---------------------------------------------------------------------------------------------

describe('the main server at info (auth, ecpds section, NATS token, k8s resource)', () => {
  const RESOURCE = {
    'service.name': 'aviso-server',
    'service.version': PACKAGE_VERSION,
    'k8s.namespace.name': 'aviso-ns',
    'k8s.pod.name': 'aviso-pod-7',
  };
  let server: RunningServer;
  let watch: SseClient;
  /** X-Request-ID of each scripted request. */
  const ids: Record<string, string | null> = {};
  const forgedTokens: string[] = [];

  beforeAll(async () => {
    server = await startServer({
      config: serverConfig({
        // The access line at info for business routes, as before D34 made it debug by default.
        logging: { level: 'info', access_log: 'info' },
        auth: {
          enabled: true,
          mode: 'trusted_proxy',
          jwt_secret: SECRETS.jwt,
          admin_roles: { [REALM]: ['admin'] },
          auth_o_tron_url: `http://svc-user:${SECRETS.urlPassword}@127.0.0.1:9/`,
        },
        ecpds: {
          username: 'ecpds-svc',
          password: SECRETS.ecpds,
          servers: ['https://ecpds.example.int'],
          match_key: 'destination',
        },
      }),
      env: {
        NATS_TOKEN: SECRETS.nats,
        K8S_NAMESPACE_NAME: 'aviso-ns',
        K8S_POD_NAME: 'aviso-pod-7',
        HOSTNAME: 'node-host-should-not-win',
      },
    });
    const url = server.url;
    const notify = (body: unknown, headers?: Record<string, string>) => postJson(`${url}/api/v1/notification`, body, headers);
    const idOf = (response: { headers: Headers }) => response.headers.get('x-request-id');

    ids.notifyOk = idOf(await notify(DISS_A));
    ids.parse = idOf(await notify('{"event_type":'));
    ids.unknownType = idOf(await notify({ event_type: 'no_such_type', identifier: {} }));
    ids.invalid = idOf(await notify({ ...DISS_A, identifier: { destination: 'A' } }));
    ids.invalidDate = idOf(await notify({ ...MARS_EXAMPLE, identifier: { ...MARS_EXAMPLE.identifier, date: 'someday' } }));
    ids.longValue = idOf(await notify({ ...MARS_EXAMPLE, identifier: { ...MARS_EXAMPLE.identifier, domain: LONG_VALUE } }));
    ids.watchInvalid = idOf(await postJson(`${url}/api/v1/watch`, { ...DISS_A, identifier: { destination: 'A' } }));
    watch = await SseClient.open(`${url}/api/v1/watch`, DISS_A);
    expect(watch.status).toBe(200);
    ids.watch = watch.headers.get('x-request-id');
    const replay = await SseClient.open(`${url}/api/v1/replay`, { ...DISS_A, from_id: '1' });
    expect(replay.status).toBe(200);
    ids.replay = replay.headers.get('x-request-id');
    await replay.rest();
    ids.health = idOf(await request(`${url}/health`));
    ids.notFound = idOf(await request(`${url}/no/such/path`));
    const forged = await bearer('mallory', ['admin'], 'not-the-secret');
    forgedTokens.push(forged.slice('Bearer '.length));
    ids.denied = idOf(await notify(DISS_A, { authorization: forged }));
    // Enum values are quoted in validation messages, so free-text secrets reach the log attributes.
    for (const [key, domain] of [
      ['redactPassword', `password=${SECRETS.freeTextPassword}`],
      ['redactBearer', `Bearer ${SECRETS.freeTextBearer}`],
      ['redactUrl', `https://someone:${SECRETS.urlInValue}@example.com/x`],
    ] as const) {
      const response = await notify({ ...MARS_EXAMPLE, identifier: { ...MARS_EXAMPLE.identifier, domain } });
      expect(response.status).toBe(400);
      ids[key] = idOf(response);
    }
    await waitFor(() => find(server.logs, 'http.request.completed', ids.redactUrl) !== undefined);
  });

  afterAll(async () => {
    watch?.close();
    await server?.stop();
  });

  it('writes every line in the OpenTelemetry shape of docs/design/rules/operations.md §3.4.1 with the k8s resource from the environment', () => {
    expect(server.logs.length).toBeGreaterThan(10);
    for (const line of server.logs) expectLineShape(line, RESOURCE);
  });

  it('logs the startup events in order with their attributes (docs/design/rules/operations.md §4.1, docs/design/rules/operations.md §3.4.3)', () => {
    const names = server.logs.map(eventName);
    const order = [
      'configuration.load.succeeded',
      'configuration.global.initialized',
      'startup.configuration.dumped',
      'startup.configuration.loaded',
      'startup.server.started',
    ];
    const positions = order.map((name) => names.indexOf(name));
    for (const [index, position] of positions.entries()) expect(position, order[index]).toBeGreaterThanOrEqual(0);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (const name of order) expect(find(server.logs, name)?.severityText, name).toBe('INFO');

    expect(find(server.logs, 'configuration.load.succeeded')?.attributes).toMatchObject({
      host: '127.0.0.1',
      port: 0,
      backend_kind: 'in_memory',
      has_notification_schema: true,
    });
    expect(find(server.logs, 'configuration.global.initialized')?.attributes).toMatchObject({
      notification_schema_strict: true,
      base_url: 'http://localhost:8000',
    });
    expect(find(server.logs, 'startup.configuration.loaded')?.attributes).toMatchObject({
      bind_host: '127.0.0.1',
      bind_port: 0,
      backend_kind: 'in_memory',
      has_notification_schema: true,
    });
    expect(find(server.logs, 'startup.server.started')?.attributes).toMatchObject({
      port: server.port,
      swagger_url: `127.0.0.1:${server.port}/swagger-ui/`,
    });
  });

  it('dumps the effective configuration with every secret redacted', () => {
    const dump = find(server.logs, 'startup.configuration.dumped')?.attributes?.config as Record<string, Record<string, unknown>>;
    expect(dump.auth).toMatchObject({ jwt_secret: '[REDACTED]', auth_o_tron_url: 'http://[REDACTED]@127.0.0.1:9/' });
    expect(dump.ecpds).toMatchObject({ username: 'ecpds-svc', password: '[REDACTED]' });
    expect((dump.notification_backend?.jetstream as Record<string, unknown>).token).toBe('[REDACTED]');
    expect(dump.application).toMatchObject({ host: '127.0.0.1', port: 0 });
  });

  it.each([
    ['notifyOk', 'api.notification.processed', 'INFO', { event_type: 'dissemination', topic: 'diss.A.od' }],
    [
      'parse',
      'api.request.parse.failed',
      'WARN',
      { outcome: 'error', error_code: 'INVALID_JSON', error: 'Invalid Notification Request', 'error.type': 'Invalid Notification Request' },
    ],
    ['unknownType', 'api.request.validation.failed', 'WARN', { outcome: 'error', error_code: 'UNKNOWN_EVENT_TYPE' }],
    [
      'invalid',
      'api.request.validation.failed',
      'WARN',
      {
        error_code: 'INVALID_NOTIFICATION_REQUEST',
        event_type: 'dissemination',
        'exception.message': "Required field 'class' missing for notify operation",
      },
    ],
    ['watchInvalid', 'api.request.validation.failed', 'WARN', { error_code: 'INVALID_WATCH_REQUEST', event_type: 'dissemination' }],
    ['watch', 'api.watch.stream.established', 'INFO', { event_type: 'dissemination', topic: 'diss.A.od' }],
    ['replay', 'api.replay.stream.established', 'INFO', { event_type: 'dissemination', topic: 'diss.A.od' }],
    [
      'denied',
      'auth.middleware.request.denied',
      'WARN',
      { outcome: 'error', status_code: 401, reason: 'unauthorized', path: '/api/v1/notification' },
    ],
    ['notifyOk', 'http.request.completed', 'INFO', { method: 'POST', route: '/api/v1/notification', status_code: 200 }],
    ['parse', 'http.request.completed', 'INFO', { method: 'POST', route: '/api/v1/notification', status_code: 400 }],
    ['watch', 'http.request.completed', 'INFO', { method: 'POST', route: '/api/v1/watch', status_code: 200 }],
    ['notFound', 'http.request.completed', 'INFO', { method: 'GET', route: 'unmatched', status_code: 404 }],
  ] as const)('request %s logs %s at %s with its request id', (key, name, level, attributes) => {
    const requestId = ids[key];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const line = find(server.logs, name, requestId);
    expect(line, `${name} for ${key}`).toBeDefined();
    expect(line?.severityText).toBe(level);
    expect(line?.attributes).toMatchObject({ request_id: requestId, ...attributes });
  });

  it('gives the parse and validation failures their error fields, each text once (docs/design/rules/operations.md §3.4.3, D45)', () => {
    const parse = find(server.logs, 'api.request.parse.failed', ids.parse)?.attributes ?? {};
    expect(typeof parse['exception.message']).toBe('string');
    // `details` would only repeat the message.
    expect(parse).not.toHaveProperty('details');
    const validation = find(server.logs, 'api.request.validation.failed', ids.invalid)?.attributes ?? {};
    expect(validation['exception.message']).toBe("Required field 'class' missing for notify operation");
    expect(validation).not.toHaveProperty('error_chain');
    expect(validation['error.type']).toBe('Invalid Notification Request');
    const date = find(server.logs, 'api.request.validation.failed', ids.invalidDate)?.attributes ?? {};
    expect(date['exception.message']).toBe("Failed to parse date value for field 'date'");
    expect(JSON.parse(date.error_chain as string)).toEqual([
      "Field 'date' contains invalid date 'someday'. Expected: YYYY-MM-DD, YYYYMMDD, or YYYY-DDD",
    ]);
  });

  it('quotes an over-long value once, cut to 256 characters (docs/api.md#echoed-values-decision-d45)', () => {
    const line = find(server.logs, 'api.request.validation.failed', ids.longValue);
    expect(line?.attributes?.['exception.message']).toBe(
      `Field 'domain' has invalid value '${'d'.repeat(256)}…(4000 characters)'. Allowed: [${LETTERS.join(', ')}]`,
    );
    expect(JSON.stringify(line).split('d'.repeat(256)).length).toBe(2);
    expect(JSON.stringify(line).length).toBeLessThan(1_500);
  });

  it('gives the access line a numeric duration_ms', () => {
    const line = find(server.logs, 'http.request.completed', ids.notifyOk);
    expect(typeof line?.attributes?.duration_ms).toBe('number');
    expect(line?.attributes?.duration_ms as number).toBeGreaterThanOrEqual(0);
  });

  it('adds the request context (request_id, bucketed event_type, display topic) to the request’s later events', () => {
    // docs/design/rules/operations.md §3.4.1 "Request context": once known, event_type and topic go on every event of the request.
    const context: Record<string, unknown> = {};
    for (const key of ['notifyOk', 'watch', 'replay'] as const) {
      const attributes = find(server.logs, 'http.request.completed', ids[key])?.attributes ?? {};
      context[key] = { event_type: attributes.event_type, topic: attributes.topic };
    }
    const expected = { event_type: 'dissemination', topic: 'diss.A.od' };
    expect(context).toEqual({ notifyOk: expected, watch: expected, replay: expected });
  });

  it('keeps each event to its own fields: the access line does not inherit an earlier event’s fields', () => {
    const allowed = new Set(['request_id', 'event_type', 'topic', 'event.name', 'method', 'route', 'status_code', 'duration_ms']);
    const extras: Record<string, string[]> = {};
    for (const key of ['notifyOk', 'parse', 'invalid', 'denied', 'notFound'] as const) {
      const line = find(server.logs, 'http.request.completed', ids[key]);
      expect(line, key).toBeDefined();
      extras[key] = Object.keys(line?.attributes ?? {}).filter((k) => !allowed.has(k));
    }
    expect(extras).toEqual({ notifyOk: [], parse: [], invalid: [], denied: [], notFound: [] });
  });

  it('keeps each event to its own fields: stream.established does not inherit the access line’s fields', () => {
    const inherited: Record<string, string[]> = {};
    for (const [key, name] of [
      ['watch', 'api.watch.stream.established'],
      ['replay', 'api.replay.stream.established'],
    ] as const) {
      const attributes = find(server.logs, name, ids[key])?.attributes ?? {};
      inherited[name] = ['method', 'route', 'status_code', 'duration_ms'].filter((field) => Object.hasOwn(attributes, field));
    }
    expect(inherited).toEqual({ 'api.watch.stream.established': [], 'api.replay.stream.established': [] });
  });

  it('writes no access line for /health at info, and no fastify per-request lines', () => {
    expect(linesOf(server.logs, ids.health)).toEqual([]);
    for (const line of server.logs) {
      if (line.attributes?.request_id === undefined) continue;
      expect(eventName(line), `line without event name: ${line.body}`).toBeDefined();
      expect(['incoming request', 'request completed']).not.toContain(line.body);
    }
    // A successful notify at info: its event and its access line, nothing else.
    expect(linesOf(server.logs, ids.notifyOk).map(eventName)).toEqual(['api.notification.processed', 'http.request.completed']);
  });

  it('redacts password=, Bearer and URL user info in free text', () => {
    const message = (key: string) =>
      String(find(server.logs, 'api.request.validation.failed', ids[key])?.attributes?.['exception.message']);
    expect(message('redactPassword')).toContain('password=[REDACTED]');
    expect(message('redactBearer')).toContain('Bearer [REDACTED]');
    expect(message('redactUrl')).toContain('https://[REDACTED]@example.com/x');
  });

  it('logs the shutdown events in order after SIGTERM, ends open streams and exits 0 (docs/design/rules/operations.md §4.2)', async () => {
    const closing = (async () => {
      for (;;) {
        const event = await watch.next(15_000);
        if (!event || event.event === 'connection-closing') return event;
      }
    })();
    expect(await server.stop('SIGTERM')).toBe(0);
    expect((await closing)?.json.reason).toBe('server_shutdown');
    const names = server.logs.map(eventName);
    const order = [
      'startup.signal.sigterm.received',
      'startup.shutdown.token.cancelled',
      'startup.shutdown.received',
      'startup.server.stopped',
      'startup.backend.shutdown.completed',
    ];
    const positions = order.map((name) => names.indexOf(name));
    for (const [index, position] of positions.entries()) expect(position, order[index]).toBeGreaterThanOrEqual(0);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (const name of order) expect(find(server.logs, name)?.severityText, name).toBe('INFO');
    expect(positions[0]).toBeGreaterThan(names.indexOf('startup.server.started'));
  });

  it('never writes a secret in any line, on stdout or stderr', () => {
    const text = `${JSON.stringify(server.logs)}\n${server.stderr()}`;
    for (const secret of [...Object.values(SECRETS), ...forgedTokens]) expect(text, secret).not.toContain(secret);
  });
});

// ---------------------------------------------------------------------------------------------

describe('a server at debug (HOSTNAME only, non-strict, blank RUST_LOG)', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({
      config: serverConfig({ logging: { level: 'debug', access_log: 'info' }, notification_schema_strict: false }),
      env: { HOSTNAME: 'host-only-7', RUST_LOG: '   ' },
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('takes k8s.pod.name from HOSTNAME and omits the namespace when unset', () => {
    for (const line of server.logs) {
      expectLineShape(line, { 'service.name': 'aviso-server', 'service.version': PACKAGE_VERSION, 'k8s.pod.name': 'host-only-7' });
    }
  });

  it('treats a blank RUST_LOG as unset: no warning, logging.level applies', async () => {
    expect(server.stderr()).toBe('');
    const requestId = (await request(`${server.url}/health`)).headers.get('x-request-id');
    await waitFor(() => find(server.logs, 'http.request.completed', requestId) !== undefined);
    expect(find(server.logs, 'http.request.completed', requestId)?.severityText).toBe('DEBUG');
  });

  it('warns at startup that strict mode is explicitly disabled', () => {
    expect(find(server.logs, 'configuration.schema_strict.explicit_disabled')?.severityText).toBe('WARN');
  });

  it.each([
    ['/health', 'DEBUG', '/health'],
    ['/metrics', 'DEBUG', 'unmatched'],
    ['/static/app.css', 'DEBUG', undefined],
    ['/swagger-ui/', 'DEBUG', undefined],
    ['/console/', 'DEBUG', undefined],
    ['/console/main.js', 'DEBUG', undefined],
    ['/api-docs/openapi.json', 'DEBUG', undefined],
    ['/health/', 'INFO', undefined],
    ['/healthz', 'INFO', 'unmatched'],
    ['/healthcheck', 'INFO', 'unmatched'],
    ['/api/v1/schema', 'INFO', '/api/v1/schema'],
  ] as const)('logs the access line of GET %s at %s', async (path, level, route) => {
    const response = await request(`${server.url}${path}`);
    const requestId = response.headers.get('x-request-id');
    await waitFor(() => find(server.logs, 'http.request.completed', requestId) !== undefined);
    const line = find(server.logs, 'http.request.completed', requestId);
    expect(line?.severityText).toBe(level);
    expect(line?.attributes).toMatchObject({ method: 'GET', status_code: response.status });
    if (route) expect(line?.attributes?.route).toBe(route);
  });

  it('labels log fields of an unknown type accepted in non-strict mode as generic', async () => {
    const response = await postJson(`${server.url}/api/v1/notification`, { event_type: 'caller_text_77', identifier: { k: 'v' } });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    await waitFor(() => find(server.logs, 'http.request.completed', requestId) !== undefined);
    expect(find(server.logs, 'api.notification.processed', requestId)?.attributes?.event_type).toBe('generic');
  });
});

// ---------------------------------------------------------------------------------------------

describe('D34: the access line is a debug line by default', () => {
  it('a notify at info writes its one api.notification.processed line and no access line', async () => {
    const server = await startServer({ config: serverConfig({ logging: { level: 'info' } }) });
    try {
      const ok = await postJson(`${server.url}/api/v1/notification`, DISS_A);
      expect(ok.status).toBe(200);
      const requestId = ok.headers.get('x-request-id');
      await waitFor(() => find(server.logs, 'api.notification.processed', requestId) !== undefined);
      // The access line, when written, follows the event: a later request's line proves none came.
      const later = await request(`${server.url}/api/v1/schema`);
      expect(later.status).toBe(200);
      const bad = await postJson(`${server.url}/api/v1/notification`, '{');
      await waitFor(() => find(server.logs, 'api.request.parse.failed', bad.headers.get('x-request-id')) !== undefined);
      expect(linesOf(server.logs, requestId).map(eventName)).toEqual(['api.notification.processed']);
      expect(server.logs.some((line) => eventName(line) === 'http.request.completed')).toBe(false);
    } finally {
      await server.stop();
    }
  });

  it('at debug every access line is written at debug, business routes included', async () => {
    const server = await startServer({ config: serverConfig({ logging: { level: 'debug' } }) });
    try {
      const ok = await postJson(`${server.url}/api/v1/notification`, DISS_A);
      const requestId = ok.headers.get('x-request-id');
      await waitFor(() => find(server.logs, 'http.request.completed', requestId) !== undefined);
      expect(find(server.logs, 'http.request.completed', requestId)).toMatchObject({
        severityText: 'DEBUG',
        attributes: { route: '/api/v1/notification', status_code: 200 },
      });
    } finally {
      await server.stop();
    }
  });
});

describe('level selection (docs/design/rules/operations.md §3.4.2)', () => {
  it('logging.level: warn hides info lines', async () => {
    const server = await spawnQuiet(serverConfig({ logging: { level: 'warn' } }));
    try {
      const ok = await postJson(`${server.url}/api/v1/notification`, DISS_A);
      expect(ok.status).toBe(200);
      const bad = await postJson(`${server.url}/api/v1/notification`, '{');
      const badId = bad.headers.get('x-request-id');
      await waitFor(() => find(server.logs, 'api.request.parse.failed', badId) !== undefined);
      expect(find(server.logs, 'api.request.parse.failed', badId)?.severityText).toBe('WARN');
      for (const line of server.logs) {
        expect(line.severityNumber as number, `${line.severityText} ${eventName(line)}`).toBeGreaterThanOrEqual(13);
        expectLineShape(line, { 'service.name': 'aviso-server', 'service.version': PACKAGE_VERSION });
      }
      expect(find(server.logs, 'startup.server.started')).toBeUndefined();
      expect(linesOf(server.logs, ok.headers.get('x-request-id'))).toEqual([]);
      expect(server.stderr()).toBe('');
    } finally {
      await server.stop();
    }
  });

  it('RUST_LOG=debug overrides logging.level: warn', async () => {
    const server = await startServer({ config: serverConfig({ logging: { level: 'warn' } }), env: { RUST_LOG: 'debug' } });
    try {
      const health = await request(`${server.url}/health`);
      const requestId = health.headers.get('x-request-id');
      await waitFor(() => find(server.logs, 'http.request.completed', requestId) !== undefined);
      expect(find(server.logs, 'http.request.completed', requestId)?.severityText).toBe('DEBUG');
      expect(find(server.logs, 'startup.server.started')?.severityText).toBe('INFO');
      expect(server.stderr()).toBe('');
    } finally {
      await server.stop();
    }
  });

  it('an invalid RUST_LOG prints one warning on stderr quoting it and the fallback level, and logging.level applies', async () => {
    const server = await startServer({
      config: serverConfig({ logging: { level: 'info', access_log: 'info' } }),
      env: { RUST_LOG: 'aviso_server=loud' },
    });
    try {
      const stderrLines = server
        .stderr()
        .split('\n')
        .filter((l) => l.trim() !== '');
      expect(stderrLines).toHaveLength(1);
      expect(stderrLines[0]).toContain('aviso_server=loud');
      expect(stderrLines[0]).toContain('info');
      expect(find(server.logs, 'startup.server.started')?.severityText).toBe('INFO');
      const health = await request(`${server.url}/health`);
      const notify = await postJson(`${server.url}/api/v1/notification`, DISS_A);
      await waitFor(() => find(server.logs, 'http.request.completed', notify.headers.get('x-request-id')) !== undefined);
      expect(linesOf(server.logs, health.headers.get('x-request-id'))).toEqual([]);
      expect(server.logs.some((l) => l.severityText === 'DEBUG')).toBe(false);
    } finally {
      await server.stop();
    }
  });

  it('quotes at most 200 characters of an invalid RUST_LOG', async () => {
    const value = `=${'a'.repeat(299)}`;
    const server = await startServer({ config: serverConfig(), env: { RUST_LOG: value } });
    try {
      const stderrLines = server
        .stderr()
        .split('\n')
        .filter((l) => l.trim() !== '');
      expect(stderrLines).toHaveLength(1);
      expect(stderrLines[0]).toContain(value.slice(0, 200));
      expect(stderrLines[0]).not.toContain(value.slice(0, 201));
    } finally {
      await server.stop();
    }
  });
});

/** The 500 events need a backend that can fail: JetStream with its NATS server killed. */
// Each request here waits out the JetStream timeouts of a vanished server (two 5 s publish attempts),
// so the tests get a budget with room for a loaded machine.
describe('backend failure events (docs/design/rules/operations.md §3.4.3)', { timeout: 45_000 }, () => {
  let nats: NatsServerProcess;
  let server: RunningServer;
  beforeAll(async () => {
    nats = await startNatsServer();
    const config = new BackendUnderTest('jetstream', nats.url).config() as {
      notification_backend: { jetstream: Record<string, unknown> };
    };
    Object.assign(config.notification_backend.jetstream, { publish_retry_attempts: 1 });
    server = await startServer({ config });
    await nats.kill();
  });
  afterAll(async () => {
    await server.stop();
    await nats.stop();
  });

  it('logs api.request.processing.failed at error with the request id when the store fails', async () => {
    const response = await postJson(`${server.url}/api/v1/notification`, MARS_EXAMPLE);
    expect(response.status).toBe(500);
    const requestId = response.headers.get('x-request-id');
    const matches = (l: LogLine) => eventName(l) === 'api.request.processing.failed' && l.attributes?.request_id === requestId;
    // The answer can come back before the log line does (the backend fails fast while NATS is away).
    await waitFor(() => server.logs.some(matches));
    const line = server.logs.find(matches);
    expect(line?.severityText).toBe('ERROR');
    expect(line?.attributes).toMatchObject({ error_code: 'NOTIFICATION_STORAGE_FAILED', event_type: 'mars' });
  });

  it('logs stream.sse.initialization.failed at error with the topic when a stream cannot be set up', async () => {
    const client = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'mars', identifier: { class: 'od' } });
    expect(client.status).toBe(500);
    const requestId = client.headers.get('x-request-id');
    const matches = (l: LogLine) => eventName(l) === 'stream.sse.initialization.failed' && l.attributes?.request_id === requestId;
    // The answer can come back before the log line does (the backend fails fast while NATS is away).
    await waitFor(() => server.logs.some(matches));
    const line = server.logs.find(matches);
    expect(line?.severityText).toBe('ERROR');
    expect(line?.attributes).toMatchObject({ error_code: 'SSE_STREAM_INITIALIZATION_FAILED', topic: 'mars.od.*.*.*.*.*.*' });
  });
});
