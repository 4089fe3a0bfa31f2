import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEcpdsPlugin, type EcpdsPlugin } from '../../../../src/auth/ecpds/ecpds-plugin.js';
import type { EcpdsConfig } from '../../../../src/config/model.js';
import { ECPDS_SERVICE_ACCOUNT, FakeEcpds, SilentListener } from '../../../support/fake-ecpds.js';
import { ManualClock } from '../../../support/manual-clock.js';
import { findFreePort } from '../../../support/ports.js';
import { apiErrorOf, ecpdsConfig, LogCapture, readContext, RecordingTelemetry } from './ecpds-fixtures.js';

const fake = new FakeEcpds();
const alwaysFailing = new FakeEcpds();
const plugins: EcpdsPlugin[] = [];

interface Setup {
  readonly plugin: EcpdsPlugin;
  readonly clock: ManualClock;
  readonly telemetry: RecordingTelemetry;
}

function setup(overrides: Partial<EcpdsConfig> = {}, servers: readonly string[] = [fake.url]): Setup {
  const clock = new ManualClock();
  const telemetry = new RecordingTelemetry();
  const plugin = createEcpdsPlugin(ecpdsConfig(servers, overrides), { clock, telemetry });
  plugins.push(plugin);
  return { plugin, clock, telemetry };
}

beforeAll(async () => {
  await Promise.all([fake.start(), alwaysFailing.start()]);
  alwaysFailing.behaviour = { kind: 'status', status: 500 };
});
afterEach(() => {
  for (const plugin of plugins.splice(0)) plugin.close();
  fake.reset();
});
afterAll(async () => {
  await Promise.all([fake.stop(), alwaysFailing.stop()]);
});

it('is named ecpds', () => {
  expect(setup().plugin.name).toBe('ecpds');
});

describe('decisions', () => {
  it('lets an admin through without calling ECPDS', async () => {
    const { plugin, telemetry } = setup();
    await plugin.check(readContext({ username: 'ecpds-user-admin', destination: 'NOPE', isAdmin: true }));

    expect(fake.totalCalls).toBe(0);
    expect(telemetry.calls).toEqual(['decided:admin_bypass', 'cacheSize:0']);
  });

  it('denies a request without the match key, before any cache lookup', async () => {
    const { plugin, telemetry } = setup();
    const error = await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1' })));

    expect(error.statusCode).toBe(403);
    expect(error.body).toEqual({
      code: 'FORBIDDEN',
      error: 'forbidden',
      message: "Required field 'destination' not found in request identifiers",
    });
    expect(fake.totalCalls).toBe(0);
    expect(telemetry.calls).toEqual(['decided:deny_match_key_missing', 'cacheSize:0']);
  });

  it('allows a destination in the list', async () => {
    const { plugin, telemetry } = setup();
    await plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP' }));

    expect(fake.callsFor('ecpds-user-1')).toBe(1);
    expect(telemetry.calls).toEqual(['cacheMiss', 'fetched:success', 'decided:allow', 'cacheSize:1']);
  });

  it.each(['BAR', 'cip'])('denies %s, which is not in the list (exact, case-sensitive)', async (destination) => {
    const { plugin, telemetry } = setup();
    const error = await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1', destination })));

    expect(error.statusCode).toBe(403);
    expect(error.body).toEqual({
      code: 'FORBIDDEN',
      error: 'forbidden',
      message: `User 'ecpds-user-1' does not have access to destination '${destination}'`,
    });
    expect(telemetry.calls).toEqual(['cacheMiss', 'fetched:success', 'decided:deny_destination', 'cacheSize:1']);
  });

  it('denies everything for a user with an empty list', async () => {
    const { plugin } = setup();
    const error = await apiErrorOf(plugin.check(readContext({ username: 'someone-else', destination: 'CIP' })));
    expect(error.statusCode).toBe(403);
  });

  it('answers 503 when ECPDS fails', async () => {
    const { plugin, telemetry } = setup();
    const error = await apiErrorOf(plugin.check(readContext({ username: 'ecpds-unavailable', destination: 'CIP' })));

    expect(error.statusCode).toBe(503);
    expect(error.body).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      error: 'service_unavailable',
      message: 'ECPDS service is inaccessible',
    });
    expect(error.headers).toEqual({});
    expect(telemetry.calls).toEqual(['cacheMiss', 'fetched:http_5xx', 'decided:unavailable', 'cacheSize:0']);
  });

  it('answers 503 when ECPDS rejects the service account', async () => {
    const { plugin, telemetry } = setup({ password: 'not-the-password' });
    const error = await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP' })));

    expect(error.statusCode).toBe(503);
    expect(telemetry.calls).toContain('fetched:http_401');
  });

  it('answers 500 for an unexpected internal error', async () => {
    const { plugin, telemetry } = setup();
    const context = readContext({
      username: 'ecpds-user-1',
      canonicalValue: () => {
        throw new Error('identifier exploded');
      },
    });
    const error = await apiErrorOf(plugin.check(context));

    expect(error.statusCode).toBe(500);
    expect(error.body).toEqual({
      code: 'INTERNAL_ERROR',
      error: 'internal_error',
      message: 'ECPDS check failed unexpectedly',
    });
    expect(telemetry.calls).toEqual(['decided:error', 'cacheSize:0']);
  });
});

