import { request as httpRequest, createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_USERS, FakeAuthOTron, JWT_SECRET, LOCAL_REALM, signToken } from '../support/fake-auth-o-tron.js';
import { UUID_V4 } from '../support/http.js';
import { EVERY_CLIENT_ERROR_LINE, serverConfig } from '../support/schemas.js';
import { startServer, type LogLine, type RunningServer } from '../support/server-process.js';

/**
 * Authentication and authorisation against the real server process (docs/design/rules/operations.md §2.1–§2.9,
 * docs/design/rules/operations.md §6; docs/design/rules/api.md §4–§6, §9.3, §10; D12), in both modes: `direct` with the fake auth-o-tron of §6 and
 * `trusted_proxy` with tokens signed here. Responses are read with `node:http` so that the
 * separate `WWW-Authenticate` header fields stay visible (fetch would join them).
 *
 * Servers (all in-memory, logging at trace so every log line can be searched for secrets):
 * - `direct`: mode direct, the shared fake, strict schema mode;
 * - `proxy`: mode trusted_proxy, `auth_o_tron_url` pointing at the fake, which must never be called;
 * - `down`: mode direct, auth-o-tron URL on a closed port (with user info, to check redaction);
 * - `hang`: mode direct, the shared fake, `timeout_ms: 300`, `notification_schema_strict: false`.
 */

// ---------------------------------------------------------------------------------------------
// Schemas: one per row of the docs/design/rules/operations.md §2.7 table, plus `required: false` and a realm-wide `"*"` writer.

const OTHER_REALM = 'otherrealm';

function stream(base: string, auth?: Record<string, unknown>): Record<string, unknown> {
  return {
    topic: { base, key_order: ['name'] },
    identifier: { name: { type: 'StringHandler', required: true } },
    ...(auth ? { auth } : {}),
  };
}

const AUTH_SCHEMAS = {
  /** No `auth` block: public. */
  pub: stream('pub'),
  /** `required: false`: public. */
  pub_false: stream('pubfalse', { required: false }),
  /** Neither role map: any authenticated reader, admins only write. */
  open_req: stream('openreq', { required: true }),
  /** Only `read_roles`. */
  read_roles_only: stream('readroles', { required: true, read_roles: { [LOCAL_REALM]: ['reader'] } }),
  /** Only `write_roles`. */
  write_roles_only: stream('writeroles', { required: true, write_roles: { [LOCAL_REALM]: ['producer'] } }),
  /** Both; `"*"` grants every `otherrealm` user read access (and nothing in `localrealm`). */
  both_roles: stream('bothroles', {
    required: true,
    read_roles: { [LOCAL_REALM]: ['reader'], [OTHER_REALM]: ['*'] },
    write_roles: { [LOCAL_REALM]: ['producer'] },
  }),
  /** `"*"` in `write_roles`: every `localrealm` user writes; it never crosses into `otherrealm`. */
  star_write: stream('starwrite', { required: true, write_roles: { [LOCAL_REALM]: ['*'] } }),
} as const;
type StreamName = keyof typeof AUTH_SCHEMAS;
const STREAM_NAMES = Object.keys(AUTH_SCHEMAS) as StreamName[];

type Mode = 'direct' | 'trusted_proxy';
const MODES: readonly Mode[] = ['direct', 'trusted_proxy'];

function authBlock(mode: Mode, url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    enabled: true,
    mode,
    auth_o_tron_url: url,
    jwt_secret: JWT_SECRET,
    admin_roles: { [LOCAL_REALM]: ['admin'] },
    timeout_ms: 5000,
    ...extra,
  };
}

function config(auth: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  // Every denial logged: the telemetry tests look for one line after the matrix's bursts.
  return serverConfig({ notification_schema: AUTH_SCHEMAS, auth, logging: { level: 'trace', ...EVERY_CLIENT_ERROR_LINE }, ...extra });
}

// ---------------------------------------------------------------------------------------------
// Messages (docs/design/rules/operations.md §2.8, exact).

const MSG = {
  headerRequired: 'Authorization header is required',
  notUtf8: 'Authorization header is not valid UTF-8',
  empty: 'Authorization header cannot be empty',
  scheme: 'Authorization header must use Bearer or Basic scheme',
  bearerToken: 'Authorization header must use Bearer token',
  invalidToken: 'Invalid or expired token',
  missingClaims: 'Token is missing required user claims',
  streamAuth: 'Authentication is required for this stream',
  denied: 'Token validation was denied',
  notAdmin: 'User does not have required administrative role',
  readRole: 'User does not have required read role for this stream',
  writeRole: 'User does not have required write role for this stream',
  adminsOnly: 'Only administrators can write to this stream',
  unavailable: 'Authentication service temporarily unavailable',
} as const;

const POINT_ON_NOTIFY = 'identifier.point is only supported for watch/replay endpoints, not /notification';

// ---------------------------------------------------------------------------------------------
// Users.

type UserName = 'anonymous' | 'reader' | 'producer' | 'admin' | 'other';
type Caller = Exclude<UserName, 'anonymous'>;
const USERS: readonly UserName[] = ['anonymous', 'reader', 'producer', 'admin', 'other'];

const fake = new FakeAuthOTron();
let direct: RunningServer;
let proxy: RunningServer;
let down: RunningServer;
let hang: RunningServer;
/** Bearer values per mode and caller, built in beforeAll. */
const credentials: Record<Mode, Record<Caller, string>> = {
  direct: { reader: '', producer: '', admin: '', other: '' },
  trusted_proxy: { reader: '', producer: '', admin: '', other: '' },
};
/** Every token handed to a server, to check none is logged. */
const tokensSent: string[] = [];

const DOWN_USERINFO_PASSWORD = 'svc-secret-pw';

async function bearer(claims: Record<string, unknown>, options: Parameters<typeof signToken>[1] = {}): Promise<string> {
  const token = await signToken(claims, options);
  tokensSent.push(token);
  return `Bearer ${token}`;
}

