import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_USERS, FakeAuthOTron, JWT_SECRET, LOCAL_REALM, signToken } from '../support/fake-auth-o-tron.js';
import { UUID_V4 } from '../support/http.js';
import { findFreePort } from '../support/ports.js';
import { EVERY_CLIENT_ERROR_LINE, MARS_EXAMPLE, serverConfig } from '../support/schemas.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { SseClient } from '../support/sse-client.js';

/**
 * Hostile input against the real server process (issue 9; api.md, docs/security.md): every JSON
 * endpoint and every header the server reads is fed random JSON, mutated valid bodies, extreme
 * numbers, deep nesting, huge strings, invalid UTF-8, odd content types, oversized bodies and
 * slow-loris clients. Every answer must be a documented 4xx in the API's error shape (stable
 * `code`, `request_id` equal to `X-Request-ID`) or a 2xx, never a 5xx and never a connection
 * closed without an answer; the process must survive and still serve notify and watch.
 *
 * Two in-memory servers: `open` (auth disabled, strict schemas, small limits) and `secured`
 * (auth in direct mode against the fake auth-o-tron, metrics on). Each property runs a bounded
 * number of times against the one instance. A failure prints fast-check's seed and path;
 * re-run it with `FC_SEED=<seed> FC_PATH=<path>`.
 */

const MAX_BODY_BYTES = 65536;
const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;
const RUNS = Number(process.env.FC_RUNS ?? 150);

function fcOptions(numRuns = RUNS): fc.Parameters<unknown> {
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  return { numRuns, ...(seed === undefined ? {} : { seed }), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) };
}

const limits = {
  max_body_bytes: MAX_BODY_BYTES,
  headers_timeout_ms: HEADERS_TIMEOUT_MS,
  request_timeout_ms: REQUEST_TIMEOUT_MS,
  max_header_bytes: 16384,
};

/** Every `code` the API documents (api.md, docs/security.md). */
const DOCUMENTED_CODES = new Set([
  'INVALID_JSON',
  'UNKNOWN_FIELD',
  'INVALID_REQUEST_SHAPE',
  'UNKNOWN_EVENT_TYPE',
  'INVALID_NOTIFICATION_REQUEST',
  'INVALID_WATCH_REQUEST',
  'INVALID_REPLAY_REQUEST',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'PAYLOAD_TOO_LARGE',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'BAD_REQUEST',
  'REQUEST_TIMEOUT',
  'HEADERS_TOO_LARGE',
  'URI_TOO_LONG',
  'CROSS_ORIGIN_REQUEST_REFUSED',
]);

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/**
 * One request over node:http. An SSE answer is cut after its head (the stream would last for
 * hours). A connection closed before any answer rejects: that is a failure for every caller.
 */
function send(
  baseUrl: string,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string | number> = {},
): Promise<Reply> {
  // Node's client sends a DELETE/HEAD/GET body without any length unless told: framing garbage.
  const framed = body === undefined ? headers : { 'content-length': Buffer.byteLength(body), ...headers };
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { method, headers: framed, agent, setHost: true }, (res) => {
      if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '' });
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A server that answered early (413) may reset the socket we are still writing to; the
      // response event has then already fired and this error is moot.
      reject(new Error(`no answer to ${method} ${path.slice(0, 80)}: ${error.code ?? error.message}`));
    });
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

const post = (baseUrl: string, path: string, body: string | Buffer, headers: Record<string, string | number> = {}) =>
  send(baseUrl, 'POST', path, body, { 'content-type': 'application/json', ...headers });

type Shape = 'api' | 'admin' | 'schema';

/** The answer is a 2xx, or a documented 4xx in its route's error shape; `context` names the input. */
function expectDocumented(reply: Reply, context: string, shape: Shape = 'api'): void {
  const where = `${context.slice(0, 400)} → ${reply.status} ${reply.text.slice(0, 300)}`;
  expect(reply.status, where).toBeGreaterThanOrEqual(200);
  expect(reply.status, where).toBeLessThan(500);
  const requestId = reply.headers['x-request-id'];
  expect(requestId, where).toMatch(UUID_V4);
  if (reply.status < 400) return;
  const body = JSON.parse(reply.text) as Record<string, unknown>;
  expect(body.request_id, where).toBe(requestId);
  if (shape === 'admin' && 'success' in body) {
    expect(body.success, where).toBe(false);
    expect(typeof body.message, where).toBe('string');
  } else if (shape === 'schema' && body.status === 'error') {
    expect(typeof body.message, where).toBe('string');
  } else {
    expect(DOCUMENTED_CODES.has(String(body.code)), where).toBe(true);
    expect(typeof body.message, where).toBe('string');
  }
}

// ---------------------------------------------------------------------------------------------
// Generators

const STREAM_ENDPOINTS = ['/api/v1/notification', '/api/v1/watch', '/api/v1/replay'] as const;
const endpointArb = fc.constantFrom(...STREAM_ENDPOINTS);