describe('partial-outage policy with one server always answering 500', () => {
  it('answers 503 under strict', async () => {
    const { plugin, telemetry } = setup({ partial_outage_policy: 'strict' }, [fake.url, alwaysFailing.url]);
    const error = await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP' })));

    expect(error.statusCode).toBe(503);
    expect(telemetry.calls).toEqual(['cacheMiss', 'fetched:http_5xx', 'decided:unavailable', 'cacheSize:0']);
  });

  it('decides from the healthy server under any_success, caches it, and counts the fetch as http_5xx', async () => {
    const { plugin, telemetry } = setup({ partial_outage_policy: 'any_success' }, [fake.url, alwaysFailing.url]);
    await plugin.check(readContext({ username: 'ecpds-user-1', destination: 'FOO' }));
    await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1', destination: 'BAR' })));

    expect(telemetry.calls).toEqual([
      'cacheMiss',
      'fetched:http_5xx',
      'decided:allow',
      'cacheSize:1',
      'cacheHit',
      'decided:deny_destination',
      'cacheSize:1',
    ]);
    expect(fake.callsFor('ecpds-user-1')).toBe(1);
  });
});

describe('cache', () => {
  it('serves allows and denials from the cache within the TTL and refetches after it', async () => {
    const { plugin, clock, telemetry } = setup({ cache_ttl_seconds: 60 });
    const check = (destination: string) => plugin.check(readContext({ username: 'ecpds-user-1', destination }));

    await check('CIP');
    clock.advance(59_999);
    await apiErrorOf(check('BAR'));
    await apiErrorOf(check('BAR'));
    expect(fake.callsFor('ecpds-user-1')).toBe(1);

    clock.advance(1);
    await check('FOO');
    expect(fake.callsFor('ecpds-user-1')).toBe(2);
    expect(telemetry.calls.filter((call) => call === 'cacheHit' || call === 'cacheMiss')).toEqual([
      'cacheMiss',
      'cacheHit',
      'cacheHit',
      'cacheMiss',
    ]);
  });

  it('never caches a failure', async () => {
    const { plugin } = setup();
    const check = () => plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP' }));

    fake.behaviour = { kind: 'status', status: 503 };
    expect((await apiErrorOf(check())).statusCode).toBe(503);
    expect((await apiErrorOf(check())).statusCode).toBe(503);
    fake.behaviour = { kind: 'directory' };
    await check();
    await check();

    expect(fake.callsFor('ecpds-user-1')).toBe(3);
  });

  it('keeps each user separately', async () => {
    const { plugin, telemetry } = setup();
    await plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP' }));
    await plugin.check(readContext({ username: 'ecpds-user-2', destination: 'CIP' }));

    expect([fake.callsFor('ecpds-user-1'), fake.callsFor('ecpds-user-2')]).toEqual([1, 1]);
    expect(telemetry.calls.at(-1)).toBe('cacheSize:2');
  });

  it('evicts the least recently used user beyond max_entries', async () => {
    const { plugin, telemetry } = setup({ max_entries: 2 });
    const check = (username: string) => plugin.check(readContext({ username, destination: 'CIP' }));

    await check('ecpds-user-a');
    await check('ecpds-user-b');
    await check('ecpds-user-a'); // a is now the most recently used
    await check('ecpds-user-c'); // evicts b
    expect(telemetry.calls.at(-1)).toBe('cacheSize:2');

    await check('ecpds-user-a');
    await check('ecpds-user-b');
    expect([fake.callsFor('ecpds-user-a'), fake.callsFor('ecpds-user-b'), fake.callsFor('ecpds-user-c')]).toEqual([1, 2, 1]);
  });
});