function userClaims(username: string, realm: string, roles: readonly string[]): Record<string, unknown> {
  return { sub: username, username, realm, roles: [...roles], attributes: {} };
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  await fake.start();
  const port = await closedPort();
  [direct, proxy, down, hang] = await Promise.all([
    startServer({ config: config(authBlock('direct', fake.url)) }),
    startServer({ config: config(authBlock('trusted_proxy', fake.url)) }),
    startServer({ config: config(authBlock('direct', `http://svc-user:${DOWN_USERINFO_PASSWORD}@127.0.0.1:${port}/`)) }),
    startServer({
      config: config(authBlock('direct', `${fake.url}/`, { timeout_ms: 300 }), { notification_schema_strict: false }),
    }),
  ]);
  const other = await bearer(userClaims('other-user', OTHER_REALM, ['admin', 'reader', 'producer']));
  credentials.direct = {
    reader: FAKE_USERS.reader.authorization,
    producer: FAKE_USERS.producer.authorization,
    admin: FAKE_USERS.admin.authorization,
    other,
  };
  credentials.trusted_proxy = {
    reader: await bearer(userClaims('reader-user', LOCAL_REALM, ['reader'])),
    producer: await bearer(userClaims('producer-user', LOCAL_REALM, ['producer'])),
    admin: await bearer(userClaims('admin-user', LOCAL_REALM, ['admin'])),
    other,
  };
});

afterAll(async () => {
  await Promise.all([direct?.stop(), proxy?.stop(), down?.stop(), hang?.stop()]);
  await fake.stop();
});

beforeEach(() => fake.reset());

// ---------------------------------------------------------------------------------------------
// HTTP with raw headers.

interface SseFrame {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: Record<string, unknown>;
  /** The `WWW-Authenticate` header fields, one entry per field line, in order. */
  readonly challenges: readonly string[];
  /** For an event stream: its first frame (the stream is then closed). */
  readonly firstFrame: SseFrame | undefined;
}

interface CallOptions {
  /** The `Authorization` value; `undefined` sends none. Latin-1 characters go out as single bytes. */
  readonly authorization?: string;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
}

function firstSseFrame(text: string): SseFrame | undefined {
  for (const block of text.split(/\r?\n\r?\n/).slice(0, -1)) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) return { event, data: JSON.parse(data.join('\n')) as Record<string, unknown> };
  }
  return undefined;
}

function call(server: RunningServer, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  if (body !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise<Reply>((resolve, reject) => {
    let settled = false;
    const request = httpRequest(`${server.url}${path}`, { method, headers, agent: false }, (response) => {
      const isStream = (response.headers['content-type'] ?? '').startsWith('text/event-stream');
      let text = '';
      const finish = (firstFrame: SseFrame | undefined) => {
        if (settled) return;
        settled = true;
        let json: Record<string, unknown> = {};
        if (!isStream) {
          try {
            json = JSON.parse(text) as Record<string, unknown>;
          } catch {
            // not JSON; tests that care look at `text`
          }
        }
        const challenges: string[] = [];
        for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
          if (response.rawHeaders[i]?.toLowerCase() === 'www-authenticate') challenges.push(response.rawHeaders[i + 1] as string);
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json, challenges, firstFrame });
      };
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (isStream) {
          const frame = firstSseFrame(text);
          if (frame) {
            finish(frame);
            response.destroy();
          }
        }
      });
      response.on('end', () => finish(isStream ? firstSseFrame(text) : undefined));
      response.on('error', (error) => {
        if (!settled) reject(error);
      });
    });
    request.setTimeout(15_000, () => request.destroy(new Error(`${method} ${path}: no answer within 15 s`)));
    request.on('error', (error) => {
      if (!settled) reject(error);
    });
    if (body !== undefined) request.write(body);
    request.end();
  });
}

type Operation = 'notify' | 'watch' | 'replay';
const OPERATIONS: readonly Operation[] = ['notify', 'watch', 'replay'];
const PATH: Record<Operation, string> = {
  notify: '/api/v1/notification',
  watch: '/api/v1/watch',
  replay: '/api/v1/replay',
};

function bodyFor(operation: Operation, eventType: string, identifier: Record<string, unknown> = { name: 'n1' }) {
  if (operation === 'notify') return { event_type: eventType, identifier, payload: { note: 'x' } };
  if (operation === 'replay') return { event_type: eventType, identifier, from_id: '1' };
  return { event_type: eventType, identifier };
}

function perform(
  server: RunningServer,
  operation: Operation,
  eventType: string,
  authorization?: string,
  identifier?: Record<string, unknown>,
) {
  return call(server, 'POST', PATH[operation], { authorization, body: bodyFor(operation, eventType, identifier) });
}

// ---------------------------------------------------------------------------------------------
// Expectations.

const SHAPE_C = {
  401: { code: 'UNAUTHORIZED', error: 'unauthorized' },
  403: { code: 'FORBIDDEN', error: 'forbidden' },
  503: { code: 'SERVICE_UNAVAILABLE', error: 'service_unavailable' },
} as const;

function challengesFor(mode: Mode): string[] {
  return mode === 'direct' ? ['Bearer', 'Basic'] : ['Bearer'];
}

/** Shape C, exactly four members, `request_id` = header; challenges on a 401 only. */
function expectAuthError(reply: Reply, status: 401 | 403 | 503, message: string, mode: Mode): void {
  const requestId = reply.headers['x-request-id'];
  expect(requestId).toMatch(UUID_V4);
  expect({ status: reply.status, text: reply.text }).toEqual({
    status,
    text: JSON.stringify({ ...SHAPE_C[status], message, request_id: requestId }),
  });
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(reply.json)).toEqual(['code', 'error', 'message', 'request_id']);
  expect(reply.challenges).toEqual(status === 401 ? challengesFor(mode) : []);
}

function expectAllowed(reply: Reply, operation: Operation): void {
  if (operation === 'notify') {
    expect({ status: reply.status, text: reply.text, body: reply.json.status }).toMatchObject({ status: 200, body: 'success' });
    return;
  }
  expect({ status: reply.status, text: reply.text.slice(0, 300) }).toMatchObject({ status: 200 });
  expect(reply.headers['content-type']).toMatch(/^text\/event-stream/);
  expect(reply.firstFrame?.data.type).toBe(operation === 'watch' ? 'connection_established' : 'replay_started');
  expect(reply.challenges).toEqual([]);
}

/** A 400 shape-A/B answer with this code (and message, when given). */
function expect400(reply: Reply, code: string, message?: string): void {
  expect({ status: reply.status, code: reply.json.code }).toEqual({ status: 400, code });
  if (message !== undefined) expect(reply.json.message).toBe(message);
  expect(reply.json.request_id).toBe(reply.headers['x-request-id']);
  expect(reply.challenges).toEqual([]);
}