const VALID_BODIES: readonly Record<string, unknown>[] = [
  MARS_EXAMPLE,
  { event_type: 'mars', identifier: { class: 'od', date: '20250706' }, from_id: '1' },
  { event_type: 'dissemination', identifier: { destination: 'FOO', class: 'od' }, payload: { a: [1, 2] } },
  { event_type: 'extreme_event', identifier: { region: 'north', run_time: '12:00', severity: 3, anomaly: 1.5 } },
  { event_type: 'test_polygon', identifier: { date: '20250706', time: '1200', polygon: '(0,0,0,1,1,1,0,0)' }, payload: 'p' },
  {
    event_type: 'sensor_cloud',
    identifier: {
      date: '20250706',
      point_cloud: [
        [1, 2],
        [3, 4],
      ],
    },
  },
  {
    event_type: 'extreme_event',
    identifier: { region: 'north', run_time: '12:00', severity: { gte: 2 }, point: '0.5,0.5' },
    from_date: '2025-01-01T00:00:00Z',
  },
];

/** Any JSON value, including the unusual: deep-ish, unicode keys, big and negative numbers. */
const jsonValueArb = fc.jsonValue({ maxDepth: 4 });

type Mutation =
  | { kind: 'drop'; where: 'top' | 'identifier'; index: number }
  | { kind: 'replace'; where: 'top' | 'identifier'; index: number; value: unknown }
  | { kind: 'add'; where: 'top' | 'identifier'; key: string; value: unknown }
  | { kind: 'retype'; where: 'top' | 'identifier'; index: number; to: 'string' | 'number' | 'array' | 'object' | 'null' | 'bool' };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), where: fc.constantFrom('top' as const, 'identifier' as const), index: fc.nat() }),
  fc.record({
    kind: fc.constant('replace' as const),
    where: fc.constantFrom('top' as const, 'identifier' as const),
    index: fc.nat(),
    value: jsonValueArb,
  }),
  fc.record({
    kind: fc.constant('add' as const),
    where: fc.constantFrom('top' as const, 'identifier' as const),
    key: fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'point', 'polygon', 'from_id', 'toString', '')),
    value: jsonValueArb,
  }),
  fc.record({
    kind: fc.constant('retype' as const),
    where: fc.constantFrom('top' as const, 'identifier' as const),
    index: fc.nat(),
    to: fc.constantFrom('string' as const, 'number' as const, 'array' as const, 'object' as const, 'null' as const, 'bool' as const),
  }),
);

function retyped(value: unknown, to: string): unknown {
  switch (to) {
    case 'string':
      return JSON.stringify(value) ?? '';
    case 'number':
      return typeof value === 'string' ? Number.parseFloat(value) || 0 : 42;
    case 'array':
      return [value];
    case 'object':
      return { value };
    case 'null':
      return null;
    default:
      return true;
  }
}

/** Applies mutations to a deep copy; JSON text keeps `__proto__` as an ordinary key. */
function mutate(base: Record<string, unknown>, mutations: readonly Mutation[]): string {
  const body = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  for (const mutation of mutations) {
    const target =
      mutation.where === 'identifier' && typeof body.identifier === 'object' && body.identifier !== null && !Array.isArray(body.identifier)
        ? (body.identifier as Record<string, unknown>)
        : body;
    const keys = Object.keys(target);
    const key = 'index' in mutation && keys.length > 0 ? (keys[mutation.index % keys.length] as string) : undefined;
    if (mutation.kind === 'drop' && key !== undefined) delete target[key];
    else if (mutation.kind === 'replace' && key !== undefined) target[key] = mutation.value;
    else if (mutation.kind === 'retype' && key !== undefined) target[key] = retyped(target[key], mutation.to);
    else if (mutation.kind === 'add')
      Object.defineProperty(target, mutation.key, { value: mutation.value, enumerable: true, configurable: true, writable: true });
  }
  return JSON.stringify(body);
}

/** Number literals at and beyond every edge a parser or handler has. */
const HOSTILE_NUMBERS = [
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '-0.0',
  '0e0',
  '18446744073709551616',
  '18446744073709551615',
  '9007199254740993',
  '-9223372036854775809',
  '1.7976931348623157e308',
  '4.9e-324',
  '123456789012345678901234567890',
  '9'.repeat(5000),
  '0.' + '0'.repeat(3000) + '1',
  '1E+2',
  '1e',
  '01',
  '+1',
  '.5',
  '1.',
  '0x10',
  'NaN',
  'Infinity',
  '-Infinity',
  '1_000',
];
const HOSTILE_NUMBER_STRINGS = [
  '"NaN"',
  '"Infinity"',
  '"-0"',
  '"1e400"',
  '"0x1F"',
  '"٣"',
  '"１２"',
  '" 7 "',
  '""',
  '"+5"',
  '"5."',
  '"1e2"',
];

const numberLiteralArb = fc.oneof(
  fc.constantFrom(...HOSTILE_NUMBERS, ...HOSTILE_NUMBER_STRINGS),
  fc.double().map((value) => (Number.isFinite(value) ? JSON.stringify(value) : '0')),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
);

/** A body template with one slot for a raw literal. */
const NUMBER_TEMPLATES = [
  (n: string) => `{"event_type":"mars","identifier":{"class":"od","step":${n}}}`,
  (n: string) => `{"event_type":"extreme_event","identifier":{"region":"north","run_time":"12:00","severity":${n},"anomaly":${n}}}`,
  (n: string) => `{"event_type":"extreme_event","identifier":{"region":"north","severity":{"gte":${n},"lt":${n}}}}`,
  (n: string) => `{"event_type":"mars","identifier":{"class":"od","step":{"in":[${n},1]}},"from_id":${n}}`,
  (n: string) => `{"event_type":"mars","identifier":{"class":"od"},"from_date":${n}}`,
  (n: string) => `{"event_type":"mars","identifier":{"class":"od"},"payload":${n}}`,
  (n: string) => `{"event_type":"extreme_event","identifier":{"region":"north","severity":1,"point":"${n},${n}"}}`,
  (n: string) => `${n}`,
];

