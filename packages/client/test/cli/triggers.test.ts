import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseListenerFile } from '../../src/cli/listeners.js';
import { commandEnvironment } from '../../src/cli/triggers/command.js';
import { TriggerFailedError } from '../../src/index.js';
import { runTriggers } from '../../src/cli/triggers/run.js';
import type { TriggerEnvironment, TriggerNotification } from '../../src/cli/triggers/types.js';

const cloudEvent = {
  specversion: '1.0',
  id: 'mars@7',
  type: 'int.ecmwf.aviso.mars',
  source: 'test',
  data: { identifier: { class: 'od' }, payload: { v: 1 } },
};
const n: TriggerNotification = {
  view: { event_type: 'mars', sequence: 7, identifier: { class: 'od', 'step-x': 12 }, payload: { v: "it's" } },
  cloudEvent,
};
const dir = mkdtempSync(join(tmpdir(), 'aviso-triggers-'));

function ctx(over: Partial<TriggerEnvironment> = {}): TriggerEnvironment & { out: string[] } {
  const out: string[] = [];
  return {
    listenerName: 'l1',
    human: false,
    env: { PATH: process.env.PATH, AVISO_TOKEN: 'secret', AVISO_PASSWORD: 'pw', KEEP: 'yes' },
    write: async (t) => void out.push(t),
    out,
    ...over,
  };
}

function triggersOf(yaml: string) {
  const [l] = parseListenerFile(`listeners:\n  - event: mars\n    triggers:\n${yaml}`, 't.yaml');
  return l!.triggers;
}

