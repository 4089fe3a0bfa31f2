import { afterAll, describe, expect, it } from 'vitest';
import { restartOnlySettings, schemaChanges, withLiveSettings } from '../../../src/config/reload-changes.js';
import { loadDoc, removeSandboxes, schema } from './config-fixture.js';

afterAll(removeSandboxes);

describe('schemaChanges (docs/design/rules/browser.md §5: what a reload changed)', () => {
  it('names the event types added, removed and changed, each list sorted', () => {
    const before = loadDoc({ notification_schema: { mars: schema('mars'), diss: schema('diss'), zeta: schema('zeta') } });
    const after = loadDoc({
      notification_schema: {
        zeta: schema('zeta'),
        mars: schema('mars', { topic: { key_order: ['class'] }, identifier: { date: undefined } }),
        beta: schema('beta'),
        alpha: schema('alpha'),
      },
    });
    expect(schemaChanges(before.notification_schema, after.notification_schema)).toEqual({
      added: ['alpha', 'beta'],
      removed: ['diss'],
      changed: ['mars'],
    });
  });

  it('sees no change when only the order keys were written in differs', () => {
    const identifier = { date: { type: 'DateHandler', required: false }, class: { required: true, type: 'StringHandler' } };
    const before = loadDoc({ notification_schema: { mars: { topic: { base: 'mars', key_order: ['class', 'date'] }, identifier } } });
    const reordered = Object.fromEntries(Object.entries(identifier).reverse());
    const after = loadDoc({
      notification_schema: { mars: { identifier: reordered, topic: { key_order: ['class', 'date'], base: 'mars' } } },
    });
    expect(schemaChanges(before.notification_schema, after.notification_schema)).toEqual({ added: [], removed: [], changed: [] });
  });

  it('counts a reordered key_order as a change (it changes the topics)', () => {
    const before = loadDoc({ notification_schema: { mars: schema('mars') } });
    const after = loadDoc({ notification_schema: { mars: schema('mars', { topic: { key_order: ['date', 'class'] } }) } });
    expect(schemaChanges(before.notification_schema, after.notification_schema).changed).toEqual(['mars']);
  });

  it('treats an absent notification_schema as no event types', () => {
    const before = loadDoc();
    const after = loadDoc({ notification_schema: { mars: schema('mars') } });
    expect(schemaChanges(before.notification_schema, after.notification_schema)).toEqual({ added: ['mars'], removed: [], changed: [] });
    expect(schemaChanges(after.notification_schema, before.notification_schema)).toEqual({ added: [], removed: ['mars'], changed: [] });
  });
});

