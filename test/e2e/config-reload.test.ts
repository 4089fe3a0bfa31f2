import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KINDS, BackendUnderTest } from '../support/backends.js';
import { LOCAL_REALM, signToken, trustedProxyAuth } from '../support/fake-auth-o-tron.js';
import { postJson, request, type JsonResponse } from '../support/http.js';
import { findFreePort } from '../support/ports.js';
import { TEST_SCHEMAS, serverConfig } from '../support/schemas.js';
import { runServerToExit, type LogLine, type RunningServer } from '../support/server-process.js';
import type { SseClient } from '../support/sse-client.js';
import { trackProcesses } from '../support/tracked-processes.js';

/**
 * Live configuration reload (docs/design/rules/browser.md §5) against the real process: the config file is
 * rewritten, then `SIGHUP` or `POST /api/v1/admin/reload` makes the server re-read it.
 */

const { start, open } = trackProcesses();

const { mars, dissemination, extreme_event } = TEST_SCHEMAS;
/** A schema that is not configured at startup. */
const FLOOD = {
  topic: { base: 'flood', key_order: ['region'] },
  identifier: { region: { type: 'StringHandler', required: true } },
};
/** `mars` with `class` allowed up to 4 characters instead of 2. */
const WIDER_MARS = { ...mars, identifier: { ...mars.identifier, class: { ...mars.identifier.class, max_length: 4 } } };

const INITIAL = { mars, dissemination, extreme_event };
const EDITED = { mars: WIDER_MARS, dissemination, flood: FLOOD };

const MARS_IDENTIFIER = { class: 'od', expver: '1', domain: 'g', date: '20250706', time: '1200', stream: 'enfo', step: '1' };

function notify(server: RunningServer, eventType: string, identifier: Record<string, unknown>, note: string): Promise<JsonResponse> {
  return postJson(`${server.url}/api/v1/notification`, { event_type: eventType, identifier, payload: { note } });
}

function notifyDissemination(server: RunningServer, note: string): Promise<JsonResponse> {
  return notify(server, 'dissemination', { destination: 'ecmwf', class: 'od' }, note);
}

/** The `note` of the next notification frame, skipping heartbeats; fails on any other frame. */
async function nextNote(client: SseClient): Promise<string> {
  const event = await client.nextSignificant();
  expect(event?.event, JSON.stringify(event)).toBe('live-notification');
  return (event?.json.data as { payload: { note: string } }).payload.note;
}

/** A watch whose opening frame has arrived. */
async function watch(server: RunningServer, eventType: string, identifier: Record<string, unknown>): Promise<SseClient> {
  const client = await open(server, '/api/v1/watch', { event_type: eventType, identifier });
  expect(client.status, client.errorBody).toBe(200);
  await client.nextSignificant();
  return client;
}

async function eventTypes(server: RunningServer): Promise<unknown> {
  return (await request(`${server.url}/api/v1/schema`)).json.event_types;
}

async function reloadOverHttp(server: RunningServer, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return request(`${server.url}/api/v1/admin/reload`, { method: 'POST', headers });
}

/**
 * Sends SIGHUP and waits for that reload's outcome line: the line of an admin-route reload just
 * before may still be on its way to stdout, so only a line with `source: signal` counts.
 */
async function reloadBySignal(server: RunningServer, outcome: 'succeeded' | 'failed'): Promise<LogLine> {
  let from = server.logs.length;
  server.signal('SIGHUP');
  for (;;) {
    const line = await server.waitForLog(`configuration.reload.${outcome}`, { from });
    if (line.attributes?.source === 'signal') return line;
    from = server.logs.indexOf(line) + 1;
  }
}