const nested = (depth: number, open: string, close: string, inner = '1'): string => open.repeat(depth) + inner + close.repeat(depth);

const CONTENT_TYPES = [
  undefined,
  '',
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'APPLICATION/JSON;CHARSET="UTF-8"',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/vnd.api+json',
  'application/json, text/plain',
  ';;;',
  'application/',
  '*/*',
  'x'.repeat(4000),
];

// ---------------------------------------------------------------------------------------------

describe('hostile input against the real server (issue 9)', { timeout: 120_000 }, () => {
  let open: RunningServer;
  let secured: RunningServer;
  /** Non-strict: unknown event types are generic, with caller-chosen identifier keys. */
  let generic: RunningServer;
  const fake = new FakeAuthOTron();
  let metricsPort = 0;
  let adminBearer = '';
  let readerBearer = '';

  beforeAll(async () => {
    await fake.start();
    metricsPort = await findFreePort();
    adminBearer = `Bearer ${await signToken({ sub: 'admin-user', username: 'admin-user', realm: LOCAL_REALM, roles: ['admin'] })}`;
    readerBearer = `Bearer ${await signToken({ sub: 'reader-user', username: 'reader-user', realm: LOCAL_REALM, roles: ['reader'] })}`;
    [open, secured, generic] = await Promise.all([
      startServer({ config: serverConfig({ application: { host: '127.0.0.1', port: 0, ...limits } }) }),
      startServer({
        config: serverConfig({
          application: { host: '127.0.0.1', port: 0, ...limits },
          // Every line written, so the secrets check reads every refusal's line.
          logging: { level: 'trace', ...EVERY_CLIENT_ERROR_LINE },
          metrics: { enabled: true, host: '127.0.0.1', port: metricsPort },
          auth: {
            enabled: true,
            mode: 'direct',
            auth_o_tron_url: fake.url,
            jwt_secret: JWT_SECRET,
            admin_roles: { [LOCAL_REALM]: ['admin'] },
            timeout_ms: 5000,
          },
        }),
      }),
      startServer({ config: serverConfig({ application: { host: '127.0.0.1', port: 0, ...limits }, notification_schema_strict: false }) }),
    ]);
  });

  afterAll(async () => {
    agent.destroy();
    await Promise.all([open?.stop(), secured?.stop(), generic?.stop()]);
    await fake.stop();
  });

  describe('JSON endpoints: notify, watch, replay', () => {
    it('random JSON documents are answered 2xx or a documented 4xx', async () => {
      await fc.assert(
        fc.asyncProperty(
          endpointArb,
          fc.oneof(
            fc.json({ maxDepth: 5 }),
            jsonValueArb.map((v) => JSON.stringify(v)),
          ),
          async (path, text) => {
            expectDocumented(await post(open.url, path, text), `${path} ${text}`);
          },
        ),
        fcOptions(),
      );
    });

    it('random JSON objects with the request keys (and any values) are answered 2xx or a documented 4xx', async () => {
      const bodyArb = fc.record(
        {
          event_type: fc.oneof(
            fc.constantFrom('mars', 'dissemination', 'extreme_event', 'test_polygon', 'sensor_cloud', 'MARS'),
            jsonValueArb,
          ),
          identifier: fc.oneof(
            fc.dictionary(
              fc.constantFrom('class', 'step', 'date', 'time', 'polygon', 'point', 'region', 'severity', 'point_cloud', 'destination'),
              jsonValueArb,
            ),
            jsonValueArb,
          ),
          from_id: jsonValueArb,
          from_date: jsonValueArb,
          payload: jsonValueArb,
        },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(endpointArb, bodyArb, async (path, body) => {
          const text = JSON.stringify(body);
          expectDocumented(await post(open.url, path, text), `${path} ${text}`);
        }),
        fcOptions(),
      );
    });

    it('generic event types (non-strict) with any names, keys and values: 2xx or a documented 4xx', async () => {
      const nameArb = fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.constantFrom(
          '__proto__',
          'constructor',
          'toString',
          'hasOwnProperty',
          'valueOf',
          'polygon',
          'point',
          '',
          '*',
          '>',
          '.',
          '%',
          'a.b',
          'mars',
          'MARS',
        ),
      );
      const identifierArb = fc.dictionary(nameArb, fc.oneof(fc.string({ maxLength: 12 }), jsonValueArb), { maxKeys: 4 });
      await fc.assert(
        fc.asyncProperty(
          endpointArb,
          nameArb,
          identifierArb,
          fc.option(fc.constantFrom('1', '2025-01-01T00:00:00Z'), { nil: undefined }),
          async (path, eventType, identifier, cursor) => {
            const body: Record<string, unknown> = { event_type: eventType, identifier };
            if (cursor !== undefined) body[cursor.includes('-') ? 'from_date' : 'from_id'] = cursor;
            const text = JSON.stringify(body);
            expectDocumented(await post(generic.url, path, text), `${path} ${text}`);
            // The same with a literal __proto__ key, which JSON.stringify of a dictionary cannot produce.
            const withProto = text
              .replace('"identifier":{', '"identifier":{"__proto__":"x",')
              .replace('"identifier":{"__proto__":"x",}', '"identifier":{"__proto__":"x"}');
            expectDocumented(await post(generic.url, path, withProto), `${path} ${withProto}`);
          },
        ),
        fcOptions(),
      );
    });

    it('mutations of valid bodies (dropped, replaced, retyped and unknown fields) are answered 2xx or a documented 4xx', async () => {
      await fc.assert(
        fc.asyncProperty(
          endpointArb,
          fc.constantFrom(...VALID_BODIES),
          fc.array(mutationArb, { minLength: 1, maxLength: 3 }),
          async (path, base, mutations) => {
            const text = mutate(base, mutations);
            expectDocumented(await post(open.url, path, text), `${path} ${text}`);
          },
        ),
        fcOptions(),
      );
    });

    it('the unmutated valid bodies are accepted (the generators reach the success path)', async () => {
      const body = (index: number): Record<string, unknown> => VALID_BODIES[index] as Record<string, unknown>;
      const streamBodies = [0, 1, 2, 3, 4, 6].map(body);
      const accepted: [string, Record<string, unknown>[]][] = [
        ['/api/v1/notification', [0, 2, 4, 5].map(body)],
        ['/api/v1/watch', streamBodies],
        ['/api/v1/replay', streamBodies.map((b) => ('from_date' in b || 'from_id' in b ? b : { ...b, from_id: '1' }))],
      ];
      for (const [path, bodies] of accepted) {
        for (const valid of bodies) {
          const reply = await post(open.url, path, JSON.stringify(valid));
          expect(reply.status, `${path} ${JSON.stringify(valid)} ${reply.text}`).toBe(200);
        }
      }
    });

    it('extreme number literals anywhere are answered 2xx or a documented 4xx', async () => {
      await fc.assert(
        fc.asyncProperty(endpointArb, fc.constantFrom(...NUMBER_TEMPLATES), numberLiteralArb, async (path, template, literal) => {
          const text = template(literal);
          expectDocumented(await post(open.url, path, text), `${path} ${text}`);
        }),
        fcOptions(),
      );
    });

    it('deep nesting (up to 20,000 levels) in every position is a 4xx, not a crash', async () => {
      const bodies = (depth: number): string[] => [
        nested(depth, '[', ']'),
        nested(depth, '{"a":', '}'),
        `{"event_type":"mars","identifier":{"class":"od"},"payload":${nested(depth, '[', ']')}}`,
        `{"event_type":"mars","identifier":{"class":${nested(depth, '[', ']', '"od"')}}}`,
        `{"event_type":"mars","identifier":${nested(depth, '{"class":', '}', '"od"')}}`,
        `{"event_type":"extreme_event","identifier":{"region":"north","severity":${nested(depth, '{"gte":', '}')}}}`,
        nested(depth, '[', '', ''), // unterminated
        `{"event_type":"mars","identifier":{"class":"od"},"payload":"${'['.repeat(depth)}"}`, // brackets inside a string are text
      ];
      await fc.assert(
        fc.asyncProperty(endpointArb, fc.integer({ min: 120, max: 20_000 }), fc.nat(7), async (path, depth, which) => {
          const text = bodies(depth)[which] as string;
          expectDocumented(await post(open.url, path, text), `${path} depth ${depth} body #${which}`);
        }),
        fcOptions(60),
      );
      for (const depth of [127, 128, 129, 10_000]) {
        for (const text of bodies(depth)) {
          for (const path of STREAM_ENDPOINTS)
            expectDocumented(await post(open.url, path, text), `${path} depth ${depth} ${text.slice(0, 60)}`);
        }
      }
      const deepest = await post(open.url, '/api/v1/notification', nested(10_000, '[', ']'));
      expect(JSON.parse(deepest.text)).toMatchObject({ code: 'INVALID_JSON' });
    });

    it('huge and unusual strings in every field are answered 2xx or a documented 4xx', async () => {
      const stringArb = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.string({ unit: 'grapheme', maxLength: 50 }),
        fc.constantFrom('', ' ', '\u0000', '\uFEFF', '\uD800', '\uDFFF', '*', '>', '.', '%', '%2E', '..', 'a.b', '\r\n', '\u2028'),
        fc.integer({ min: 1000, max: 60_000 }).map((n) => 'x'.repeat(n)),
        fc.integer({ min: 1000, max: 20_000 }).map((n) => '\u{1F600}'.repeat(n)),
      );
      const places = [
        (s: string) => ({ event_type: s, identifier: {} }),
        (s: string) => ({ event_type: 'mars', identifier: { class: s } }),
        (s: string) => ({ event_type: 'dissemination', identifier: { destination: s, class: 'od' } }),
        (s: string) => ({ event_type: 'mars', identifier: { class: 'od', date: s, time: s, step: s, domain: s, expver: s } }),
        (s: string) => ({ event_type: 'test_polygon', identifier: { polygon: s }, payload: s }),
        (s: string) => ({ event_type: 'extreme_event', identifier: { region: 'north', severity: 1, point: s } }),
        (s: string) => ({ event_type: 'sensor_cloud', identifier: { date: '20250101', point_cloud: s } }),
        (s: string) => ({ event_type: 'mars', identifier: { class: 'od' }, from_id: s, from_date: s }),
        (s: string) => ({ event_type: 'mars', identifier: { class: 'od' }, from_date: s }),
        (s: string) => ({ event_type: 'generic_unknown', identifier: { [s]: s } }),
        (s: string) => ({ event_type: 'mars', identifier: { [s]: 'x' } }),
      ];
      await fc.assert(
        fc.asyncProperty(endpointArb, fc.nat(places.length - 1), stringArb, async (path, which, value) => {
          const text = JSON.stringify((places[which] as (s: string) => unknown)(value));
          expectDocumented(await post(open.url, path, text), `${path} place #${which} ${text}`);
        }),
        fcOptions(),
      );
    });

    it('invalid UTF-8 anywhere in a body is 400 INVALID_JSON', async () => {
      const invalidBytes = fc.oneof(
        fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xfe, 0xff]),
        fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 8 }).filter((bytes) => !isValidUtf8(Buffer.from(bytes))),
      );
      await fc.assert(
        fc.asyncProperty(endpointArb, invalidBytes, fc.nat(3), async (path, bytes, where) => {
          const prefixes = [
            '{"event_type":"',
            '{"event_type":"mars","identifier":{"class":"',
            '{"event_type":"mars","identifier":{"class":"od"},"payload":"',
            '{"',
          ];
          const suffixes = ['","identifier":{}}', '"}}', '"}', '":1}'];
          const body = Buffer.concat([Buffer.from(prefixes[where] as string), Buffer.from(bytes), Buffer.from(suffixes[where] as string)]);
          const reply = await post(open.url, path, body);
          expectDocumented(reply, `${path} bytes ${Buffer.from(bytes).toString('hex')} at #${where}`);
          expect(reply.status).toBe(400);
          expect(JSON.parse(reply.text)).toMatchObject({ code: 'INVALID_JSON' });
        }),
        fcOptions(100),
      );
    });

    it('odd, missing and random content types and charsets do not change the outcome', async () => {
      const typeArb = fc.oneof(
        fc.constantFrom(...CONTENT_TYPES),
        fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 100 }),
      );
      await fc.assert(
        fc.asyncProperty(
          endpointArb,
          typeArb,
          fc.constantFrom(VALID_BODIES[0] as Record<string, unknown>, VALID_BODIES[2] as Record<string, unknown>),
          async (path, contentType, body) => {
            const text = JSON.stringify(path === '/api/v1/replay' ? { ...body, from_id: '1' } : body);
            const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
            const reply = await send(open.url, 'POST', path, text, headers);
            expectDocumented(reply, `${path} content-type ${JSON.stringify(contentType)}`);
            expect(reply.status, `${path} content-type ${JSON.stringify(contentType)}: ${reply.text}`).toBe(200);
          },
        ),
        fcOptions(100),
      );
    });

    it('bodies over max_body_bytes are 413 PAYLOAD_TOO_LARGE, declared or chunked', async () => {
      for (const path of STREAM_ENDPOINTS) {
        for (const size of [MAX_BODY_BYTES + 1, 4 * MAX_BODY_BYTES, 8 * 1024 * 1024]) {
          const body = `{"event_type":"mars","identifier":{"class":"od"},"payload":"${'x'.repeat(size)}"}`;
          // The server answers before reading the rest; a client that reads while it writes (as
          // curl does) sees the answer, one that only writes may see a reset.
          const raw = await uploadExchange(
            open.port,
            `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
            Buffer.from(body),
          );
          const reply = parseRaw(raw);
          expectDocumented(reply, `${path} ${size} bytes`);
          expect(reply.status).toBe(413);
          expect(JSON.parse(reply.text)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
        }
        const chunked = await chunkedPost(open.url, path, MAX_BODY_BYTES * 2);
        expectDocumented(chunked, `${path} chunked`);
        expect(chunked.status).toBe(413);
      }
      const frame = (pad: string) => `{"event_type":"dissemination","identifier":{"destination":"X","class":"od"},"payload":"${pad}"}`;
      const atLimit = frame('x'.repeat(MAX_BODY_BYTES - frame('').length));
      expect(Buffer.byteLength(atLimit)).toBe(MAX_BODY_BYTES);
      const accepted = await post(open.url, '/api/v1/notification', atLimit);
      expect(accepted.status, accepted.text).toBe(200);
    });
  });

  describe('schema and admin endpoints, paths and methods', () => {
    const pathSegmentArb = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 40 }).map(encodeURIComponent),
      fc.constantFrom(
        '%',
        '%zz',
        '%00',
        '..',
        '%2e%2e',
        '%2F',
        '%C0%AF',
        'mars',
        'MARS',
        'mars@1',
        'mars@0',
        'diss@18446744073709551616',
        '@',
        'a@b@c',
        '%20mars@1%20',
        'x'.repeat(500),
      ),
      fc
        .tuple(fc.string({ maxLength: 20 }), fc.oneof(fc.nat().map(String), fc.string({ maxLength: 10 })))
        .map(([s, n]) => encodeURIComponent(`${s}@${n}`)),
    );

    it('GET /api/v1/schema/{event_type} with any segment: 200 or a documented 404', async () => {
      await fc.assert(
        fc.asyncProperty(pathSegmentArb, async (segment) => {
          expectDocumented(await send(open.url, 'GET', `/api/v1/schema/${segment}`), `schema ${segment}`, 'schema');
        }),
        fcOptions(),
      );
    });

    it('DELETE /api/v1/admin/notification/{id} with any id: 2xx or a documented 4xx', async () => {
      await fc.assert(
        fc.asyncProperty(pathSegmentArb, async (segment) => {
          expectDocumented(await send(open.url, 'DELETE', `/api/v1/admin/notification/${segment}`), `delete ${segment}`, 'admin');
        }),
        fcOptions(),
      );
    });

    it('DELETE /api/v1/admin/wipe/stream with any body and content type: 2xx or a documented 4xx', async () => {
      const bodyArb = fc.oneof(
        fc.json({ maxDepth: 3 }),
        fc.record({ stream_name: jsonValueArb }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
        fc.string({ maxLength: 30 }).map((name) => JSON.stringify({ stream_name: name, extra: 1 })),
        fc.constantFrom('', '{', nested(10_000, '[', ']'), '{"stream_name":"mars"}', '{"stream_name":"\uD800"}'),
        fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
      );
      const typeArb = fc.constantFrom(...CONTENT_TYPES);
      await fc.assert(
        fc.asyncProperty(bodyArb, typeArb, async (body, contentType) => {
          const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
          expectDocumented(
            await send(open.url, 'DELETE', '/api/v1/admin/wipe/stream', body, headers),
            `wipe ${contentType} ${body}`,
            'admin',
          );
        }),
        fcOptions(),
      );
    });

    it('any method on any route, with or without a body: 2xx or a documented 4xx', async () => {
      const routes = [
        '/',
        '/health',
        '/api/v1/schema',
        '/api/v1/schema/mars',
        ...STREAM_ENDPOINTS,
        '/api/v1/admin/wipe/all',
        '/api/v1/admin/wipe/stream',
        '/api/v1/admin/notification/mars@1',
        '/api-docs/openapi.json',
        '/api/v1',
        '/api/v1/',
        '/api/v1/nothing',
        '/static/../../etc/passwd',
        '/static/%2e%2e/%2e%2e/etc/passwd',
        '//api/v1/notification',
        '/api/v1/notification?x=%zz',
        '/api/v1//watch',
      ];
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH'),
          fc.constantFrom(...routes),
          fc.option(fc.json({ maxDepth: 2 }), { nil: undefined }),
          async (method, route, body) => {
            const reply = await send(open.url, method, route, body, body === undefined ? {} : { 'content-type': 'application/json' });
            // HEAD answers carry no body; check the status and the id only.
            if (method === 'HEAD') {
              expect(reply.status, `${method} ${route}`).toBeLessThan(500);
              expect(reply.headers['x-request-id']).toMatch(UUID_V4);
              return;
            }
            expectDocumented(
              reply,
              `${method} ${route} ${body}`,
              route.startsWith('/api/v1/admin') ? 'admin' : route.startsWith('/api/v1/schema') ? 'schema' : 'api',
            );
            expect(reply.text).not.toContain('root:');
          },
        ),
        fcOptions(),
      );
    });
  });

  describe('headers', () => {
    it('an incoming X-Request-ID of any form is ignored: every answer has a fresh v4 id', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.uuid(),
            fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 200 }),
          ),
          async (sent) => {
            const reply = await send(open.url, 'POST', '/api/v1/notification', '{', {
              'x-request-id': sent,
              'content-type': 'application/json',
            });
            expectDocumented(reply, `x-request-id ${sent}`);
            expect(reply.headers['x-request-id']).not.toBe(sent);
          },
        ),
        fcOptions(50),
      );
    });

    it('Authorization of any form on every authenticated route: 2xx or a documented 4xx, never a 5xx', async () => {
      const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 200 });
      const authorizationArb = fc.oneof(
        printable,
        printable.map((s) => `Bearer ${s}`),
        printable.map((s) => `bAsIc ${s}`),
        fc.string({ maxLength: 60 }).map((s) => `Basic ${Buffer.from(s, 'utf8').toString('base64')}`),
        fc
          .tuple(fc.base64String(), fc.base64String(), fc.base64String())
          .map(([a, b, c]) => `Bearer ${a}.${b}.${c}`.replace(/[+/=]/g, '_')),
        fc.constantFrom(
          '',
          ' ',
          'Bearer',
          'Bearer ',
          'Basic',
          'Basic ',
          'Bearer a b',
          'Basic ====',
          'Negotiate abc',
          `Bearer ${'a'.repeat(8000)}`,
          'Bearer eyJhbGciOiJub25lIn0.eyJ1c2VybmFtZSI6ImEifQ.',
          FAKE_USERS.reader.authorization,
          FAKE_USERS.admin.authorization,
        ),
        fc.constantFrom(1, 2).map((n) => (n === 1 ? adminBearer : readerBearer)),
      );
      const targets: [string, string, string | undefined, Shape][] = [
        ['POST', '/api/v1/notification', JSON.stringify(MARS_EXAMPLE), 'api'],
        ['POST', '/api/v1/watch', JSON.stringify({ event_type: 'mars', identifier: { class: 'od' } }), 'api'],
        ['POST', '/api/v1/replay', JSON.stringify({ event_type: 'mars', identifier: { class: 'od' }, from_id: '1' }), 'api'],
        ['GET', '/api/v1/schema', undefined, 'schema'],
        ['DELETE', '/api/v1/admin/notification/mars@999999', undefined, 'admin'],
        ['DELETE', '/api/v1/admin/wipe/stream', JSON.stringify({ stream_name: 'nothing_here' }), 'admin'],
        ['GET', '/api/v1/admin/unknown', undefined, 'admin'],
        ['GET', '/api/v1/nothing', undefined, 'api'],
      ];
      await fc.assert(
        fc.asyncProperty(fc.nat(targets.length - 1), authorizationArb, async (which, authorization) => {
          const [method, path, body, shape] = targets[which] as (typeof targets)[number];
          const reply = await send(secured.url, method, path, body, { authorization, 'content-type': 'application/json' });
          expectDocumented(reply, `${method} ${path} authorization ${JSON.stringify(authorization.slice(0, 100))}`, shape);
        }),
        fcOptions(200),
      );
    });

    it('header bytes outside ASCII and malformed header lines are answered, never dropped', async () => {
      const heads = [
        `POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\r\nContent-Length: 2\r\n\r\n{}`,
        `POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \xc3\x28\r\nContent-Length: 2\r\n\r\n{}`,
        `DELETE /api/v1/admin/wipe/all HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xe9\r\n\r\n`,
        `POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nContent-Type: application/json; charset=\xff\r\nContent-Length: 2\r\n\r\n{}`,
        `POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n`,
        `POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n`,
        `POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
        `POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n{}`,
        `POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        `GET /api/v1/schema/\xff HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        `GET /health HTTP/9.9\r\nHost: x\r\n\r\n`,
        `\x00\x01\x02\r\n\r\n`,
      ];
      for (const server of [open, secured]) {
        for (const head of heads) {
          const raw = await rawExchange(server.port, Buffer.from(head, 'latin1'));
          const shape: Shape = head.includes('/admin') ? 'admin' : head.includes('/schema') ? 'schema' : 'api';
          expectDocumented(parseRaw(raw), `${JSON.stringify(head.slice(0, 120))} → ${raw.slice(0, 200)}`, shape);
        }
      }
    });
  });

  describe('slow clients', () => {
    it('slow-loris heads and bodies are cut with 408 REQUEST_TIMEOUT while other clients are served', async () => {
      const head = 'POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Slow: ';
      const loris = Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? dripExchange(open.port, [...head.split(''), 'a'], 25)
          : dripExchange(open.port, ['POST /api/v1/notification HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{', ' '], 25),
      );
      // While they drip, ordinary requests are answered.
      for (let i = 0; i < 5; i++) {
        const reply = await post(open.url, '/api/v1/notification', JSON.stringify(MARS_EXAMPLE));
        expect(reply.status).toBe(200);
      }
      for (const raw of await Promise.all(loris)) {
        expect(raw, raw.slice(0, 200)).toMatch(/^HTTP\/1\.1 408 /);
        const body = JSON.parse(raw.split('\r\n\r\n')[1] ?? '') as Record<string, unknown>;
        expect(body).toMatchObject({ code: 'REQUEST_TIMEOUT' });
        expect(body.request_id).toMatch(UUID_V4);
      }
    });

    it('a connection that sends nothing is closed with 408 after the head timeout', async () => {
      const raw = await rawExchange(open.port, Buffer.alloc(0));
      expect(raw).toMatch(/^HTTP\/1\.1 408 /);
    });

    it('a watch stream outlives the request timeout (the timeout bounds receiving the request only)', async () => {
      const client = await SseClient.open(`${open.url}/api/v1/watch`, {
        event_type: 'dissemination',
        identifier: { destination: 'LONG', class: 'od' },
      });
      expect(client.status).toBe(200);
      expect((await client.nextSignificant())?.json.type).toBe('connection_established');
      // Wait until the request-timeout sweep has certainly run over this connection…
      const deadline = Date.now() + REQUEST_TIMEOUT_MS + 1500;
      while (Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
      // …then the stream must still deliver.
      expect(
        (
          await post(
            open.url,
            '/api/v1/notification',
            JSON.stringify({ event_type: 'dissemination', identifier: { destination: 'LONG', class: 'od' } }),
          )
        ).status,
      ).toBe(200);
      const event = await client.nextSignificant();
      expect(event?.json.data, JSON.stringify(event)).toMatchObject({ identifier: { destination: 'LONG' } });
      client.close();
    });
  });

  describe('admin endpoints with auth enabled (docs/design/rules/operations.md §2.2)', () => {
    const adminRoutes: [string, string, string | undefined][] = [
      ['DELETE', '/api/v1/admin/notification/mars@1', undefined],
      ['DELETE', '/api/v1/admin/wipe/stream', JSON.stringify({ stream_name: 'mars' })],
      ['DELETE', '/api/v1/admin/wipe/all', undefined],
      ['GET', '/api/v1/admin/unknown', undefined],
      ['DELETE', '/api/v1/administrator', undefined],
      ['DELETE', '/api/v1/%61dmin/wipe/all', undefined],
      ['DELETE', '/api/v1/admin%2Fwipe%2Fall', undefined],
    ];

    it.each(adminRoutes)(
      '%s %s: 401 without credentials, 403 for a reader (Basic and Bearer), not refused for an admin',
      async (method, path, body) => {
        const headers = { 'content-type': 'application/json' };
        const anonymous = await send(secured.url, method, path, body, headers);
        expectDocumented(anonymous, `${path} anonymous`, 'admin');
        expect(anonymous.status).toBe(401);
        for (const authorization of [FAKE_USERS.reader.authorization, readerBearer]) {
          const reader = await send(secured.url, method, path, body, { ...headers, authorization });
          expectDocumented(reader, `${path} reader`, 'admin');
          expect(reader.status).toBe(403);
        }
        for (const authorization of [FAKE_USERS.admin.authorization, adminBearer]) {
          const admin = await send(secured.url, method, path, body, { ...headers, authorization });
          expectDocumented(admin, `${path} admin`, 'admin');
          expect([401, 403]).not.toContain(admin.status);
        }
      },
    );
  });

  describe('after the run', () => {
    it('both processes are alive, logged no unhandled error, and still serve notify and watch', async () => {
      for (const server of [open, secured, generic]) {
        expect(server.process.exitCode).toBeNull();
        const unhandled = server.logs.filter((line) => {
          const event = String((line.attributes?.['event.name'] as string | undefined) ?? '');
          return event === 'http.request.unhandled_error' || line.severityText === 'FATAL';
        });
        expect(unhandled).toEqual([]);
        const headers: Record<string, string> = server === secured ? { authorization: adminBearer } : {};
        const identifier = { destination: 'AFTER', class: 'od' };
        const client = await SseClient.open(`${server.url}/api/v1/watch`, { event_type: 'dissemination', identifier }, { headers });
        expect(client.status, client.errorBody).toBe(200);
        expect((await client.nextSignificant())?.json.type).toBe('connection_established');
        const notify = await post(
          server.url,
          '/api/v1/notification',
          JSON.stringify({ event_type: 'dissemination', identifier, payload: 'after' }),
          headers,
        );
        expect(notify.status, notify.text).toBe(200);
        const event = await client.nextSignificant();
        expect(event?.event).toBe('live-notification');
        expect(event?.json.data, JSON.stringify(event)).toMatchObject({ payload: 'after' });
        client.close();
      }
    });

    it('no secret of the secured server appears in its logs, its error bodies or its metrics', async () => {
      const secrets = [
        JWT_SECRET,
        adminBearer.slice('Bearer '.length),
        readerBearer.slice('Bearer '.length),
        ...Object.values(FAKE_USERS).flatMap((user) => [user.password, user.authorization.slice('Basic '.length)]),
      ];
      const logs = JSON.stringify(secured.logs) + secured.stderr();
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toContain('aviso_auth_requests_total');
      const bodies: string[] = [];
      for (const authorization of [
        FAKE_USERS.reader.authorization,
        readerBearer,
        `Bearer ${JWT_SECRET}`,
        `Basic ${Buffer.from(`x:${JWT_SECRET}`).toString('base64')}`,
      ]) {
        bodies.push((await send(secured.url, 'DELETE', '/api/v1/admin/wipe/all', undefined, { authorization })).text);
        bodies.push((await post(secured.url, '/api/v1/notification', '{', { authorization })).text);
      }
      for (const secret of secrets) {
        expect(logs.includes(secret), `logs contain ${secret}`).toBe(false);
        expect(metrics.includes(secret), `metrics contain ${secret}`).toBe(false);
        for (const body of bodies) expect(body.includes(secret), `a body contains ${secret}`).toBe(false);
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Raw-socket helpers

/** Status, lower-cased headers and body of a raw HTTP/1.1 answer. */
function parseRaw(raw: string): Reply {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const headers: IncomingHttpHeaders = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers, text: split < 0 ? '' : raw.slice(split + 4) };
}

function isValidUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Writes `bytes` and reads until the server closes the connection. */
function rawExchange(port: number, bytes: Buffer): Promise<string> {
  return dripExchange(port, [bytes.toString('latin1')], 0, true);
}

/**
 * Writes the chunks `gapMs` apart (the last one repeating until the server closes) and resolves
 * with everything read. A raw request that is complete may leave the connection open after the
 * answer (keep-alive): then the client closes once a full answer has arrived.
 */
function dripExchange(port: number, chunks: readonly string[], gapMs: number, once = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let index = 0;
    let timer: NodeJS.Timeout | undefined;
    const writeNext = (): void => {
      if (socket.destroyed || !socket.writable) return;
      socket.write(Buffer.from(chunks[Math.min(index, chunks.length - 1)] as string, 'latin1'));
      index++;
      if (!once && gapMs > 0) timer = setTimeout(writeNext, gapMs);
    };
    socket.on('connect', writeNext);
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      const [head, body] = [received.split('\r\n\r\n')[0] ?? '', received.split('\r\n\r\n').slice(1).join('\r\n\r\n')];
      const length = /content-length: (\d+)/i.exec(head)?.[1];
      if (once && length !== undefined && Buffer.byteLength(body, 'latin1') >= Number(length)) socket.destroy();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

/** Writes the head, then the body in 64 KiB pieces until the server answers; resolves with the answer. */
function uploadExchange(port: number, head: string, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let offset = 0;
    const pump = (): void => {
      while (received === '' && offset < body.length && !socket.destroyed) {
        const piece = body.subarray(offset, offset + 65536);
        offset += piece.length;
        if (!socket.write(piece)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
    socket.on('data', (data: Buffer) => {
      received += data.toString('latin1');
      const split = received.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(received)?.[1];
      if (split >= 0 && length !== undefined && Buffer.byteLength(received.slice(split + 4), 'latin1') >= Number(length)) socket.destroy();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => resolve(received));
  });
}

/** A chunked POST of `size` bytes with no Content-Length, so the limit is hit while streaming. */
function chunkedPost(baseUrl: string, path: string, size: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${baseUrl}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!answered) reject(new Error(`no answer to the chunked POST: ${error.code ?? error.message}`));
    });
    req.write('{"event_type":"mars","identifier":{"class":"od"},"payload":"');
    let sent = 0;
    const pump = (): void => {
      while (sent < size && !req.destroyed) {
        sent += 16384;
        if (!req.write('x'.repeat(16384))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!req.destroyed) req.end('"}');
    };
    pump();
  });
}