/** Admin body of docs/design/rules/api.md §10 / docs/design/rules/operations.md §4.5, fixed key order. */
function expectAdminBody(reply: Reply, status: number, message: string, notificationId?: string): void {
  const requestId = reply.headers['x-request-id'];
  const body =
    notificationId === undefined
      ? { success: status === 200, message, request_id: requestId }
      : { success: status === 200, message, notification_id: notificationId, request_id: requestId };
  expect({ status: reply.status, text: reply.text }).toEqual({ status, text: JSON.stringify(body) });
}

// ---------------------------------------------------------------------------------------------
// The per-stream table of docs/design/rules/operations.md §2.7.

type Outcome = 'ok' | 'anonymous' | 'readRole' | 'writeRole' | 'adminsOnly';
type Row = Record<UserName, Outcome>;

const ALL_OK: Row = { anonymous: 'ok', reader: 'ok', producer: 'ok', admin: 'ok', other: 'ok' };
const AUTHENTICATED: Row = { ...ALL_OK, anonymous: 'anonymous' };
const ADMINS_ONLY: Row = { anonymous: 'anonymous', reader: 'adminsOnly', producer: 'adminsOnly', admin: 'ok', other: 'adminsOnly' };

const READ_TABLE: Record<StreamName, Row> = {
  pub: ALL_OK,
  pub_false: ALL_OK,
  open_req: AUTHENTICATED,
  read_roles_only: { anonymous: 'anonymous', reader: 'ok', producer: 'readRole', admin: 'ok', other: 'readRole' },
  write_roles_only: AUTHENTICATED,
  both_roles: { anonymous: 'anonymous', reader: 'ok', producer: 'readRole', admin: 'ok', other: 'ok' },
  star_write: AUTHENTICATED,
};

const WRITE_TABLE: Record<StreamName, Row> = {
  pub: ALL_OK,
  pub_false: ALL_OK,
  open_req: ADMINS_ONLY,
  read_roles_only: ADMINS_ONLY,
  write_roles_only: { anonymous: 'anonymous', reader: 'writeRole', producer: 'ok', admin: 'ok', other: 'writeRole' },
  both_roles: { anonymous: 'anonymous', reader: 'writeRole', producer: 'ok', admin: 'ok', other: 'writeRole' },
  star_write: { anonymous: 'anonymous', reader: 'ok', producer: 'ok', admin: 'ok', other: 'writeRole' },
};

const OUTCOME_ERROR: Record<Exclude<Outcome, 'ok'>, { status: 401 | 403; message: string }> = {
  anonymous: { status: 401, message: MSG.streamAuth },
  readRole: { status: 403, message: MSG.readRole },
  writeRole: { status: 403, message: MSG.writeRole },
  adminsOnly: { status: 403, message: MSG.adminsOnly },
};

const TABLE_ROWS: [StreamName, Operation, UserName, Outcome][] = STREAM_NAMES.flatMap((name) =>
  OPERATIONS.flatMap((operation) =>
    USERS.map((user): [StreamName, Operation, UserName, Outcome] => [
      name,
      operation,
      user,
      (operation === 'notify' ? WRITE_TABLE : READ_TABLE)[name][user],
    ]),
  ),
);

// ---------------------------------------------------------------------------------------------