describe.each(BACKEND_KINDS)('reload on %s', (kind) => {
  const backend = new BackendUnderTest(kind);
  beforeAll(() => backend.start());
  afterAll(() => backend.stop());
  const config = (schemas: Record<string, unknown>) => backend.config({ notification_schema: schemas });

  it.each(['SIGHUP', 'the admin route'] as const)(
    'adds, changes and removes event types through %s while open watches keep receiving',
    async (how) => {
      const server = await start(config(INITIAL));
      const onDissemination = await watch(server, 'dissemination', { destination: '*', class: 'od' });
      const onMars = await watch(server, 'mars', { class: 'od' });
      expect((await notifyDissemination(server, 'before')).status).toBe(200);
      expect(await nextNote(onDissemination)).toBe('before');
      expect((await notify(server, 'mars', { ...MARS_IDENTIFIER, class: 'odxx' }, 'too long')).status).toBe(400);

      server.rewriteConfig(config(EDITED));
      const from = server.logs.length;
      if (how === 'SIGHUP') {
        server.signal('SIGHUP');
      } else {
        const response = await reloadOverHttp(server);
        expect(response.status, response.text).toBe(200);
        expect(Object.keys(response.json)).toEqual([
          'success',
          'message',
          'event_types_added',
          'event_types_removed',
          'event_types_changed',
          'restart_required',
          'request_id',
        ]);
        expect(response.json).toMatchObject({
          success: true,
          message: 'Configuration reloaded',
          event_types_added: ['flood'],
          event_types_removed: ['extreme_event'],
          event_types_changed: ['mars'],
          restart_required: [],
          request_id: response.headers.get('x-request-id'),
        });
      }
      const succeeded = await server.waitForLog('configuration.reload.succeeded', { from });
      expect(succeeded.attributes).toMatchObject({
        event_types_added: ['flood'],
        event_types_removed: ['extreme_event'],
        event_types_changed: ['mars'],
      });
      expect(server.logs.slice(from).some((line) => line.attributes?.['event.name'] === 'configuration.reload.ignored')).toBe(false);

      // New requests see the new schemas.
      expect(await eventTypes(server)).toEqual(['dissemination', 'flood', 'mars']);
      expect((await notify(server, 'flood', { region: 'north' }, 'new type')).status).toBe(200);
      expect((await notify(server, 'mars', { ...MARS_IDENTIFIER, class: 'odxx' }, 'now allowed')).status).toBe(200);
      const removed = await notify(server, 'extreme_event', { region: 'north', run_time: '1200', severity: '4' }, 'gone');
      expect(removed.status).toBe(400);
      expect(removed.json.code).toBe('UNKNOWN_EVENT_TYPE');
      expect(removed.json.configured_event_types).toEqual(['dissemination', 'flood', 'mars']);
      const removedWatch = await open(server, '/api/v1/watch', { event_type: 'extreme_event', identifier: {} });
      expect(removedWatch.status).toBe(400);
      expect(JSON.parse(removedWatch.errorBody ?? '{}').code).toBe('UNKNOWN_EVENT_TYPE');
      const onFlood = await watch(server, 'flood', { region: 'north' });
      expect((await notify(server, 'flood', { region: 'north' }, 'watched')).status).toBe(200);
      expect(await nextNote(onFlood)).toBe('watched');

      // The streams opened before the reload were not closed and keep their filters.
      expect((await notifyDissemination(server, 'after')).status).toBe(200);
      expect(await nextNote(onDissemination)).toBe('after');
      // 'now allowed' (class odxx) and 'other class' do not match the watch's `class: od`.
      expect((await notify(server, 'mars', { ...MARS_IDENTIFIER, class: 'rd' }, 'other class')).status).toBe(200);
      expect((await notify(server, 'mars', MARS_IDENTIFIER, 'same class')).status).toBe(200);
      expect(await nextNote(onMars)).toBe('same class');
    },
  );

  it('refuses an invalid edit with the line startup prints, and keeps serving the old configuration', async () => {
    const server = await start(config(INITIAL));
    const onDissemination = await watch(server, 'dissemination', { destination: '*', class: 'od' });
    const broken = config({ ...INITIAL, flood: { ...FLOOD, topic: { base: 'flood', key_order: ['missing'] } } });
    const startup = await runServerToExit({ config: broken });
    expect(startup.code).toBe(1);
    const startupLine = startup.stderr.trim();
    expect(startupLine).toMatch(/^aviso-server: configuration error: .*missing/);
    const expected = startupLine.slice('aviso-server: '.length);

    server.rewriteConfig(broken);
    const from = server.logs.length;
    const response = await reloadOverHttp(server);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      code: 'INVALID_CONFIGURATION',
      error: 'invalid_configuration',
      message: expected,
      request_id: response.headers.get('x-request-id'),
    });
    const failed = await server.waitForLog('configuration.reload.failed', { from });
    expect(failed.body).toBe(expected);
    expect(failed.severityText).toBe('ERROR');
    expect(failed.attributes).toMatchObject({ source: 'admin', request_id: response.headers.get('x-request-id') });
    expect((await reloadBySignal(server, 'failed')).body).toBe(expected);

    expect(await eventTypes(server)).toEqual(['dissemination', 'extreme_event', 'mars']);
    expect((await notify(server, 'flood', { region: 'north' }, 'unknown')).json.code).toBe('UNKNOWN_EVENT_TYPE');
    expect((await notifyDissemination(server, 'still served')).status).toBe(200);
    expect(await nextNote(onDissemination)).toBe('still served');
    expect(server.logs.some((line) => line.attributes?.['event.name'] === 'configuration.reload.succeeded')).toBe(false);
  });

  it('refuses a file that no longer parses with the loader line, as startup would', async () => {
    const server = await start(config(INITIAL));
    server.rewriteConfig('application: [unclosed\n');
    const response = await reloadOverHttp(server);
    expect(response.status).toBe(400);
    expect(response.json.code).toBe('INVALID_CONFIGURATION');
    expect(response.json.message).toMatch(/^configuration error: /);
    expect(response.json.message).toContain(server.configFile);
    expect(await eventTypes(server)).toEqual(['dissemination', 'extreme_event', 'mars']);
  });

  it('reports changed restart-only settings as configuration.reload.ignored and keeps the running ones', async () => {
    const server = await start(config(INITIAL));
    const edited = config(EDITED) as { application: Record<string, unknown>; watch_endpoint?: Record<string, unknown> };
    edited.application = { ...edited.application, host: 'localhost' };
    edited.watch_endpoint = { sse_heartbeat_interval_sec: 7 };
    server.rewriteConfig(edited);
    const from = server.logs.length;
    const response = await reloadOverHttp(server);
    expect(response.status, response.text).toBe(200);
    expect(response.json.restart_required).toEqual(['application.host', 'watch_endpoint.sse_heartbeat_interval_sec']);
    const ignored = await server.waitForLog('configuration.reload.ignored', { from });
    expect(ignored.severityText).toBe('WARN');
    expect(ignored.attributes?.settings).toEqual(['application.host', 'watch_endpoint.sse_heartbeat_interval_sec']);
    expect(ignored.body).toBe('Settings that take effect at the next restart: application.host, watch_endpoint.sse_heartbeat_interval_sec');
    // The schemas were applied all the same, on the address the server listened on.
    expect(await eventTypes(server)).toEqual(['dissemination', 'flood', 'mars']);
  });
});

