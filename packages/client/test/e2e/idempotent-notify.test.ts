import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AvisoClient, ConfigError, HttpError, TransportError, type Clock } from '../../src/index.js';
import { systemClock } from '../../src/clock.js';

/**
 * `notify` and the `Idempotency-Key` contract (docs/client.md "Idempotent notify"), against a
 * scripted server: each attempt is answered by the next step of the script (cut the connection
 * after reading the body, or answer), and every attempt's key is recorded. The real server's
 * answers are tested on its side (test/e2e/idempotency.test.ts).
 */
type Step = 'cut' | { status: number; body: unknown; headers?: Record<string, string> };

let server: Server;
let baseUrl: string;
let script: Step[] = [];
let keys: (string | undefined)[] = [];
/** Jitter draws 0: a backoff retry does not wait. */
const noJitter: Clock = { ...systemClock, random: () => 0 };

const success = (replayed?: 'true' | 'false'): Step => ({
  status: 200,
  body: { status: 'success', request_id: '00000000-0000-4000-8000-000000000001', processed_at: '2026-12-02T12:00:00Z' },
  ...(replayed === undefined ? {} : { headers: { 'idempotent-replayed': replayed } }),
});

function answer(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    keys.push(req.headers['idempotency-key'] as string | undefined);
    const step = script.shift() ?? 'cut';
    if (step === 'cut') {
      req.socket.destroy();
      return;
    }
    res.writeHead(step.status, {
      'content-type': 'application/json',
      'x-request-id': '00000000-0000-4000-8000-000000000002',
      ...step.headers,
    });
    res.end(JSON.stringify(step.body));
  });
}

beforeAll(async () => {
  server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  script = [];
  keys = [];
});

const notify = (client: AvisoClient, extra: { idempotencyKey?: string; retry?: boolean } = {}) =>
  client.notify({ eventType: 'mars', identifier: { class: 'od' }, ...extra });

describe('against a server that has not shown it deduplicates', () => {
  it('sends a fresh UUID key with every notify and reports no replay', async () => {
    const client = new AvisoClient({ baseUrl, clock: noJitter });
    script = [success(), success()];
    const first = await notify(client);
    const second = await notify(client);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(first.idempotencyKey).toBe(keys[0]);
    expect(first.replayed).toBeUndefined();
    expect(second.idempotencyKey).toBe(keys[1]);
  });

  it('does not retry a request cut after its body was sent (as the Rust client)', async () => {
    const client = new AvisoClient({ baseUrl, clock: noJitter });
    script = ['cut', success()];
    await expect(notify(client)).rejects.toBeInstanceOf(TransportError);
    expect(keys).toHaveLength(1);
  });

  it('does not retry a 5xx', async () => {
    const client = new AvisoClient({ baseUrl, clock: noJitter });
    script = [{ status: 500, body: { code: 'NOTIFICATION_STORAGE_FAILED', message: 'x' } }, success()];
    await expect(notify(client)).rejects.toBeInstanceOf(HttpError);
    expect(keys).toHaveLength(1);
  });

  it('with retry: true, retries cuts and 5xx with the same key until stored', async () => {
    const client = new AvisoClient({ baseUrl, clock: noJitter });
    script = ['cut', { status: 503, body: { code: 'X', message: 'x' } }, success('true')];
    const result = await notify(client, { retry: true, idempotencyKey: 'provider-42' });
    expect(keys).toEqual(['provider-42', 'provider-42', 'provider-42']);
    expect(result.replayed).toBe(true);
  });

  it('gives up after its retries, with the last failure', async () => {
    const client = new AvisoClient({ baseUrl, clock: noJitter });
    script = Array.from({ length: 10 }, () => 'cut' as const);
    await expect(notify(client, { retry: true })).rejects.toBeInstanceOf(TransportError);
    expect(keys).toHaveLength(6);
    expect(new Set(keys).size).toBe(1);
  });
});

describe('once the server has answered Idempotent-Replayed', () => {
  it('retries a cut request with the same key without being asked', async () => {
    const client = new AvisoClient({ baseUrl, clock: noJitter });
    script = [success('false'), 'cut', success('true')];
    await notify(client);
    const result = await notify(client);
    expect(keys).toHaveLength(3);
    expect(keys[2]).toBe(keys[1]);
    expect(keys[1]).not.toBe(keys[0]);
    expect(result.replayed).toBe(true);
  });

  it('waits out a 409 by its Retry-After and sends the key again', async () => {
    const client = new AvisoClient({ baseUrl, clock: noJitter });
    const inProgress: Step = {
      status: 409,
      body: { code: 'IDEMPOTENCY_KEY_IN_PROGRESS', message: 'A request with this Idempotency-Key is still being processed' },
      headers: { 'retry-after': '1' },
    };
    script = [inProgress, success('true')];
    const result = await notify(client, { idempotencyKey: 'k-409' });
    expect(keys).toEqual(['k-409', 'k-409']);
    expect(result.replayed).toBe(true);
  });

  it('does not retry a 422: the key was used for another notification', async () => {
    const client = new AvisoClient({ baseUrl, clock: noJitter });
    script = [
      success('false'),
      { status: 422, body: { code: 'IDEMPOTENCY_KEY_REUSED', message: 'Idempotency-Key was already used for a different notification' } },
      success(),
    ];
    await notify(client);
    const error = await notify(client, { idempotencyKey: 'k-422' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(keys).toHaveLength(2);
  });

  it('remembers it per client: another client of the same address starts without the knowledge', async () => {
    const first = new AvisoClient({ baseUrl, clock: noJitter });
    script = [success('false'), 'cut', success()];
    await notify(first);
    const second = new AvisoClient({ baseUrl, clock: noJitter });
    await expect(notify(second)).rejects.toBeInstanceOf(TransportError);
    expect(keys).toHaveLength(2);
  });
});

describe("the caller's key", () => {
  it.each(['', 'has space', 'é', 'x'.repeat(256)])('refuses %j before sending anything', async (key) => {
    const client = new AvisoClient({ baseUrl, clock: noJitter });
    await expect(notify(client, { idempotencyKey: key })).rejects.toBeInstanceOf(ConfigError);
    expect(keys).toHaveLength(0);
  });
});