describe('restartOnlySettings (docs/design/rules/browser.md §5: settings that cannot change live)', () => {
  it('is empty for the same configuration', () => {
    expect(restartOnlySettings(loadDoc(), loadDoc())).toEqual([]);
  });

  it('names listening address, port, backend kind and NATS URL by their dotted names', () => {
    const running = loadDoc({
      notification_backend: { kind: 'jetstream', jetstream: { nats_url: 'nats://127.0.0.1:4222' } },
    });
    const next = loadDoc({
      application: { host: '0.0.0.0', port: 9000 },
      notification_backend: { kind: 'in_memory', jetstream: { nats_url: 'nats://10.0.0.1:4222' } },
    });
    expect(restartOnlySettings(running, next)).toEqual([
      'application.host',
      'application.port',
      'notification_backend.jetstream.nats_url',
      'notification_backend.kind',
    ]);
  });

  it('does not name the settings a reload applies: schemas, strict mode and admin roles', () => {
    const running = loadDoc({ auth: { admin_roles: { ecmwf: ['admin'] } } });
    const next = loadDoc({
      notification_schema: { mars: schema('mars') },
      notification_schema_strict: false,
      auth: { admin_roles: { ecmwf: ['admin', 'operator'], other: ['root'] } },
    });
    expect(restartOnlySettings(running, next)).toEqual([]);
  });

  it('names the fixed auth settings next to the live role lists, and whole sections present on one side', () => {
    const running = loadDoc({ auth: { jwt_secret: 'one' } });
    const next = loadDoc({
      auth: { jwt_secret: 'two', admin_roles: { ecmwf: ['admin'] } },
      watch_endpoint: { sse_heartbeat_interval_sec: 5 },
      ecpds: { username: 'u', password: 'p', servers: ['https://ecpds.example.int'], match_key: 'destination' },
    });
    expect(restartOnlySettings(running, next)).toEqual(['auth.jwt_secret', 'ecpds', 'watch_endpoint.sse_heartbeat_interval_sec']);
  });

  it('sees a setting changed through the AVISOSERVER_ environment like one changed in the file', () => {
    expect(restartOnlySettings(loadDoc(), loadDoc({}, { AVISOSERVER_METRICS__ENABLED: 'true' }))).toEqual(['metrics.enabled']);
  });

  it('applies new certificate file names live, but TLS turned on or off waits for a restart', () => {
    const tls = (name: string) => ({ application: { tls: { cert_file: `/etc/aviso/${name}.pem`, key_file: `/etc/aviso/${name}.key` } } });
    expect(restartOnlySettings(loadDoc(tls('old')), loadDoc(tls('new')))).toEqual([]);
    expect(restartOnlySettings(loadDoc(), loadDoc(tls('new')))).toEqual(['application.tls']);
    expect(restartOnlySettings(loadDoc(tls('old')), loadDoc())).toEqual(['application.tls']);
  });
});

describe('withLiveSettings (a worker started beside reloaded ones, D36)', () => {
  it('takes the schemas, strict mode and admin roles of the reload and keeps every restart-only setting', () => {
    const running = loadDoc({
      notification_schema: { mars: schema('mars') },
      auth: { admin_roles: { ecmwf: ['admin'] } },
      watch_endpoint: { sse_heartbeat_interval_sec: 30 },
    });
    const reloaded = loadDoc({
      application: { port: 9001 },
      notification_schema: { diss: schema('diss') },
      notification_schema_strict: false,
      auth: { admin_roles: { ecmwf: ['operator'] } },
      watch_endpoint: { sse_heartbeat_interval_sec: 5 },
    });
    const merged = withLiveSettings(running, reloaded);
    expect(merged.notification_schema).toEqual(reloaded.notification_schema);
    expect(merged.notification_schema_strict).toBe(false);
    expect(merged.auth.admin_roles).toEqual({ ecmwf: ['operator'] });
    expect(restartOnlySettings(running, merged)).toEqual([]);
    expect(schemaChanges(merged.notification_schema, reloaded.notification_schema)).toEqual({ added: [], removed: [], changed: [] });
  });

  it('drops a live setting the reload no longer has', () => {
    const running = loadDoc({ notification_schema: { mars: schema('mars') }, notification_schema_strict: true });
    const merged = withLiveSettings(running, loadDoc());
    expect(merged.notification_schema).toBeUndefined();
    expect(merged.notification_schema_strict).toBeUndefined();
  });

  it('takes new certificate file names but leaves TLS off when the reload turned it on', () => {
    const tls = (name: string) => ({ application: { tls: { cert_file: `/etc/aviso/${name}.pem`, key_file: `/etc/aviso/${name}.key` } } });
    expect(withLiveSettings(loadDoc(tls('old')), loadDoc(tls('new'))).application.tls).toEqual(loadDoc(tls('new')).application.tls);
    expect(withLiveSettings(loadDoc(), loadDoc(tls('new'))).application.tls).toBeUndefined();
  });

  it('leaves the running configuration as it was', () => {
    const running = loadDoc({ notification_schema: { mars: schema('mars') } });
    const before = structuredClone(running);
    withLiveSettings(running, loadDoc({ notification_schema: { diss: schema('diss') } }));
    expect(running).toEqual(before);
  });
});
