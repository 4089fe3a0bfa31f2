import { afterEach, describe, expect, it } from 'vitest';
import type { AuthConfig, WatchEndpointConfig } from '../../../src/config/model.js';
import { createPrometheusMetrics } from '../../../src/metrics/prometheus-metrics.js';
import { eventually } from '../../support/eventually.js';
import { LOCAL_REALM, signToken, trustedProxyAuth } from '../../support/fake-auth-o-tron.js';
import { ManualClock } from '../../support/manual-clock.js';
import { SseClient, withoutHeartbeats } from '../../support/sse-client.js';
import { buildTestApp, listen, type TestApp } from '../../support/test-app.js';
import {
  TOKEN_EXPIRED_CLOSE,
  TRANSCRIPT_REQUEST,
  TRANSCRIPT_TOPIC,
  expectClose,
  expectCloudEvent,
  expectControl,
  frameLabel,
  transcriptNotification,
} from '../../support/transcript.js';

/**
 * docs/design/rules/browser.md §6 in the stream session, through the real app over real HTTP with a manual clock:
 * a stream opened with a JWT ends when the server starts refusing that JWT (its `exp` plus the
 * 60 s leeway), with `end_of_stream` / `token_expired`, and not a millisecond before.
 */
const AUTH: AuthConfig = trustedProxyAuth({ auth_o_tron_url: '', timeout_ms: 5000 });

/** `exp` is whole seconds; the manual clock starts on a whole second. */
const EXP_IN_S = 10;
/** The first refused instant, relative to the start: exp + 61 s (jwt-verifier.ts, refusedFromMs). */
const REFUSED_AFTER_MS = (EXP_IN_S + 61) * 1000;

let testApp: TestApp | undefined;
const clients: SseClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await testApp?.app.close();
  testApp = undefined;
});

async function start(watchEndpoint: Partial<WatchEndpointConfig> = {}) {
  const clock = new ManualClock();
  const metrics = createPrometheusMetrics({ version: 'test', backendKind: 'in_memory', eventTypes: [] });
  testApp = await buildTestApp({ clock, auth: AUTH, metrics, watchEndpoint: { sse_heartbeat_interval_sec: 3600, ...watchEndpoint } });
  const url = await listen(testApp.app);
  const token = await signToken({ username: 'reader-user', realm: LOCAL_REALM, roles: ['reader'], exp: clock.now() / 1000 + EXP_IN_S });
  /** `aviso_sse_token_expiry_closes_total` of a route, as scraped. */
  const expiryCloses = async (route: string): Promise<number> => {
    const line = (await metrics.render()).body
      .split('\n')
      .find((l) => l.startsWith(`aviso_sse_token_expiry_closes_total{route="${route}"} `));
    return Number(line?.split(' ')[1]);
  };
  return { url, clock, app: testApp.app, authorization: `Bearer ${token}`, expiryCloses };
}

async function open(url: string, path: string, body: unknown, authorization?: string) {
  const client = await SseClient.open(`${url}${path}`, body, authorization ? { headers: { authorization } } : {});
  clients.push(client);
  return client;
}

async function publish(url: string, note: string): Promise<void> {
  const response = await fetch(`${url}/api/v1/notification`, { method: 'POST', body: JSON.stringify(transcriptNotification(note)) });
  expect(response.status).toBe(200);
}

/** A released stream (or subscription) offers no event to wait for: poll every 10 ms, for 5 s. */
const RELEASE_WAIT = { timeoutMs: 5_000, intervalMs: 10 };

