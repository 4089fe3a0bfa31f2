import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { validateConfig, validateJetStreamSettings } from '../../../src/config/validate.js';
import { removeSandboxes, sandbox } from './config-fixture.js';

afterAll(removeSandboxes);

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Loads a repository file alone (no /etc, no $HOME), the way an operator would point at it. */
function loadRepoFile(relative: string, env: Record<string, string> = {}) {
  const box = sandbox();
  return loadConfig({
    env: { ...env, AVISOSERVER_CONFIG_FILE: path.join(REPO, relative) },
    cwd: box.cwd,
    home: box.home,
    systemFile: box.systemFile,
  });
}

describe('config/config.yaml (the shipped default, D16)', () => {
  it('is what the cascade finds from the repository root', () => {
    const box = sandbox();
    const config = loadConfig({ env: {}, cwd: REPO, home: box.home, systemFile: box.systemFile });
    expect(config.application).toMatchObject({ host: '127.0.0.1', port: 8000 });
  });

  it('loads and validates with only the expected warning', () => {
    const result = validateConfig(loadRepoFile('config/config.yaml'));
    expect(result.strictMode).toBe(true);
    expect(result.warnings.map((w) => w.event)).toEqual(['configuration.auth.admin_open']);
  });

  it('runs the in-memory backend with a useful history', () => {
    const config = loadRepoFile('config/config.yaml');
    expect(config.notification_backend.kind).toBe('in_memory');
    expect(config.notification_backend.in_memory.max_history_per_topic).toBe(100);
  });

  it('exercises every identifier handler', () => {
    const config = loadRepoFile('config/config.yaml');
    const types = new Set(Object.values(config.notification_schema ?? {}).flatMap((s) => Object.values(s.identifier).map((r) => r.type)));
    expect([...types].sort()).toEqual([
      'DateHandler',
      'EnumHandler',
      'ExpverHandler',
      'FloatHandler',
      'IntHandler',
      'PointCloudHandler',
      'PolygonHandler',
      'StringHandler',
      'TimeHandler',
    ]);
  });

  it('defines the documented schemas and bases', () => {
    const config = loadRepoFile('config/config.yaml');
    const bases = Object.fromEntries(Object.entries(config.notification_schema ?? {}).map(([name, s]) => [name, s.topic?.base]));
    expect(bases).toEqual({
      mars: 'mars',
      dissemination: 'diss',
      extreme_event: 'extreme_event',
      test_polygon: 'polygon',
      sensor_cloud: 'sensor_cloud',
    });
    expect(config.notification_schema?.mars?.topic?.key_order).toEqual(['class', 'expver', 'domain', 'date', 'time', 'stream', 'step']);
    expect(config.notification_schema?.mars?.identifier.expver).toMatchObject({ type: 'ExpverHandler', default: '0001' });
  });
});

describe('config/examples/jetstream.yaml', () => {
  it('loads and passes stage B and stage C1', () => {
    const result = validateConfig(loadRepoFile('config/examples/jetstream.yaml'));
    expect(result.config.notification_backend.kind).toBe('jetstream');
    expect(result.warnings).toEqual([]);
    expect(() => validateJetStreamSettings(result.config.notification_backend.jetstream)).not.toThrow();
  });

  it('takes its secrets from the environment when given', () => {
    const config = loadRepoFile('config/examples/jetstream.yaml', { AVISOSERVER_AUTH__JWT_SECRET: 'from-env', NATS_TOKEN: 'tok' });
    expect(config.auth.jwt_secret).toBe('from-env');
    expect(config.notification_backend.jetstream.token).toBe('tok');
  });
});