describe('reload and the pages built from the schemas', () => {
  it('lists the new event types on the homepage and in the schema API', async () => {
    const staticFiles = resolve(import.meta.dirname, '../../static');
    const base = { notification_schema: INITIAL, application: { host: '127.0.0.1', port: 0, static_files_path: staticFiles } };
    const server = await start(serverConfig(base));
    const home = async () => (await request(`${server.url}/`)).text;
    expect(await home()).toContain('api/v1/schema/extreme_event');
    expect(await home()).not.toContain('api/v1/schema/flood');
    server.rewriteConfig(serverConfig({ ...base, notification_schema: EDITED }));
    expect((await reloadOverHttp(server)).status).toBe(200);
    expect(await home()).toContain('api/v1/schema/flood');
    expect(await home()).not.toContain('api/v1/schema/extreme_event');
    expect((await request(`${server.url}/api/v1/schema/flood`)).status).toBe(200);
    const gone = await request(`${server.url}/api/v1/schema/extreme_event`);
    expect(gone.status).toBe(404);
  });
});

describe('reload on JetStream', () => {
  const backend = new BackendUnderTest('jetstream');
  beforeAll(() => backend.start());
  afterAll(() => backend.stop());

  async function streamNames(): Promise<string[]> {
    const nc = await connect({ servers: backend.natsUrl });
    try {
      const names: string[] = [];
      for await (const name of (await jetstreamManager(nc)).streams.names()) names.push(name);
      return names.sort();
    } finally {
      await nc.close();
    }
  }

  it("creates a new schema's stream at the reload, before anything is published to it", async () => {
    const server = await start(backend.config({ notification_schema: INITIAL }));
    expect(await streamNames()).not.toContain('FLOOD');
    server.rewriteConfig(backend.config({ notification_schema: EDITED }));
    const response = await reloadOverHttp(server);
    expect(response.status, response.text).toBe(200);
    expect(await streamNames()).toContain('FLOOD');
    const created = server.logs.find(
      (line) => line.attributes?.['event.name'] === 'backend.jetstream.stream.created' && line.attributes.stream === 'FLOOD',
    );
    expect(created).toBeDefined();
  });
});

