import { describe, expect, it } from 'vitest';
import { serverConfig } from '../support/schemas.js';
import { runServerToExit } from '../support/server-process.js';

/** D17: a bad config exits non-zero with one clear line on stderr, before anything listens. */
describe('startup with a bad configuration', () => {
  it.each([
    ['a port out of range', { application: { host: '127.0.0.1', port: 70000 } }, /application\.port/],
    ['a missing backend kind', { notification_backend: {} }, /notification_backend\.kind/],
    ['an unknown backend kind', { notification_backend: { kind: 'redis' } }, /Unknown notification_backend kind: redis/],
    [
      'a key_order entry that is not a declared identifier',
      {
        notification_schema: {
          broken: {
            topic: { base: 'broken', key_order: ['missing'] },
            identifier: { present: { type: 'StringHandler', required: true } },
          },
        },
      },
      /broken.*missing|missing.*broken/,
    ],
    ['a zero heartbeat interval', { watch_endpoint: { sse_heartbeat_interval_sec: 0 } }, /sse_heartbeat_interval_sec/],
    [
      'streams that could take every connection (D44)',
      { application: { host: '127.0.0.1', port: 0, max_connections: 5000 } },
      /application\.max_streams: must be less than application\.max_connections \(10000 >= 5000\), so that streams leave connections for \/health, \/ready and notify/,
    ],
    [
      'an additional origin with a path',
      { application: { host: '127.0.0.1', port: 0, additional_origins: ['https://aviso.example.org/console'] } },
      /application\.additional_origins\[0\]: "https:\/\/aviso\.example\.org\/console" is not an origin: write scheme:\/\/host\[:port\] with http or https and no path$/,
    ],
  ])('exits 1 for %s with one line naming the field', async (_name, override, pattern) => {
    const result = await runServerToExit({ config: serverConfig(override) });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(result.stdout).not.toMatch(/startup\.server\.started/);
  });

  it('exits 1 when AVISOSERVER_CONFIG_FILE names a missing file', async () => {
    const result = await runServerToExit({
      config: serverConfig(),
      env: { AVISOSERVER_CONFIG_FILE: '/nonexistent/aviso.yaml' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('/nonexistent/aviso.yaml');
  });

  it('applies AVISOSERVER_ environment overrides on top of the file', async () => {
    const result = await runServerToExit({
      config: serverConfig(),
      env: { AVISOSERVER_APPLICATION__PORT: 'eighty' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/application\.port/);
  });
});
