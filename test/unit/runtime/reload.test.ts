import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { Authenticator } from '../../../src/auth/authenticator.js';
import type { EcpdsPlugin } from '../../../src/auth/ecpds/ecpds-plugin.js';
import type { AuthUser } from '../../../src/auth/auth-user.js';
import { MemoryBackend } from '../../../src/backend/memory/memory-backend.js';
import { systemClock } from '../../../src/time/clock.js';
import type { AppConfig } from '../../../src/config/model.js';
import { ConfigurationReloader } from '../../../src/runtime/reload.js';
import { createDisabledMetrics } from '../../../src/metrics/prometheus-metrics.js';
import { SchemaRegistry } from '../../../src/schema/schema-registry.js';
import { loadDoc, removeSandboxes, schema, type Doc } from '../config/config-fixture.js';

afterAll(removeSandboxes);

const AUTH_ON: Doc = {
  auth: { enabled: true, mode: 'trusted_proxy', jwt_secret: 'secret', admin_roles: { localrealm: ['admin'] } },
};
const ECPDS = { username: 'svc', password: 'pw', servers: ['https://ecpds.example.int'], match_key: 'class' };

/** A reloader over a real registry and memory backend whose "files" are the docs pushed into `next`. */
function setup(startup: Doc) {
  const config = loadDoc(startup);
  const registry = new SchemaRegistry(config.notification_schema, config.notification_schema !== undefined);
  const readPlugins = new Map<string, EcpdsPlugin>();
  const docs: Doc[] = [];
  const reloader = new ConfigurationReloader({
    startup: config,
    registry,
    backend: new MemoryBackend({ maxHistoryPerTopic: 1, maxTopics: 10, clock: systemClock }),
    readPlugins,
    metrics: createDisabledMetrics(),
    logger: pino({ level: 'silent' }),
    load: (): AppConfig => loadDoc(docs.shift() ?? startup),
  });
  return { config, registry, readPlugins, reloader, next: (doc: Doc) => docs.push(doc) };
}

const user = (roles: string[]): AuthUser => ({ username: 'u', realm: 'localrealm', roles, attributes: {} });

describe('ConfigurationReloader', () => {
  it('leaves the registry as it was when the new configuration fails validation', async () => {
    const { registry, reloader, next } = setup({ notification_schema: { mars: schema('mars') } });
    next({ notification_schema: { mars: schema('mars', { topic: { key_order: ['missing'] } }) } });
    const outcome = await reloader.reload('admin');
    expect(outcome).toEqual({
      ok: false,
      message:
        "configuration error: notification_schema.mars.topic.key_order[0]: 'missing' is not declared in notification_schema.mars.identifier",
    });
    expect(registry.eventTypes).toEqual(['mars']);
    expect(registry.get('mars')?.keyOrder).toEqual(['class', 'date']);
  });

  it('runs reloads one after the other, each compared with the configuration the previous one applied', async () => {
    const { registry, reloader, next } = setup({ notification_schema: { mars: schema('mars') } });
    next({ notification_schema: { mars: schema('mars'), diss: schema('diss') } });
    next({ notification_schema: { diss: schema('diss') } });
    const [first, second] = await Promise.all([reloader.reload('signal'), reloader.reload('admin')]);
    expect(first).toMatchObject({ ok: true, changes: { added: ['diss'], removed: [], changed: [] } });
    expect(second).toMatchObject({ ok: true, changes: { added: [], removed: ['mars'], changed: [] } });
    expect(registry.eventTypes).toEqual(['diss']);
  });

  it('replaces the admin roles of the attached authenticator', async () => {
    const { config, reloader, next } = setup(AUTH_ON);
    const authenticator = new Authenticator(config.auth, () => Date.now(), pino({ level: 'silent' }));
    reloader.attachAuthenticator(authenticator);
    expect(authenticator.isAdmin(user(['operator']))).toBe(false);
    next({ auth: { ...(AUTH_ON.auth as Doc), admin_roles: { localrealm: ['operator'] } } });
    expect(await reloader.reload('admin')).toMatchObject({ ok: true, restartRequired: [] });
    expect(authenticator.isAdmin(user(['operator']))).toBe(true);
    expect(authenticator.isAdmin(user(['admin']))).toBe(false);
  });

  it('builds the ECPDS checker at the first reload whose schemas opt into it, and keeps it afterwards', async () => {
    const plain = { ...AUTH_ON, ecpds: ECPDS, notification_schema: { mars: schema('mars') } };
    const { readPlugins, reloader, next } = setup(plain);
    expect(readPlugins.has('ecpds')).toBe(false);
    const opted = { ...plain, notification_schema: { mars: schema('mars', { auth: { required: true, plugins: ['ecpds'] } }) } };
    next(opted);
    expect(await reloader.reload('admin')).toMatchObject({ ok: true, changes: { changed: ['mars'] } });
    const checker = readPlugins.get('ecpds');
    expect(checker?.name).toBe('ecpds');
    next(opted);
    expect(await reloader.reload('admin')).toMatchObject({ ok: true });
    expect(readPlugins.get('ecpds')).toBe(checker);
    checker?.close();
  });
});