describe('aviso_config_reloads_total', () => {
  it('counts successful and refused reloads', async () => {
    const metricsPort = await findFreePort();
    const base = serverConfig({ notification_schema: INITIAL, metrics: { enabled: true, host: '127.0.0.1', port: metricsPort } });
    const server = await start(base);
    const count = async (result: string): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const match = new RegExp(`^aviso_config_reloads_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text);
      expect(match, text).not.toBeNull();
      return Number(match?.[1]);
    };
    expect([await count('success'), await count('failure')]).toEqual([0, 0]);
    expect((await reloadOverHttp(server)).status).toBe(200);
    await reloadBySignal(server, 'succeeded');
    server.rewriteConfig({ ...base, watch_endpoint: { sse_heartbeat_interval_sec: 0 } });
    expect((await reloadOverHttp(server)).status).toBe(400);
    expect([await count('success'), await count('failure')]).toEqual([2, 1]);
  });
});

describe('POST /api/v1/admin/reload with authentication', () => {
  const auth = (adminRoles: readonly string[]) => trustedProxyAuth({ admin_roles: { [LOCAL_REALM]: [...adminRoles] } });
  const bearer = async (roles: readonly string[]) =>
    `Bearer ${await signToken({ sub: 'someone', username: 'someone', realm: LOCAL_REALM, roles: [...roles], attributes: {} })}`;

  it('needs the admin role like every admin route, and applies new admin roles to the next request', async () => {
    const server = await start(serverConfig({ notification_schema: INITIAL, auth: auth(['admin']) }));
    const anonymous = await reloadOverHttp(server);
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.message).toBe('Authorization header is required');
    const operator = await bearer(['operator']);
    const forbidden = await reloadOverHttp(server, { authorization: operator });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.message).toBe('User does not have required administrative role');

    server.rewriteConfig(serverConfig({ notification_schema: INITIAL, auth: auth(['admin', 'operator']) }));
    const byAdmin = await reloadOverHttp(server, { authorization: await bearer(['admin']) });
    expect(byAdmin.status, byAdmin.text).toBe(200);
    expect(byAdmin.json.restart_required).toEqual([]);
    const nowAllowed = await reloadOverHttp(server, { authorization: operator });
    expect(nowAllowed.status, nowAllowed.text).toBe(200);
  });

  it("applies a schema's new write roles to the next notify", async () => {
    const secured = (roles: readonly string[]) => ({
      ...FLOOD,
      auth: { required: true, write_roles: { [LOCAL_REALM]: [...roles] } },
    });
    const server = await start(serverConfig({ notification_schema: { flood: secured(['producer']) }, auth: auth(['admin']) }));
    const writer = await bearer(['writer']);
    const publish = () =>
      postJson(
        `${server.url}/api/v1/notification`,
        { event_type: 'flood', identifier: { region: 'north' }, payload: null },
        { authorization: writer },
      );
    const refused = await publish();
    expect(refused.status).toBe(403);
    expect(refused.json.message).toBe('User does not have required write role for this stream');
    server.rewriteConfig(serverConfig({ notification_schema: { flood: secured(['producer', 'writer']) }, auth: auth(['admin']) }));
    const reloaded = await reloadOverHttp(server, { authorization: await bearer(['admin']) });
    expect(reloaded.json.event_types_changed).toEqual(['flood']);
    const accepted = await publish();
    expect(accepted.status, accepted.text).toBe(200);
  });
});