describe('single flight', () => {
  it('shares one upstream fetch among concurrent checks of one user', async () => {
    const { plugin, telemetry } = setup();
    const logs = new LogCapture();
    fake.hold();
    const checks = ['CIP', 'FOO', 'CIP', 'BAR', 'CIP'].map((destination) =>
      plugin.check(readContext({ username: 'ecpds-user-1', destination, logger: logs.logger })).then(
        () => 'allowed',
        (error: unknown) => (error instanceof Error ? error.message : 'other'),
      ),
    );
    await fake.waitForCalls(1);
    fake.release();

    expect(await Promise.all(checks)).toEqual([
      'allowed',
      'allowed',
      'allowed',
      "User 'ecpds-user-1' does not have access to destination 'BAR'",
      'allowed',
    ]);
    expect(fake.callsFor('ecpds-user-1')).toBe(1);
    expect(telemetry.calls.filter((call) => call.startsWith('fetched'))).toEqual(['fetched:success']);
    expect(telemetry.calls.filter((call) => call === 'cacheMiss')).toHaveLength(5);
    expect(logs.events('auth.ecpds.cache.miss').map((event) => event.cache_outcome)).toEqual([
      'miss_fetched',
      'miss_coalesced',
      'miss_coalesced',
      'miss_coalesced',
      'miss_coalesced',
    ]);
  });

  it('gives every waiter the failure of the shared fetch, and the next check retries', async () => {
    const { plugin, telemetry } = setup();
    fake.hold();
    const checks = Array.from({ length: 4 }, () =>
      apiErrorOf(plugin.check(readContext({ username: 'ecpds-unavailable', destination: 'CIP' }))),
    );
    await fake.waitForCalls(1);
    fake.release();

    expect((await Promise.all(checks)).map((error) => error.statusCode)).toEqual([503, 503, 503, 503]);
    expect(fake.callsFor('ecpds-unavailable')).toBe(1);
    expect(telemetry.calls.filter((call) => call.startsWith('fetched'))).toEqual(['fetched:http_5xx']);
    expect(telemetry.calls.filter((call) => call === 'decided:unavailable')).toHaveLength(4);

    await apiErrorOf(plugin.check(readContext({ username: 'ecpds-unavailable', destination: 'CIP' })));
    expect(fake.callsFor('ecpds-unavailable')).toBe(2);
  });

  it('does not coalesce different users', async () => {
    const { plugin } = setup();
    await Promise.all(['ecpds-user-1', 'ecpds-user-2'].map((username) => plugin.check(readContext({ username, destination: 'CIP' }))));
    expect([fake.callsFor('ecpds-user-1'), fake.callsFor('ecpds-user-2')]).toEqual([1, 1]);
  });
});

describe('timeouts from the section', () => {
  it('answers 503 when ECPDS does not answer within request_timeout_seconds', async () => {
    const { plugin, telemetry } = setup({ request_timeout_seconds: 1 });
    fake.delayMs = 3_000;
    const started = performance.now();
    const error = await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP' })));

    expect(error.statusCode).toBe(503);
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(telemetry.calls).toContain('fetched:unreachable');
  });

  it('answers 503 when the connection is not established within connect_timeout_seconds', async () => {
    const silent = await new SilentListener().start();
    try {
      const { plugin, telemetry } = setup({ connect_timeout_seconds: 1, request_timeout_seconds: 20 }, [silent.httpsUrl]);
      const started = performance.now();
      const error = await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP' })));

      expect(error.statusCode).toBe(503);
      expect(performance.now() - started).toBeLessThan(2_500);
      expect(telemetry.calls).toContain('fetched:unreachable');
    } finally {
      await silent.stop();
    }
  });
});

