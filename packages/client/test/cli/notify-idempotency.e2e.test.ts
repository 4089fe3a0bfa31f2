import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cliEnv, ndjson, runCli } from './support.js';

/**
 * `aviso notify --idempotency-key K --retry` as a subprocess (docs/cli.md "Commands"), against a
 * scripted server that cuts the first attempts after reading them and records each key.
 */
let server: Server;
let env: Record<string, string>;
let cuts = 0;
let keys: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      keys.push(req.headers['idempotency-key'] as string | undefined);
      if (cuts > 0) {
        cuts--;
        req.socket.destroy();
        return;
      }
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-request-id': '00000000-0000-4000-8000-000000000003',
        'idempotent-replayed': keys.length > 1 ? 'true' : 'false',
      });
      res.end(
        JSON.stringify({ status: 'success', request_id: '00000000-0000-4000-8000-000000000003', processed_at: '2026-12-02T12:00:00Z' }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const home = mkdtempSync(join(tmpdir(), 'aviso-cli-idem-'));
  env = cliEnv(home, { AVISO_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  cuts = 0;
  keys = [];
});

describe('aviso notify and the Idempotency-Key', () => {
  it('sends the given key, and with --retry sends it again after a cut; the answer says replayed', async () => {
    cuts = 1;
    const result = await runCli(['notify', 'event=mars,class=od', '--idempotency-key', 'batch-7', '--retry'], env);
    expect(result.code).toBe(0);
    expect(keys).toEqual(['batch-7', 'batch-7']);
    expect(ndjson(result.stdout)).toEqual([
      {
        event_type: 'mars',
        status: 'success',
        request_id: '00000000-0000-4000-8000-000000000003',
        processed_at: '2026-12-02T12:00:00Z',
        replayed: true,
      },
    ]);
  });

  it('without --retry, a cut request fails after one attempt', async () => {
    cuts = 1;
    const result = await runCli(['notify', 'event=mars,class=od'], env);
    expect(result.code).not.toBe(0);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a malformed key before sending anything', async () => {
    const result = await runCli(['notify', 'event=mars,class=od', '--idempotency-key', 'two words'], env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('idempotency key');
    expect(keys).toHaveLength(0);
  });
});