const warnings: { message: string; attributes: Readonly<Record<string, unknown>> }[] = [];
const opts = {
  warn: (message: string, attributes: Readonly<Record<string, unknown>>) => void warnings.push({ message, attributes }),
  backoffMs: () => 0,
};

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
let server: Server;
let base = '';
const received: Received[] = [];
let statuses: number[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('echo and log', () => {
  it('echo prints NDJSON when piped and a leader plus pretty JSON on a terminal', async () => {
    const piped = ctx();
    await runTriggers(triggersOf('      - type: echo'), n, piped, opts);
    expect(piped.out).toEqual([`${JSON.stringify(n.view)}\n`]);
    const tty = ctx({ human: true });
    await runTriggers(triggersOf('      - type: echo'), n, tty, opts);
    expect(tty.out[0]).toBe(`new notification (listener: l1, trigger: echo):\n${JSON.stringify(n.view, null, 2)}\n`);
  });
  it('log appends one compact JSON line per notification', async () => {
    const path = join(dir, 'n.log');
    const triggers = triggersOf(`      - type: log\n        path: ${path}`);
    await runTriggers(triggers, n, ctx(), opts);
    await runTriggers(triggers, n, ctx(), opts);
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(n.view)}\n`.repeat(2));
  });
});

describe('command', () => {
  it('sets the AVISO_* variables and removes the credentials', () => {
    const env = commandEnvironment(n, ctx().env, new Set(['KEEP']), { EXTRA: '1', AVISO_SEQUENCE: 'override' });
    expect(env).toMatchObject({
      AVISO_EVENT_TYPE: 'mars',
      AVISO_SEQUENCE: 'override',
      AVISO_IDENTIFIER_CLASS: 'od',
      AVISO_IDENTIFIER_STEP_X: '12',
      AVISO_PAYLOAD_JSON: JSON.stringify(n.view.payload),
      AVISO_NOTIFICATION_JSON: JSON.stringify(n.view),
      EXTRA: '1',
    });
    expect(env.AVISO_TOKEN).toBeUndefined();
    expect(env.AVISO_PASSWORD).toBeUndefined();
    expect(env.KEEP).toBeUndefined();
  });
  it('runs /bin/sh with the quoted values and the environment', async () => {
    const out = join(dir, 'cmd.out');
    const triggers = triggersOf(
      `      - type: command\n        command: "printf '%s|%s|%s|%s\\\\n' {{ notification.payload.v }} \\"$AVISO_IDENTIFIER_CLASS\\" \\"$AVISO_TOKEN\\" \\"$MODE\\" >> ${out}"\n        env:\n          MODE: prod`,
    );
    await runTriggers(triggers, n, ctx(), opts);
    expect(readFileSync(out, 'utf8')).toBe("it's|od||prod\n");
  });
  it('fails fast on a non-zero exit, retries when fail_fast is off, and honours timeout', async () => {
    const count = join(dir, 'count');
    const failing = (extra: string) =>
      triggersOf(`      - type: command\n        command: "echo x >> ${count}; echo boom >&2; exit 3"\n        retries: 2\n${extra}`);
    await expect(runTriggers(failing(''), n, ctx(), opts)).rejects.toThrow(/exited with code 3; stderr: boom/);
    expect(readFileSync(count, 'utf8')).toBe('x\n');
    await expect(runTriggers(failing('        fail_fast: false\n'), n, ctx(), opts)).rejects.toBeInstanceOf(TriggerFailedError);
    expect(readFileSync(count, 'utf8')).toBe('x\n'.repeat(4));
    const slow = triggersOf('      - type: command\n        command: "sleep 5"\n        timeout: 200ms');
    await expect(runTriggers(slow, n, ctx(), opts)).rejects.toThrow(/timed out after 200 ms/);
  });
  it('an optional trigger that fails warns and the next trigger still runs', async () => {
    const c = ctx();
    await runTriggers(
      triggersOf('      - type: command\n        command: "exit 1"\n        required: false\n      - type: echo'),
      n,
      c,
      opts,
    );
    expect(warnings.at(-1)).toEqual({
      message: 'optional trigger failed; continuing',
      attributes: {
        'event.name': 'client.trigger.failed',
        kind: 'command',
        retries: 0,
        notification: 'mars@7',
        error: 'command trigger exited with code 1',
      },
    });
    expect(c.out).toHaveLength(1);
  });
});

describe('webhook and post', () => {
  it('webhook renders the URL (values percent-encoded), headers and body', async () => {
    received.length = 0;
    const triggers = triggersOf(
      `      - type: webhook\n        url: "${base}/hook/{{ notification.payload.v }}?c={{ notification.identifier.class }}"\n        method: PUT\n        headers:\n          X-Seq: "{{ notification.sequence }}"\n        body_template: '{"seq": {{ notification.sequence }}}'`,
    );
    await runTriggers(triggers, n, ctx(), opts);
    expect(received[0]).toMatchObject({ method: 'PUT', url: '/hook/it%27s?c=od', body: '{"seq": 7}' });
    expect(received[0]?.headers['x-seq']).toBe('7');
  });
  it('webhook defaults to POSTing the notification JSON', async () => {
    received.length = 0;
    await runTriggers(triggersOf(`      - type: webhook\n        url: "${base}/d"`), n, ctx(), opts);
    expect(received[0]).toMatchObject({ method: 'POST', body: JSON.stringify(n.view) });
  });
  it('retries 5xx, fails fast on 4xx', async () => {
    received.length = 0;
    statuses = [503, 502];
    await runTriggers(triggersOf(`      - type: webhook\n        url: "${base}/r"\n        retries: 2`), n, ctx(), opts);
    expect(received).toHaveLength(3);
    received.length = 0;
    statuses = [404];
    await expect(
      runTriggers(triggersOf(`      - type: webhook\n        url: "${base}/r"\n        retries: 2`), n, ctx(), opts),
    ).rejects.toThrow(/HTTP 404/);
    expect(received).toHaveLength(1);
  });
  it('post sends the CloudEvent as application/cloudevents+json', async () => {
    received.length = 0;
    await runTriggers(
      triggersOf(
        `      - type: post\n        url: "${base}/ce"\n        headers:\n          X-Routing-Key: "aviso.{{ notification.event_type }}"`,
      ),
      n,
      ctx(),
      opts,
    );
    expect(received[0]?.headers['content-type']).toBe('application/cloudevents+json');
    expect(received[0]?.headers['x-routing-key']).toBe('aviso.mars');
    expect(JSON.parse(received[0]?.body ?? '')).toEqual(cloudEvent);
  });
});