describe('logs', () => {
  it('reports a fetched allow with the docs/design/rules/operations.md §2.10.7 events and fields', async () => {
    const { plugin } = setup();
    const logs = new LogCapture();
    await plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP', logger: logs.logger }));

    expect(logs.eventNames()).toEqual([
      'auth.ecpds.check.started',
      'auth.ecpds.cache.miss',
      'auth.ecpds.fetch.succeeded',
      'auth.ecpds.check.allowed',
    ]);
    const check = { event_type: 'dissemination', username: 'ecpds-user-1' };
    expect(logs.events('auth.ecpds.check.started')[0]).toMatchObject({ ...check, cache_outcome: 'none' });
    expect(logs.events('auth.ecpds.check.allowed')[0]).toMatchObject({ ...check, cache_outcome: 'miss_fetched' });
    expect(logs.lines.find((line) => line.attributes['event.name'] === 'auth.ecpds.check.allowed')?.severityText).toBe('INFO');
  });

  it('reports denials with their reason', async () => {
    const { plugin } = setup();
    const logs = new LogCapture();
    await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1', logger: logs.logger })));
    await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1', destination: 'BAR', logger: logs.logger })));

    expect(logs.events('auth.ecpds.check.denied')).toEqual([
      expect.objectContaining({ reason: 'MatchKeyMissing', cache_outcome: 'none' }),
      expect.objectContaining({ reason: 'DestinationNotInList', cache_outcome: 'miss_fetched' }),
    ]);
  });

  it('reports an outage with the reference error kind', async () => {
    const { plugin } = setup();
    const logs = new LogCapture();
    await apiErrorOf(plugin.check(readContext({ username: 'ecpds-unavailable', destination: 'CIP', logger: logs.logger })));

    expect(logs.events('auth.ecpds.check.unavailable')).toEqual([
      expect.objectContaining({ username: 'ecpds-unavailable', cache_outcome: 'miss_fetched', fetch_outcome: 'ServerError' }),
    ]);
    expect(logs.events('auth.ecpds.fetch.failed')).toEqual([
      expect.objectContaining({ server_index: 0, server: fake.url, outcome: 'http_5xx' }),
    ]);
  });

  it('reports an admin bypass and a cache hit', async () => {
    const { plugin } = setup();
    const logs = new LogCapture();
    await plugin.check(readContext({ username: 'boss', destination: 'CIP', isAdmin: true, logger: logs.logger }));
    await plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP' }));
    await plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP', logger: logs.logger }));

    expect(logs.eventNames()).toEqual([
      'auth.ecpds.check.started',
      'auth.ecpds.admin.bypass',
      'auth.ecpds.check.started',
      'auth.ecpds.cache.hit',
      'auth.ecpds.check.allowed',
    ]);
  });

  it('never contains the service-account password, in any form', async () => {
    const password = 'Wr0ng-Pa55word-Never-Logged';
    const port = await findFreePort();
    const logs = new LogCapture();
    const { plugin } = setup({ password, partial_outage_policy: 'any_success' }, [
      fake.url,
      `http://${ECPDS_SERVICE_ACCOUNT.username}:${password}@127.0.0.1:${port}/api`,
    ]);
    fake.behaviour = { kind: 'directory' };

    // The fake rejects this password (401), and the second server is unreachable.
    await apiErrorOf(plugin.check(readContext({ username: 'ecpds-user-1', destination: 'CIP', logger: logs.logger })));

    const basic = Buffer.from(`${ECPDS_SERVICE_ACCOUNT.username}:${password}`).toString('base64');
    expect(logs.lines.length).toBeGreaterThan(3);
    expect(logs.text).not.toContain(password);
    expect(logs.text).not.toContain(basic);
    const failures = logs.events('auth.ecpds.fetch.failed');
    expect(failures.map((event) => [event.server_index, event.server, event.outcome]).sort()).toEqual([
      [0, fake.url, 'http_401'],
      [1, `http://[REDACTED]@127.0.0.1:${port}/api`, 'unreachable'],
    ]);
  });
});
