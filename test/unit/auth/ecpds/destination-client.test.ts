import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DestinationClient, type DestinationClientSettings } from '../../../../src/auth/ecpds/destination-client.js';
import { FakeEcpds, MIXED_DESTINATIONS, SilentListener } from '../../../support/fake-ecpds.js';
import { findFreePort } from '../../../support/ports.js';
import { clientSettings, LogCapture, silentLogger } from './ecpds-fixtures.js';

const primary = new FakeEcpds();
const secondary = new FakeEcpds();
const clients: DestinationClient[] = [];

function client(servers: readonly string[], overrides: Partial<DestinationClientSettings> = {}): DestinationClient {
  const created = new DestinationClient(clientSettings(servers, overrides));
  clients.push(created);
  return created;
}

beforeAll(async () => {
  await Promise.all([primary.start(), secondary.start()]);
});
afterEach(() => {
  for (const created of clients.splice(0)) created.close();
  primary.reset();
  secondary.reset();
});
afterAll(async () => {
  await Promise.all([primary.stop(), secondary.stop()]);
});

describe('per-server outcome', () => {
  it('is success for a 2xx list with success "yes"', async () => {
    expect(await client([primary.url]).fetch('ecpds-user-1', silentLogger)).toEqual({
      ok: true,
      outcome: 'success',
      destinations: new Set(['CIP', 'FOO']),
    });
  });

  it('is success with an empty set for an empty list', async () => {
    expect(await client([primary.url]).fetch('nobody', silentLogger)).toEqual({
      ok: true,
      outcome: 'success',
      destinations: new Set(),
    });
  });

  it('is http_401 when ECPDS rejects the service account', async () => {
    const fetched = await client([primary.url], { password: 'wrong' }).fetch('ecpds-user-1', silentLogger);
    expect(fetched).toEqual({ ok: false, outcome: 'http_401' });
  });

  it.each([
    [403, 'http_403'],
    [400, 'http_4xx'],
    [429, 'http_4xx'],
    [500, 'http_5xx'],
    [502, 'http_5xx'],
    [503, 'http_5xx'],
    [302, 'http_5xx'],
  ] as const)('labels status %i as %s', async (status, outcome) => {
    primary.behaviour = { kind: 'status', status };
    expect(await client([primary.url]).fetch('ecpds-user-1', silentLogger)).toEqual({ ok: false, outcome });
  });

  it('is http_4xx for a wrong base URL (404)', async () => {
    const fetched = await client([`${primary.url}/not-ecpds`]).fetch('ecpds-user-1', silentLogger);
    expect(fetched).toEqual({ ok: false, outcome: 'http_4xx' });
  });

  it.each([
    ['not JSON', '<html>oops</html>'],
    ['a JSON array', '[]'],
    ['success "no"', '{"destinationList":[],"success":"no"}'],
    ['success "YES"', '{"destinationList":[],"success":"YES"}'],
    ['success "true"', '{"destinationList":[],"success":"true"}'],
    ['success true (boolean)', '{"destinationList":[],"success":true}'],
    ['success missing', '{"destinationList":[]}'],
    ['destinationList missing', '{"success":"yes"}'],
    ['destinationList not an array', '{"destinationList":{"name":"CIP"},"success":"yes"}'],
  ])('is invalid_response for %s', async (_case, body) => {
    primary.behaviour = { kind: 'body', body };
    expect(await client([primary.url]).fetch('ecpds-user-1', silentLogger)).toEqual({
      ok: false,
      outcome: 'invalid_response',
    });
  });

  it('is unreachable when nothing listens', async () => {
    const port = await findFreePort();
    expect(await client([`http://127.0.0.1:${port}`]).fetch('ecpds-user-1', silentLogger)).toEqual({
      ok: false,
      outcome: 'unreachable',
    });
  });
});

describe('timeouts', () => {
  it('ends a slow answer at the request timeout as unreachable', async () => {
    primary.delayMs = 2_000;
    const started = performance.now();
    const fetched = await client([primary.url], { requestTimeoutMs: 300 }).fetch('ecpds-user-1', silentLogger);
    const elapsed = performance.now() - started;

    expect(fetched).toEqual({ ok: false, outcome: 'unreachable' });
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1_500);
  });

  it('ends a connection that never completes its TLS handshake at the connect timeout', async () => {
    const silent = await new SilentListener().start();
    try {
      const logs = new LogCapture();
      const started = performance.now();
      const fetched = await client([silent.httpsUrl], { connectTimeoutMs: 300, requestTimeoutMs: 10_000 }).fetch(
        'ecpds-user-1',
        logs.logger,
      );
      const elapsed = performance.now() - started;

      expect(fetched).toEqual({ ok: false, outcome: 'unreachable' });
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(3_000);
      expect(logs.events('auth.ecpds.fetch.failed')[0]?.error).toBe('no connection within 300 ms');
    } finally {
      await silent.stop();
    }
  });

  it('does not apply the connect timeout once connected', async () => {
    primary.delayMs = 400;
    const fetched = await client([primary.url], { connectTimeoutMs: 100, requestTimeoutMs: 5_000 }).fetch('ecpds-user-1', silentLogger);
    expect(fetched.ok).toBe(true);
  });

  it('does not apply the connect timeout to a pooled keep-alive connection', async () => {
    primary.delayMs = 300;
    const reused = client([primary.url], { connectTimeoutMs: 100, requestTimeoutMs: 5_000 });
    expect((await reused.fetch('ecpds-user-1', silentLogger)).ok).toBe(true);
    expect((await reused.fetch('ecpds-user-2', silentLogger)).ok).toBe(true);
    expect(primary.connections).toBe(1);
  });
});

