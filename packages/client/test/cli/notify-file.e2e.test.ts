import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BatchNotifyServer } from '../support/batch-notify-server.js';
import { cliEnv, ndjson, runCli } from './support.js';

/**
 * `aviso notify --file PATH|-` as a subprocess (docs/cli.md "Many notifications from a file"),
 * against a local server of the batch contract (test/support/batch-notify-server.ts).
 */
const server = new BatchNotifyServer();
let home: string;
let env: Record<string, string>;

beforeAll(async () => {
  await server.start();
  home = mkdtempSync(join(tmpdir(), 'aviso-cli-batch-'));
  env = cliEnv(home, { AVISO_BASE_URL: server.url });
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const line = (step: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ event_type: 'mars', identifier: { class: 'od', step, ...extra }, payload: { step } });

function file(name: string, lines: readonly string[]): string {
  const path = join(home, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const storedSteps = (): unknown[] => server.stored.map((s) => (s.body.identifier as { step: unknown }).step);

describe('aviso notify --file', () => {
  it("sends the notifications of a file in one batch and prints the single form's line for each", async () => {
    const path = file('three.ndjson', [line(1), '', line(2), line(3)]);
    const result = await runCli(['notify', '--file', path], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(server.received.map((r) => r.items)).toEqual([3]);
    expect(storedSteps()).toEqual([1, 2, 3]);
    const printed = ndjson(result.stdout);
    expect(printed).toHaveLength(3);
    for (const confirmation of printed) {
      expect(confirmation).toEqual({
        event_type: 'mars',
        status: 'success',
        request_id: expect.stringMatching(/^00000000-/),
        processed_at: '2026-12-05T01:00:00Z',
      });
    }
  });

  it('reads standard input with --file -, in batches of at most 1,000', async () => {
    const lines = Array.from({ length: 1500 }, (_, i) => line(i));
    const result = await runCli(['notify', '--file', '-'], env, undefined, `${lines.join('\n')}\n`);
    expect(result.code).toBe(0);
    expect(server.received.map((r) => r.items)).toEqual([1000, 500]);
    expect(storedSteps()).toEqual(Array.from({ length: 1500 }, (_, i) => i));
    expect(ndjson(result.stdout)).toHaveLength(1500);
  });

  it("exits 1 naming each refused notification by its line and the server's message; the others are stored and confirmed", async () => {
    const path = file('one-bad.ndjson', [line(1), '', line(2, { refuse: 'x' }), line(3)]);
    const result = await runCli(['notify', '--file', path], env);
    expect(result.code).toBe(1);
    expect(storedSteps()).toEqual([1, 3]);
    expect(ndjson(result.stdout)).toHaveLength(2);
    expect(result.stderr).toMatch(
      /^Error: line 3: Unknown field 'refuse' provided for notify operation \(INVALID_NOTIFICATION_REQUEST, request id 00000000-[0-9a-f-]+\)\nError: 1 of 3 notifications failed\n$/,
    );
  });

  it('names a batch that got no answer as one range, and says it may have been stored', async () => {
    server.honoursKeys = false;
    server.faults = ['cut-before'];
    const path = file('cut.ndjson', [line(1), line(2), line(3)]);
    const result = await runCli(['notify', '--file', path], env);
    expect(result.code).toBe(1);
    expect(server.received).toHaveLength(1);
    expect(result.stdout).toBe('');
    const errors = result.stderr.trim().split('\n');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(
      /^Error: lines 1 to 3: POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/notification\/batch failed: .+; the server may have stored them$/,
    );
    expect(errors[1]).toBe('Error: 3 of 3 notifications failed');
  });

  it('with --retry, sends a batch whose answer was lost again under its key', async () => {
    server.faults = ['cut-after'];
    const path = file('retry.ndjson', [line(1), line(2)]);
    const result = await runCli(['notify', '--file', path, '--retry'], env);
    expect(result.code).toBe(0);
    expect(server.received.map((r) => r.key)).toEqual([server.received[0]?.key, server.received[0]?.key]);
    expect(storedSteps()).toEqual([1, 2]);
    expect(ndjson(result.stdout).map((c) => c.replayed)).toEqual([true, true]);
  });

  it('exits 2 before sending anything when a line is not a notification, naming the line', async () => {
    const cases: [string[], RegExp][] = [
      [[line(1), '{"event_type":"mars",'], /line 2: not valid JSON/],
      [[line(1), '', '[1]'], /line 3: a notification is a JSON object/],
      [[line(1), '{"event_type":"mars","identifier":{},"data":{}}'], /line 2: unknown field "data"/],
      [['{"identifier":{}}'], /line 1: event_type must be a non-empty string/],
      [['{"event_type":"mars","identifier":[]}'], /line 1: identifier must be a JSON object/],
      [['', '  '], /holds no notifications/],
    ];
    for (const [lines, message] of cases) {
      const result = await runCli(['notify', '--file', file('bad.ndjson', lines)], env);
      expect(result.code, lines.join(' | ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    const missing = await runCli(['notify', '--file', join(home, 'missing.ndjson')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read');
    expect(server.received).toEqual([]);
  });

  it("refuses the single form's inputs beside --file", async () => {
    const path = file('ok.ndjson', [line(1)]);
    for (const args of [
      ['notify', 'event=mars,class=od', '--file', path],
      ['notify', '--identifier', 'class=od', '--file', path],
      ['notify', '--idempotency-key', 'k-1', '--file', path],
    ]) {
      const result = await runCli(args, env);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/--file|--idempotency-key/);
    }
    expect(server.received).toEqual([]);
  });
});