describe.each(MODES)('%s mode', (mode) => {
  const server = (): RunningServer => (mode === 'direct' ? direct : proxy);
  const credential = (user: UserName): string | undefined => (user === 'anonymous' ? undefined : credentials[mode][user]);

  if (mode === 'trusted_proxy') {
    afterEach(() => {
      // auth_o_tron_url is ignored in this mode: the fake it points at must never be called.
      expect(fake.callCount).toBe(0);
    });
  }

  describe('per-stream read/write rules (docs/design/rules/operations.md §2.7)', () => {
    it.each(TABLE_ROWS)('%s: %s by %s → %s', async (name, operation, user, outcome) => {
      const reply = await perform(server(), operation, name, credential(user));
      if (outcome === 'ok') expectAllowed(reply, operation);
      else expectAuthError(reply, OUTCOME_ERROR[outcome].status, OUTCOME_ERROR[outcome].message, mode);
      if (mode === 'direct') {
        // One auth-o-tron call per credentialed request, none for anonymous ones (docs/design/rules/operations.md §2.2).
        expect(fake.callCount).toBe(user === 'anonymous' ? 0 : 1);
      }
    });
  });

  describe('tokens verified on public and private streams alike (docs/design/rules/operations.md §2.2, §2.5)', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const admin = userClaims('admin-user', LOCAL_REALM, ['admin']);

    const badTokens: [string, () => Promise<string>][] = [
      ['expired an hour ago', () => bearer({ ...admin, exp: now() - 3600 })],
      ['expired 2 minutes ago (beyond the 60 s leeway)', () => bearer({ ...admin, exp: now() - 120 })],
      ['signed with another secret', () => bearer(admin, { secret: 'not-the-secret' })],
      ['HS384 with the right secret', () => bearer(admin, { alg: 'HS384' })],
      ['alg none with an HS256 MAC', () => bearer(admin, { alg: 'none' })],
      ['without exp', () => bearer(admin, { expiresInSeconds: null })],
      ['with a numeric username', () => bearer({ ...admin, username: 42 })],
      ['with string roles', () => bearer({ ...admin, roles: 'admin' })],
    ];

    const targets: [string, (authorization: string) => Promise<Reply>][] = [
      ['notify on a public stream', (a) => perform(server(), 'notify', 'pub', a)],
      ['watch on a public stream', (a) => perform(server(), 'watch', 'pub', a)],
      ['replay on a required:false stream', (a) => perform(server(), 'replay', 'pub_false', a)],
      ['notify on a private stream', (a) => perform(server(), 'notify', 'open_req', a)],
      ['watch on a private stream', (a) => perform(server(), 'watch', 'read_roles_only', a)],
      ['an admin endpoint', (a) => call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization: a })],
      ['an unknown path under /api/v1', (a) => call(server(), 'GET', '/api/v1/nothing-here', { authorization: a })],
    ];

    const cases = badTokens.flatMap(([label, make]) => targets.map(([where, send]) => [label, where, make, send] as const));

    it.each(cases)('a token %s → 401 Invalid or expired token on %s', async (_label, _where, make, send) => {
      expectAuthError(await send(await make()), 401, MSG.invalidToken, mode);
    });

    it('a token without username and sub → 401 Token is missing required user claims, on public and admin paths', async () => {
      const authorization = await bearer({ realm: LOCAL_REALM, roles: ['admin'], attributes: {} });
      expectAuthError(await perform(server(), 'notify', 'pub', authorization), 401, MSG.missingClaims, mode);
      expectAuthError(await perform(server(), 'watch', 'open_req', authorization), 401, MSG.missingClaims, mode);
      expectAuthError(await call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 401, MSG.missingClaims, mode);
    });

    it('a token that expired 20 s ago is still accepted (60 s leeway)', async () => {
      const authorization = await bearer({ ...admin, exp: now() - 20 });
      expectAdminBody(await call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 200, 'Successfully wiped all data');
    });

    it('a token not valid before next year is accepted (nbf is not validated)', async () => {
      const authorization = await bearer({ ...admin, nbf: now() + 365 * 86_400, iat: now() });
      expectAdminBody(await call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 200, 'Successfully wiped all data');
    });

    it('the user falls back to sub; aud and iss are ignored', async () => {
      const authorization = await bearer({ sub: 'subject-admin', realm: LOCAL_REALM, roles: ['admin'], aud: 'x', iss: 'y' });
      expectAdminBody(await call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 200, 'Successfully wiped all data');
    });

    it('the scheme is case-insensitive', async () => {
      const token = (await bearer(admin)).slice('Bearer '.length);
      expectAdminBody(
        await call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization: `bEaReR ${token}` }),
        200,
        'Successfully wiped all data',
      );
    });

    it('admin_roles are realm-scoped: role admin in another realm is not an admin', async () => {
      const authorization = await bearer(userClaims('foreign-admin', OTHER_REALM, ['admin']));
      expectAuthError(await call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 403, MSG.notAdmin, mode);
    });

    it('a user without realm is no admin and cannot read a role-restricted stream', async () => {
      const authorization = await bearer({ username: 'realmless', roles: ['admin', 'reader'] });
      expectAuthError(await call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 403, MSG.notAdmin, mode);
      expectAuthError(await perform(server(), 'watch', 'read_roles_only', authorization), 403, MSG.readRole, mode);
      // ...but it is an authenticated user.
      expectAllowed(await perform(server(), 'watch', 'open_req', authorization), 'watch');
    });

    it('role names are case-sensitive', async () => {
      const authorization = await bearer(userClaims('shouty', LOCAL_REALM, ['ADMIN', 'Reader']));
      expectAuthError(await call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 403, MSG.notAdmin, mode);
      expectAuthError(await perform(server(), 'replay', 'read_roles_only', authorization), 403, MSG.readRole, mode);
    });
  });

  describe('malformed Authorization headers (docs/design/rules/operations.md §2.2, §2.3.1, §2.4)', () => {
    const malformed: [string, string, string][] =
      mode === 'direct'
        ? [
            ['a non-ASCII byte', 'Basic \u00e9', MSG.notUtf8],
            ['UTF-8 bytes of é', 'Bearer \u00c3\u00a9.a.b', MSG.notUtf8],
            ['an empty value', '', MSG.empty],
            ['the Digest scheme', 'Digest abc', MSG.scheme],
            ['a bare Bearer', 'Bearer', MSG.scheme],
            ['a bare Basic', 'Basic', MSG.scheme],
            ['no scheme', 'YWRtaW4tdXNlcjphZG1pbi1wYXNz', MSG.scheme],
            ['Bearer padded with spaces only', 'Bearer    ', MSG.scheme],
          ]
        : [
            ['Basic credentials', FAKE_USERS.admin.authorization, MSG.bearerToken],
            ['the Digest scheme', 'Digest abc', MSG.bearerToken],
            ['a bare Bearer', 'Bearer', MSG.bearerToken],
            ['three parts', 'Bearer a.b.c extra', MSG.bearerToken],
            ['an empty value', '', MSG.bearerToken],
            ['a token without scheme', 'a.b.c', MSG.bearerToken],
          ];

    it.each(malformed)('%s (%j) on an admin path → 401 with the parse message', async (_label, authorization, message) => {
      for (const [method, path] of [
        ['DELETE', '/api/v1/admin/wipe/all'],
        ['DELETE', '/api/v1/admin/notification/pub@1'],
        ['DELETE', '/api/v1/admin/no-such-route'],
      ] as const) {
        expectAuthError(await call(server(), method, path, { authorization }), 401, message, mode);
      }
      expect(fake.callCount).toBe(0);
    });

    it.each(malformed)('%s (%j) is ignored elsewhere: anonymous access', async (_label, authorization) => {
      expectAllowed(await perform(server(), 'notify', 'pub', authorization), 'notify');
      expectAllowed(await perform(server(), 'watch', 'pub_false', authorization), 'watch');
      expectAllowed(await perform(server(), 'replay', 'pub', authorization), 'replay');
      // Anonymous on a protected stream.
      expectAuthError(await perform(server(), 'watch', 'open_req', authorization), 401, MSG.streamAuth, mode);
      expectAuthError(await perform(server(), 'notify', 'open_req', authorization), 401, MSG.streamAuth, mode);
      expect(fake.callCount).toBe(0);
    });
  });

  describe('admin endpoints (docs/design/rules/operations.md §2.2, §4.5)', () => {
    const ENDPOINTS: [string, string, unknown][] = [
      ['DELETE', '/api/v1/admin/wipe/all', undefined],
      ['DELETE', '/api/v1/admin/wipe/stream', { stream_name: 'pub' }],
      ['DELETE', '/api/v1/admin/notification/pub@999999', undefined],
    ];

    it.each(ENDPOINTS)('%s %s without credentials → 401 Authorization header is required', async (method, path, body) => {
      expectAuthError(await call(server(), method, path, { body }), 401, MSG.headerRequired, mode);
    });

    it.each(
      ENDPOINTS.flatMap(([method, path, body]) =>
        (['reader', 'producer', 'other'] as const).map((user) => [method, path, user, body] as const),
      ),
    )('%s %s by %s → 403 User does not have required administrative role', async (method, path, user, body) => {
      expectAuthError(await call(server(), method, path, { body, authorization: credential(user) }), 403, MSG.notAdmin, mode);
    });

    it('admin → 200 on the wipes, and the delete reaches its handler', async () => {
      const authorization = credential('admin');
      expectAdminBody(await call(server(), 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 200, 'Successfully wiped all data');
      expectAdminBody(
        await call(server(), 'DELETE', '/api/v1/admin/wipe/stream', { authorization, body: { stream_name: 'pub' } }),
        200,
        'Successfully wiped stream: pub',
      );
      expectAdminBody(
        await call(server(), 'DELETE', '/api/v1/admin/notification/pub@999999', { authorization }),
        404,
        'Notification not found',
        'pub@999999',
      );
    });

    it('an unknown admin path or a wrong method without credentials → 401, not 404/405', async () => {
      for (const [method, path] of [
        ['DELETE', '/api/v1/admin/no-such-route'],
        ['GET', '/api/v1/admin/wipe/all'],
        ['POST', '/api/v1/admin/wipe/stream'],
        ['GET', '/api/v1/admin'],
        ['GET', '/api/v1/admin/'],
      ] as const) {
        expectAuthError(await call(server(), method, path), 401, MSG.headerRequired, mode);
      }
    });

    it('an unknown admin path as a non-admin → 403; as an admin → 404', async () => {
      expectAuthError(
        await call(server(), 'DELETE', '/api/v1/admin/no-such-route', { authorization: credential('reader') }),
        403,
        MSG.notAdmin,
        mode,
      );
      const reply = await call(server(), 'DELETE', '/api/v1/admin/no-such-route', { authorization: credential('admin') });
      expect({ status: reply.status, code: reply.json.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
    });

    it('admin paths are matched by the prefix /api/v1/admin (docs/design/rules/operations.md §2.1, §2.2)', async () => {
      for (const path of ['/api/v1/administrator', '/api/v1/admin-tools/wipe']) {
        expectAuthError(await call(server(), 'DELETE', path), 401, MSG.headerRequired, mode);
      }
    });

    it.each([
      ['DELETE', '/api/v1/%61dmin/wipe/all', undefined],
      ['DELETE', '/api/v1/adm%69n/wipe/stream', { stream_name: 'pub' }],
      ['DELETE', '/api/v1/%61dmin/notification/pub@999999', undefined],
      ['DELETE', '/api/v1/admin/wipe/%61ll', undefined],
    ] as const)('a percent-encoded admin path (%s %s) still needs an admin', async (method, path, body) => {
      expectAuthError(await call(server(), method, path, { body }), 401, MSG.headerRequired, mode);
      expectAuthError(await call(server(), method, path, { body, authorization: credential('reader') }), 403, MSG.notAdmin, mode);
    });

    it('an unknown path under /api/v1 is 404 anonymously, but presented credentials are verified first', async () => {
      const anonymous = await call(server(), 'GET', '/api/v1/nothing-here');
      expect({ status: anonymous.status, code: anonymous.json.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
      const reader = await call(server(), 'GET', '/api/v1/nothing-here', { authorization: credential('reader') });
      expect({ status: reader.status, code: reader.json.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
    });
  });

  describe('schema endpoints and paths outside /api/v1 are never authenticated (docs/design/rules/operations.md §2.1)', () => {
    const GARBAGE: [string, string][] = [
      ['wrong Basic password', `Basic ${Buffer.from('admin-user:wrong').toString('base64')}`],
      ['unknown Basic user', `Basic ${Buffer.from('nobody:nothing').toString('base64')}`],
      ['Digest', 'Digest abc'],
      ['empty', ''],
      ['non-ASCII', 'Basic \u00e9\u00ff'],
      ['Bearer not-a-jwt', 'Bearer not-a-jwt'],
      ['a badly signed JWT', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJ1c2VybmFtZSI6IngifQ.c2ln'],
      ['a valid admin credential', FAKE_USERS.admin.authorization],
    ];

    it.each(GARBAGE)(
      'GET /api/v1/schema and /api/v1/schema/{event_type} answer 200 with %s, without any auth-o-tron call',
      async (_label, authorization) => {
        for (const path of ['/api/v1/schema', '/api/v1/schema/open_req', '/api/v1/schema/both_roles']) {
          const reply = await call(server(), 'GET', path, { authorization });
          expect({ path, status: reply.status }).toEqual({ path, status: 200 });
          expect(reply.challenges).toEqual([]);
        }
        const unknown = await call(server(), 'GET', '/api/v1/schema/no_such_type', { authorization });
        expect(unknown.status).toBe(404);
        expect(fake.callCount).toBe(0);
      },
    );

    it.each(GARBAGE)(
      'GET /health and other paths outside /api/v1 ignore %s, without any auth-o-tron call',
      async (_label, authorization) => {
        expect((await call(server(), 'GET', '/health', { authorization })).status).toBe(200);
        // Whatever these answer (the homepage, static files and OpenAPI routes are not part of this
        // suite), it is never an auth decision.
        for (const path of ['/', '/static/logo.png', '/api-docs/openapi.json', '/swagger-ui/', '/api/v2/notification']) {
          const reply = await call(server(), 'GET', path, { authorization });
          expect({ path, status: reply.status, challenges: reply.challenges }).toMatchObject({ path, challenges: [] });
          expect([401, 403, 503]).not.toContain(reply.status);
        }
        expect(fake.callCount).toBe(0);
      },
    );

    it('a percent-encoded schema path is still a schema route: public, no auth-o-tron call', async () => {
      const authorization = `Basic ${Buffer.from('admin-user:wrong').toString('base64')}`;
      for (const path of ['/api/v1/schem%61', '/api/v1/%73chema/open_req']) {
        const reply = await call(server(), 'GET', path, { authorization });
        expect({ path, status: reply.status, text: reply.text.slice(0, 200) }).toMatchObject({ path, status: 200 });
      }
      expect(fake.callCount).toBe(0);
    });

    it('the schema API shows no auth block, roles or realms', async () => {
      const findAuth = (value: unknown, path: string): string[] => {
        if (Array.isArray(value)) return value.flatMap((item, index) => findAuth(item, `${path}[${index}]`));
        if (typeof value !== 'object' || value === null) return [];
        return Object.entries(value).flatMap(([key, item]) => [
          ...(['auth', 'read_roles', 'write_roles', 'plugins', 'required_roles'].includes(key) ? [`${path}.${key}`] : []),
          ...findAuth(item, `${path}.${key}`),
        ]);
      };
      for (const path of ['/api/v1/schema', ...STREAM_NAMES.map((name) => `/api/v1/schema/${name}`)]) {
        const reply = await call(server(), 'GET', path);
        expect(reply.status).toBe(200);
        expect(findAuth(reply.json, path)).toEqual([]);
        for (const secret of [LOCAL_REALM, OTHER_REALM, JWT_SECRET, '"*"']) expect(reply.text).not.toContain(secret);
      }
    });
  });

  describe('order of checks (docs/design/rules/operations.md §2.7, docs/design/rules/api.md §4–§6)', () => {
    it.each(OPERATIONS)('%s: strict-mode unknown event type → 400 before any stream check, for anyone', async (operation) => {
      for (const user of USERS) {
        const reply = await perform(server(), operation, 'no_such_type', credential(user));
        expect400(reply, 'UNKNOWN_EVENT_TYPE', "unknown event type 'no_such_type'");
      }
    });

    it.each(OPERATIONS)('%s: a rejected credential is a 401 before the body is even parsed', async (operation) => {
      const authorization = await bearer({ username: 'x' }, { secret: 'wrong' });
      expectAuthError(await perform(server(), operation, 'no_such_type', authorization), 401, MSG.invalidToken, mode);
      const garbage = await call(server(), 'POST', PATH[operation], { authorization, body: '{not json' });
      expectAuthError(garbage, 401, MSG.invalidToken, mode);
    });

    it.each(OPERATIONS)('%s: an unparsable body → 400 before the stream check', async (operation) => {
      const reply = await call(server(), 'POST', PATH[operation], { body: '{"event_type":"open_req",' });
      expect400(reply, 'INVALID_JSON');
    });

    it('notify: identifier.point → 400 before the write check', async () => {
      const identifier = { name: 'n1', point: '52.5,13.4' };
      for (const user of ['anonymous', 'reader'] as const) {
        for (const name of ['open_req', 'write_roles_only'] as const) {
          expect400(await perform(server(), 'notify', name, credential(user), identifier), 'INVALID_NOTIFICATION_REQUEST', POINT_ON_NOTIFY);
        }
      }
    });

    it('notify: the write check comes before identifier validation', async () => {
      const bad = { colour: 'red' };
      expect400(await perform(server(), 'notify', 'pub', undefined, bad), 'INVALID_NOTIFICATION_REQUEST');
      expectAuthError(await perform(server(), 'notify', 'write_roles_only', undefined, bad), 401, MSG.streamAuth, mode);
      expectAuthError(await perform(server(), 'notify', 'write_roles_only', credential('reader'), bad), 403, MSG.writeRole, mode);
      expectAuthError(await perform(server(), 'notify', 'open_req', credential('producer'), bad), 403, MSG.adminsOnly, mode);
      expect400(await perform(server(), 'notify', 'write_roles_only', credential('producer'), bad), 'INVALID_NOTIFICATION_REQUEST');
    });

    it.each(['watch', 'replay'] as const)('%s: the read check comes before request validation', async (operation) => {
      const bad = { bogus: 'x' };
      expect400(
        await perform(server(), operation, 'pub', undefined, bad),
        operation === 'watch' ? 'INVALID_WATCH_REQUEST' : 'INVALID_REPLAY_REQUEST',
      );
      expectAuthError(await perform(server(), operation, 'open_req', undefined, bad), 401, MSG.streamAuth, mode);
      expectAuthError(await perform(server(), operation, 'read_roles_only', credential('producer'), bad), 403, MSG.readRole, mode);
      expect400(
        await perform(server(), operation, 'read_roles_only', credential('reader'), bad),
        operation === 'watch' ? 'INVALID_WATCH_REQUEST' : 'INVALID_REPLAY_REQUEST',
      );
    });

    it('replay: a missing start cursor on a protected stream → 401 for anonymous callers, 400 for readers', async () => {
      const body = { event_type: 'read_roles_only', identifier: { name: 'n1' } };
      expectAuthError(await call(server(), 'POST', '/api/v1/replay', { body }), 401, MSG.streamAuth, mode);
      expect400(await call(server(), 'POST', '/api/v1/replay', { body, authorization: credential('reader') }), 'INVALID_REPLAY_REQUEST');
    });

    it('credentials are judged before the body is read: an oversized body with a rejected credential is a 401', async () => {
      const authorization = await bearer({ username: 'x' }, { secret: 'wrong' });
      const huge = JSON.stringify({ event_type: 'pub', identifier: { name: 'x'.repeat(300_000) } });
      expectAuthError(await call(server(), 'POST', PATH.notify, { authorization, body: huge }), 401, MSG.invalidToken, mode);
      expect((await call(server(), 'POST', PATH.notify, { body: huge })).status).toBe(413);
    });

    it('watch: polygon and point together on a protected stream → 401 for anonymous callers', async () => {
      const identifier = { name: 'n1', polygon: '(0,0,0,1,1,1,0,0)', point: '0.5,0.5' };
      expectAuthError(await perform(server(), 'watch', 'open_req', undefined, identifier), 401, MSG.streamAuth, mode);
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('direct mode only (docs/design/rules/operations.md §2.3, §6; D12)', () => {
  it('a wrong password on a public stream → 401, not anonymous access (D12)', async () => {
    const authorization = `Basic ${Buffer.from('reader-user:wrong-pass').toString('base64')}`;
    for (const operation of OPERATIONS) {
      expectAuthError(await perform(direct, operation, 'pub', authorization), 401, MSG.invalidToken, 'direct');
    }
    expect(fake.authorizations).toEqual([authorization, authorization, authorization]);
  });

  it('an unknown user and a non-JWT bearer on a public stream → 401', async () => {
    for (const authorization of [`Basic ${Buffer.from('nobody:x').toString('base64')}`, 'Bearer not-a-jwt', 'Basic !!!']) {
      expectAuthError(await perform(direct, 'notify', 'pub', authorization), 401, MSG.invalidToken, 'direct');
    }
  });

  it('the same request without credentials stays anonymous and makes no call', async () => {
    expectAllowed(await perform(direct, 'notify', 'pub'), 'notify');
    expect(fake.callCount).toBe(0);
  });

  it('forwards the client Authorization value unchanged, and nothing else of the request', async () => {
    const bearerValue = credentials.direct.other;
    const values = [
      FAKE_USERS.reader.authorization,
      `basic ${FAKE_USERS.admin.authorization.slice('Basic '.length)}`,
      `BASIC   ${FAKE_USERS.producer.authorization.slice('Basic '.length)}`,
      bearerValue,
      `bearer ${bearerValue.slice('Bearer '.length)}`,
    ];
    for (const authorization of values) {
      const reply = await call(direct, 'POST', PATH.notify, {
        authorization,
        body: bodyFor('notify', 'pub'),
        headers: {
          cookie: 'session=abc',
          'x-forwarded-for': '10.0.0.1',
          'x-forwarded-user': 'admin-user',
          'x-request-id': 'client-chosen-id',
          'x-custom': 'custom',
        },
      });
      expectAllowed(reply, 'notify');
    }
    expect(fake.authorizations).toEqual(values);
    for (const received of fake.calls) {
      expect({ method: received.method, path: received.path }).toEqual({ method: 'GET', path: '/authenticate' });
      for (const header of ['cookie', 'x-forwarded-for', 'x-forwarded-user', 'x-request-id', 'x-custom', 'content-type']) {
        expect(received.headers[header], header).toBeUndefined();
      }
    }
  });

  it('removes the trailing "/" of auth_o_tron_url', async () => {
    // The `hang` server is configured with `<fake>/`.
    expectAllowed(await perform(hang, 'notify', 'pub', FAKE_USERS.admin.authorization), 'notify');
    expect(fake.calls.map((c) => c.path)).toEqual(['/authenticate']);
  });

  it('does not cache: every credentialed request makes one call', async () => {
    for (let i = 0; i < 3; i++) expectAllowed(await perform(direct, 'watch', 'open_req', FAKE_USERS.reader.authorization), 'watch');
    expect(fake.callCount).toBe(3);
  });

  it('forbid → 403 Token validation was denied (no challenge), on public, private and admin paths', async () => {
    fake.setKnob('forbid');
    const authorization = FAKE_USERS.admin.authorization;
    expectAuthError(await perform(direct, 'notify', 'pub', authorization), 403, MSG.denied, 'direct');
    expectAuthError(await perform(direct, 'watch', 'open_req', authorization), 403, MSG.denied, 'direct');
    expectAuthError(await call(direct, 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 403, MSG.denied, 'direct');
  });

  it.each(['fail', 'no_token'] as const)('%s → 503 Authentication service temporarily unavailable (no challenge)', async (knob) => {
    fake.setKnob(knob);
    const authorization = FAKE_USERS.admin.authorization;
    expectAuthError(await perform(direct, 'notify', 'pub', authorization), 503, MSG.unavailable, 'direct');
    expectAuthError(await perform(direct, 'replay', 'both_roles', authorization), 503, MSG.unavailable, 'direct');
    expectAuthError(await call(direct, 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 503, MSG.unavailable, 'direct');
    // Without credentials nothing is asked and public streams keep working.
    expectAllowed(await perform(direct, 'notify', 'pub'), 'notify');
    expect(fake.callCount).toBe(3);
  });

  it('hang → 503 within timeout_ms, public streams keep working without credentials', async () => {
    fake.setKnob('hang');
    const started = Date.now();
    expectAuthError(await perform(hang, 'notify', 'pub', FAKE_USERS.admin.authorization), 503, MSG.unavailable, 'direct');
    expect(Date.now() - started).toBeLessThan(3000);
    expectAuthError(
      await call(hang, 'DELETE', '/api/v1/admin/wipe/all', { authorization: FAKE_USERS.admin.authorization }),
      503,
      MSG.unavailable,
      'direct',
    );
    expectAllowed(await perform(hang, 'notify', 'pub'), 'notify');
  });

  it.each(['body_token:token', 'body_token:jwt', 'body_token:access_token', 'body_string', 'body_raw'] as const)(
    '%s: the token in the body is accepted',
    async (knob) => {
      fake.setKnob(knob);
      expectAdminBody(
        await call(direct, 'DELETE', '/api/v1/admin/wipe/all', { authorization: FAKE_USERS.admin.authorization }),
        200,
        'Successfully wiped all data',
      );
      expectAllowed(await perform(direct, 'watch', 'read_roles_only', FAKE_USERS.reader.authorization), 'watch');
      expectAuthError(await perform(direct, 'watch', 'read_roles_only', FAKE_USERS.producer.authorization), 403, MSG.readRole, 'direct');
    },
  );

  it('no_username → 401 Token is missing required user claims', async () => {
    fake.setKnob('no_username');
    const authorization = FAKE_USERS.admin.authorization;
    expectAuthError(await perform(direct, 'notify', 'pub', authorization), 401, MSG.missingClaims, 'direct');
    expectAuthError(await call(direct, 'DELETE', '/api/v1/admin/wipe/all', { authorization }), 401, MSG.missingClaims, 'direct');
  });

  it('trusted proxy: identity headers other than Authorization are not read', async () => {
    const headers = { 'x-forwarded-user': 'admin-user', 'x-auth-request-user': 'admin-user', 'remote-user': 'admin-user' };
    expectAuthError(await call(proxy, 'DELETE', '/api/v1/admin/wipe/all', { headers }), 401, MSG.headerRequired, 'trusted_proxy');
    expectAuthError(
      await call(proxy, 'POST', PATH.notify, { headers, body: bodyFor('notify', 'open_req') }),
      401,
      MSG.streamAuth,
      'trusted_proxy',
    );
  });

  it('an echoed bearer token that is expired or wrongly signed → 401 after auth-o-tron accepted it', async () => {
    const expired = await bearer(userClaims('admin-user', LOCAL_REALM, ['admin']), { expiresInSeconds: -3600 });
    const wrong = await bearer(userClaims('admin-user', LOCAL_REALM, ['admin']), { secret: 'wrong' });
    for (const authorization of [expired, wrong]) {
      expectAuthError(await perform(direct, 'notify', 'pub', authorization), 401, MSG.invalidToken, 'direct');
    }
    expect(fake.authorizations).toEqual([expired, wrong]);
  });

  describe('auth-o-tron unreachable (closed port)', () => {
    it('credentialed requests → 503, on public streams too', async () => {
      for (const operation of OPERATIONS) {
        expectAuthError(await perform(down, operation, 'pub', FAKE_USERS.reader.authorization), 503, MSG.unavailable, 'direct');
      }
      expectAuthError(
        await call(down, 'DELETE', '/api/v1/admin/wipe/all', { authorization: FAKE_USERS.admin.authorization }),
        503,
        MSG.unavailable,
        'direct',
      );
    });

    it('requests without credentials keep working; admin paths still need them', async () => {
      expectAllowed(await perform(down, 'notify', 'pub'), 'notify');
      expectAllowed(await perform(down, 'watch', 'pub'), 'watch');
      expectAuthError(await perform(down, 'watch', 'open_req'), 401, MSG.streamAuth, 'direct');
      expectAuthError(await call(down, 'DELETE', '/api/v1/admin/wipe/all'), 401, MSG.headerRequired, 'direct');
    });

    it('schema endpoints answer with credentials', async () => {
      const reply = await call(down, 'GET', '/api/v1/schema', { authorization: FAKE_USERS.admin.authorization });
      expect(reply.status).toBe(200);
    });

    it('logs auth.middleware.remote.validation.failed at warn, with URL credentials stripped', async () => {
      await perform(down, 'notify', 'pub', FAKE_USERS.reader.authorization);
      const events = await waitForLogs(down, (line) => eventName(line) === 'auth.middleware.remote.validation.failed');
      expect(events[0]?.severityText).toBe('WARN');
      expect(JSON.stringify(events)).not.toContain(DOWN_USERINFO_PASSWORD);
    });
  });

  it('non-strict mode: unknown event types are public, but presented credentials are still verified', async () => {
    expectAllowed(await perform(hang, 'notify', 'generic_thing'), 'notify');
    expectAllowed(await perform(hang, 'watch', 'generic_thing'), 'watch');
    const wrong = `Basic ${Buffer.from('admin-user:nope').toString('base64')}`;
    expectAuthError(await perform(hang, 'notify', 'generic_thing', wrong), 401, MSG.invalidToken, 'direct');
  });
});

// ---------------------------------------------------------------------------------------------

function eventName(line: LogLine): unknown {
  return line.attributes?.['event.name'];
}

async function waitForLogs(server: RunningServer, predicate: (line: LogLine) => boolean, timeoutMs = 3000): Promise<LogLine[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = server.logs.filter(predicate);
    if (found.length > 0 || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('auth telemetry in logs (docs/design/rules/operations.md §2.9)', () => {
  it('a middleware rejection logs auth.middleware.request.denied at warn with status, reason and path', async () => {
    const path = '/api/v1/admin/wipe/stream';
    await call(direct, 'DELETE', path, { body: { stream_name: 'pub' } });
    const [event] = await waitForLogs(
      direct,
      (line) => eventName(line) === 'auth.middleware.request.denied' && line.attributes?.path === path,
    );
    expect(event?.severityText).toBe('WARN');
    expect(event?.attributes).toMatchObject({ outcome: 'error', status_code: 401, reason: 'unauthorized', username: '-', path });
  });

  it('a 503 is logged with reason service_unavailable', async () => {
    const path = '/api/v1/admin/notification/pub@7';
    await call(down, 'DELETE', path, { authorization: FAKE_USERS.admin.authorization });
    const [event] = await waitForLogs(
      down,
      (line) => eventName(line) === 'auth.middleware.request.denied' && line.attributes?.path === path,
    );
    expect(event?.attributes).toMatchObject({ outcome: 'error', status_code: 503, reason: 'service_unavailable', path });
  });

  it('the admin-role 403 names the (known) user', async () => {
    const path = '/api/v1/admin/notification/pub@5';
    await call(direct, 'DELETE', path, { authorization: FAKE_USERS.reader.authorization });
    const [event] = await waitForLogs(
      direct,
      (line) => eventName(line) === 'auth.middleware.request.denied' && line.attributes?.path === path,
    );
    expect(event?.attributes).toMatchObject({ outcome: 'error', status_code: 403, reason: 'forbidden', path });
    // "username (`-` when unknown)": here the user was verified.
    expect(event?.attributes?.username).toBe('reader-user');
  });

  it('a resolved user logs auth.middleware.user.resolved at debug', async () => {
    const path = '/api/v1/admin/notification/pub@6';
    await call(proxy, 'DELETE', path, { authorization: credentials.trusted_proxy.admin });
    const [event] = await waitForLogs(
      proxy,
      (line) => eventName(line) === 'auth.middleware.user.resolved' && line.attributes?.path === path,
    );
    expect(event?.severityText).toBe('DEBUG');
    expect(event?.attributes).toMatchObject({ username: 'admin-user', path });
  });

  it('anonymous requests and stream-level decisions log no middleware denial', async () => {
    const before = direct.logs.filter((line) => eventName(line) === 'auth.middleware.request.denied').length;
    await perform(direct, 'notify', 'open_req');
    await perform(direct, 'watch', 'read_roles_only', FAKE_USERS.producer.authorization);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(direct.logs.filter((line) => eventName(line) === 'auth.middleware.request.denied').length).toBe(before);
  });
});

describe('secrets never reach the logs (docs/design/rules/operations.md §1.4.3, §3.4.1)', () => {
  const servers = (): [string, RunningServer][] => [
    ['direct', direct],
    ['trusted_proxy', proxy],
    ['down', down],
    ['hang', hang],
  ];
  const output = (server: RunningServer): string => `${JSON.stringify(server.logs)}\n${server.stderr()}`;

  it('the servers logged something at trace level', () => {
    for (const [, server] of servers()) expect(server.logs.length).toBeGreaterThan(5);
  });

  it('no log line or stderr output contains the jwt secret, a Basic password or credential, or the URL password', () => {
    const secrets = [
      JWT_SECRET,
      DOWN_USERINFO_PASSWORD,
      ...Object.values(FAKE_USERS).flatMap((user) => [user.password, user.authorization.slice('Basic '.length)]),
    ];
    for (const [name, server] of servers()) {
      const text = output(server);
      for (const secret of secrets) expect(text.includes(secret), `${name} logged ${secret}`).toBe(false);
    }
  });

  it('no log line contains a bearer token a client sent', () => {
    for (const [name, server] of servers()) {
      const text = output(server);
      for (const token of tokensSent) expect(text.includes(token), `${name} logged a token`).toBe(false);
    }
  });
});