describe('streams end when their credentials do (docs/design/rules/browser.md §6)', () => {
  it('a watch gets end_of_stream / token_expired / Credentials expired when its JWT is refused, not before', async () => {
    const { url, clock, app, authorization, expiryCloses } = await start();
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST, authorization);
    expect(client.status).toBe(200);
    const requestId = client.headers.get('x-request-id');
    expect((await client.next())?.json.type).toBe('connection_established');
    expect((await client.next())?.event).toBe('heartbeat');

    clock.advance(REFUSED_AFTER_MS - 1);
    // One millisecond before, the stream is still open and delivering.
    await publish(url, 'still-open');
    expectCloudEvent(await client.nextSignificant(), 'live-notification', 1, 'still-open');

    clock.advance(1);
    const events = await client.rest();
    expect(events.map(frameLabel)).toEqual(['end_of_stream']);
    expectControl(events[0], 'connection-closing', { ...TOKEN_EXPIRED_CLOSE, request_id: requestId, topic: TRANSCRIPT_TOPIC });
    expect(client.hasEnded).toBe(true);
    await eventually('release', () => app.streams.openStreams === 0, RELEASE_WAIT);
    expect(clock.pendingTimers).toBe(0);
    expect(await expiryCloses('/api/v1/watch')).toBe(1);
    expect(await expiryCloses('/api/v1/replay')).toBe(0);
  });

  it('a reconnect with the same JWT at that instant gets its 401', async () => {
    const { url, clock, authorization } = await start();
    clock.advance(REFUSED_AFTER_MS);
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST, authorization);
    expect(client.status).toBe(401);
    expect(JSON.parse(client.errorBody ?? '')).toMatchObject({ code: 'UNAUTHORIZED', message: 'Invalid or expired token' });
  });

  it('a replay that finishes before expiry ends normally, and leaves no timer behind', async () => {
    const { url, clock, app, authorization, expiryCloses } = await start();
    await publish(url, 'a');
    await publish(url, 'b');
    const client = await open(url, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '1' }, authorization);
    const requestId = client.headers.get('x-request-id');
    const events = withoutHeartbeats(await client.rest());
    expect(events.map(frameLabel)).toEqual(['replay_started', 'test_polygon@1', 'test_polygon@2', 'replay_completed', 'end_of_stream']);
    expectClose(events.at(-1), 'end_of_stream', requestId);
    await eventually('release', () => app.streams.openStreams === 0, RELEASE_WAIT);
    expect(clock.pendingTimers).toBe(0);
    expect(await expiryCloses('/api/v1/replay')).toBe(0);
  });

  it('a replay still running when its JWT is refused ends with the token_expired close', async () => {
    const { url, clock, authorization, expiryCloses } = await start({ replay_batch_size: 1, replay_batch_delay_ms: 3_600_000 });
    await publish(url, 'a');
    await publish(url, 'b');
    const client = await open(url, '/api/v1/replay', { ...TRANSCRIPT_REQUEST, from_id: '1' }, authorization);
    expect((await client.nextSignificant())?.json.type).toBe('replay_started');
    expectCloudEvent(await client.nextSignificant(), 'replay', 1, 'a');
    clock.advance(REFUSED_AFTER_MS);
    const events = withoutHeartbeats(await client.rest());
    expect(events.map(frameLabel)).toEqual(['end_of_stream']);
    expect(events[0]?.json).toMatchObject(TOKEN_EXPIRED_CLOSE);
    expect(await expiryCloses('/api/v1/replay')).toBe(1);
  });

  it('a client that goes away first leaves no timer behind', async () => {
    const { url, clock, app, authorization } = await start();
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST, authorization);
    await client.next();
    expect(clock.pendingTimers).toBeGreaterThan(0);
    client.close();
    await eventually('release', () => app.streams.openStreams === 0, RELEASE_WAIT);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a stream opened without credentials is unchanged: it runs to its maximum duration', async () => {
    const { url, clock } = await start({ connection_max_duration_sec: 600 });
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST);
    const requestId = client.headers.get('x-request-id');
    await client.next();
    await client.next();
    clock.advance(599_999);
    await publish(url, 'late');
    expectCloudEvent(await client.nextSignificant(), 'live-notification', 1, 'late');
    clock.advance(1);
    const events = await client.rest();
    expect(events.map(frameLabel)).toEqual(['max_duration_reached']);
    expectClose(events[0], 'max_duration_reached', requestId);
  });

  it('a JWT refused only after the maximum duration does not change the max_duration_reached close', async () => {
    const { url, clock, authorization } = await start({ connection_max_duration_sec: 30 });
    const client = await open(url, '/api/v1/watch', TRANSCRIPT_REQUEST, authorization);
    await client.next();
    await client.next();
    clock.advance(30_000);
    expect((await client.rest()).map(frameLabel)).toEqual(['max_duration_reached']);
    expect(clock.pendingTimers).toBe(0);
  });
});