describe('record filtering', () => {
  it('keeps only active records with a string target field', async () => {
    primary.behaviour = { kind: 'list', destinationList: MIXED_DESTINATIONS };
    const logs = new LogCapture();
    const fetched = await client([primary.url]).fetch('ecpds-user-1', logs.logger);

    expect(fetched).toEqual({ ok: true, outcome: 'success', destinations: new Set(['CIP', 'FOO', 'ALT']) });
    expect(logs.events('auth.ecpds.fetch.skipped_inactive')).toEqual([
      expect.objectContaining({ username: 'ecpds-user-1', server_index: 0, server: primary.url, skipped: 5, total: 10 }),
    ]);
    expect(logs.events('auth.ecpds.fetch.skipped_record')).toEqual([
      expect.objectContaining({ server_index: 0, skipped: 2, total: 10, target_field: 'name' }),
    ]);
  });

  it('compares the configured target field', async () => {
    primary.behaviour = { kind: 'list', destinationList: MIXED_DESTINATIONS };
    const fetched = await client([primary.url], { targetField: 'alias' }).fetch('ecpds-user-1', silentLogger);
    expect(fetched).toEqual({ ok: true, outcome: 'success', destinations: new Set(['ALIAS-1']) });
  });
});

describe('several servers', () => {
  it('queries every server in parallel', async () => {
    primary.hold();
    secondary.hold();
    const pending = client([primary.url, secondary.url]).fetch('ecpds-user-1', silentLogger);

    // Both received the request while neither has answered.
    await Promise.all([primary.waitForCalls(1), secondary.waitForCalls(1)]);
    primary.release();
    secondary.release();
    expect((await pending).ok).toBe(true);
  });

  it('fails under strict when one server answers 500', async () => {
    secondary.behaviour = { kind: 'status', status: 500 };
    expect(await client([primary.url, secondary.url]).fetch('ecpds-user-1', silentLogger)).toEqual({
      ok: false,
      outcome: 'http_5xx',
    });
  });

  it('serves the healthy server under any_success, labelled http_5xx', async () => {
    secondary.behaviour = { kind: 'status', status: 500 };
    const fetched = await client([primary.url, secondary.url], { policy: 'any_success' }).fetch('ecpds-user-1', silentLogger);
    expect(fetched).toEqual({ ok: true, outcome: 'http_5xx', destinations: new Set(['CIP', 'FOO']) });
  });

  it('fails under any_success when every server failed, with the worst label', async () => {
    primary.behaviour = { kind: 'body', body: 'nope' };
    secondary.behaviour = { kind: 'status', status: 403 };
    expect(await client([primary.url, secondary.url], { policy: 'any_success' }).fetch('ecpds-user-1', silentLogger)).toEqual({
      ok: false,
      outcome: 'http_403',
    });
  });

  it.each(['strict', 'any_success'] as const)('unites the sets of the servers under %s', async (policy) => {
    secondary.behaviour = {
      kind: 'list',
      destinationList: [
        { name: 'BAR', active: true },
        { name: 'CIP', active: true },
      ],
    };
    expect(await client([primary.url, secondary.url], { policy }).fetch('ecpds-user-1', silentLogger)).toEqual({
      ok: true,
      outcome: 'success',
      destinations: new Set(['CIP', 'FOO', 'BAR']),
    });
  });

  it('logs each server by index, the failed one with its error', async () => {
    secondary.behaviour = { kind: 'status', status: 502 };
    const logs = new LogCapture();
    await client([primary.url, secondary.url], { policy: 'any_success' }).fetch('ecpds-user-1', logs.logger);

    expect(logs.events('auth.ecpds.fetch.succeeded')).toEqual([
      expect.objectContaining({ username: 'ecpds-user-1', server_index: 0, server: primary.url }),
    ]);
    expect(logs.events('auth.ecpds.fetch.failed')).toEqual([
      expect.objectContaining({
        username: 'ecpds-user-1',
        server_index: 1,
        server: secondary.url,
        outcome: 'http_5xx',
        error: 'ECPDS answered HTTP 502',
      }),
    ]);
  });
});

it('refuses to be built without servers', () => {
  expect(() => new DestinationClient(clientSettings([]))).toThrow(/at least one server/);
});
