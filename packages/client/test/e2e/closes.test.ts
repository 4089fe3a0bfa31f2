import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AvisoClient, type WatchStatus } from '../../src/index.js';
import { ManualClock, until } from '../support/manual-clock.js';

/**
 * The waits after a close frame (docs/design/rules/client.md §3), on a manual clock against a scripted SSE server:
 * `server_shutdown` waits 5 s; `max_duration_reached` reconnects at once, unless the session
 * lasted under 1 s, which turns the immediate reconnect into backoff.
 */
const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const established = frame('live-notification', { type: 'connection_established', request_id: 'r', topic: 't', timestamp: 'x' });
const closing = (reason: string): string => frame('connection-closing', { reason, message: 'm', timestamp: 'x' });

let server: Server;
let baseUrl: string;
/** Open responses, in arrival order; each test writes its frames into them. */
let responses: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(established);
    responses.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => {
  for (const res of responses) res.destroy();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

function watch(draw: number): { clock: ManualClock; statuses: WatchStatus[]; close: () => void } {
  responses = [];
  const clock = new ManualClock(draw);
  const statuses: WatchStatus[] = [];
  const stream = new AvisoClient({ baseUrl, clock }).watch({ eventType: 'mars', identifier: {}, onStatus: (s) => statuses.push(s) });
  return { clock, statuses, close: () => stream.close() };
}

const delays = (statuses: WatchStatus[]): number[] => statuses.flatMap((s) => (s.type === 'reconnecting' ? [s.delayMs] : []));
const opens = (statuses: WatchStatus[]): number => statuses.filter((s) => s.type === 'opened').length;
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

describe('waits after a close frame', () => {
  it('server_shutdown waits 5 s before the next request', async () => {
    const w = watch(0);
    await until(() => opens(w.statuses) === 1, 'the opening');
    responses[0]!.end(closing('server_shutdown'));
    await until(() => delays(w.statuses).length === 1, 'the reconnect');
    expect(delays(w.statuses)).toEqual([5_000]);
    w.clock.advance(4_999);
    await settle();
    expect(responses).toHaveLength(1);
    w.clock.advance(1);
    await until(() => opens(w.statuses) === 2, 'the second opening');
    w.close();
  });

  it('max_duration_reached after a session of 1 s or more reconnects at once', async () => {
    const w = watch(0.5);
    await until(() => opens(w.statuses) === 1, 'the opening');
    w.clock.advance(1_000);
    responses[0]!.end(closing('max_duration_reached'));
    await until(() => opens(w.statuses) === 2, 'the second opening');
    expect(delays(w.statuses)).toEqual([0]);
    w.close();
  });

  it('a session under 1 s turns the immediate reconnect into backoff', async () => {
    const w = watch(0.5);
    await until(() => opens(w.statuses) === 1, 'the opening');
    w.clock.advance(999);
    responses[0]!.end(closing('end_of_stream'));
    await until(() => delays(w.statuses).length === 1, 'the reconnect');
    // Full jitter at attempt 0 with a draw of 0.5: floor(0.5 × 250 ms).
    expect(delays(w.statuses)).toEqual([125]);
    await settle();
    expect(responses).toHaveLength(1);
    w.clock.advance(125);
    await until(() => opens(w.statuses) === 2, 'the second opening');
    w.close();
  });
});
