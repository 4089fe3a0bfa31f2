import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseListenerFile } from '../../src/cli/listeners.js';
import { runTriggers } from '../../src/cli/triggers/run.js';
import { adaptiveCard } from '../../src/cli/triggers/teams.js';
import { TriggerFailedError } from '../../src/index.js';

/**
 * The teams trigger against a local HTTP server standing in for a Teams Workflows endpoint: the
 * card has the aviso client's shape, the title is templated, `{{` in the notification stays
 * literal, and a 4xx fails fast while a 5xx is retried.
 */
const notification = (payload: unknown) => ({
  view: { event_type: 'mars', sequence: 42, identifier: { step: 12, class: 'od', date: '20260601' }, payload },
  cloudEvent: {},
});

describe('the Adaptive Card', () => {
  it('has a title, the Event, Sequence and identifier facts (sorted), then the payload facts', () => {
    expect(adaptiveCard(notification({ seed: 'x', count: 5 }), 'aviso mars #42')).toEqual({
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          content: {
            type: 'AdaptiveCard',
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            version: '1.4',
            body: [
              { type: 'TextBlock', text: 'aviso mars #42', weight: 'Bolder', size: 'Medium', color: 'Accent', wrap: true },
              {
                type: 'FactSet',
                facts: [
                  { title: 'Event', value: 'mars' },
                  { title: 'Sequence', value: '42' },
                  { title: 'class', value: 'od' },
                  { title: 'date', value: '20260601' },
                  { title: 'step', value: '12' },
                ],
              },
              { type: 'TextBlock', text: 'Payload', weight: 'Bolder', spacing: 'Medium' },
              {
                type: 'FactSet',
                facts: [
                  { title: 'count', value: '5' },
                  { title: 'seed', value: 'x' },
                ],
              },
            ],
          },
        },
      ],
    });
  });
  it('shows a scalar or array payload as monospace JSON, and leaves a null payload out', () => {
    const body = (p: unknown): unknown[] =>
      (adaptiveCard(notification(p), 't').attachments as { content: { body: unknown[] } }[])[0]!.content.body;
    expect(body('scalar-string')[2]).toEqual({
      type: 'TextBlock',
      text: 'Payload: "scalar-string"',
      fontType: 'Monospace',
      wrap: true,
      spacing: 'Medium',
    });
    expect(body([1, 2])[2]).toMatchObject({ text: 'Payload: [1,2]' });
    expect(body(null)).toHaveLength(2);
    expect(body({})).toHaveLength(3);
  });
});

describe('the teams trigger against a receiver', () => {
  let receiver: Server;
  let url: string;
  const received: { type: string | undefined; body: unknown }[] = [];
  let status = 200;
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ type: req.headers['content-type'], body: JSON.parse(body) as unknown });
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(() => receiver.close());

  const ctx = { listenerName: 'x', human: false, write: () => Promise.resolve(), env: { TEAMS_WEBHOOK_URL: '' } };
  const triggers = (extra: string) =>
    parseListenerFile(`listeners:\n  - event: mars\n    triggers:\n      - type: teams\n${extra}`, 'f')[0]!.triggers;

  it('posts the card as application/json to the templated URL, with the rendered title', async () => {
    received.length = 0;
    const env = { ...ctx, env: { TEAMS_WEBHOOK_URL: `${url}/workflows/abc` } };
    await runTriggers(
      triggers(
        '        url: "{{ env.TEAMS_WEBHOOK_URL }}"\n        title_template: "Custom {{ notification.event_type }} {{ notification.payload.note }}"',
      ),
      notification({ note: '{{ env.SECRET }}' }),
      env,
      { warn: () => undefined, backoffMs: () => 0 },
    );
    expect(received).toHaveLength(1);
    expect(received[0]?.type).toBe('application/json');
    const card = received[0]?.body as ReturnType<typeof adaptiveCard>;
    const content = (card.attachments as { content: { body: { text?: string; facts?: unknown[] }[] } }[])[0]!.content;
    expect(content.body[0]?.text).toBe('Custom mars {{ env.SECRET }}');
    expect(content.body[3]?.facts).toEqual([{ title: 'note', value: '{{ env.SECRET }}' }]);
  });
  it("uses the aviso client's default title", async () => {
    received.length = 0;
    await runTriggers(triggers(`        url: "${url}/x"`), notification(null), ctx, { warn: () => undefined, backoffMs: () => 0 });
    const content = (received[0]?.body as { attachments: { content: { body: { text: string }[] } }[] }).attachments[0]!.content;
    expect(content.body[0]?.text).toBe('aviso mars #42');
  });
  it('fails fast on a 4xx, retries a 5xx, and obeys required: false', async () => {
    received.length = 0;
    status = 404;
    await expect(
      runTriggers(triggers(`        url: "${url}/x"\n        retries: 2`), notification(null), ctx, {
        warn: () => undefined,
        backoffMs: () => 0,
      }),
    ).rejects.toBeInstanceOf(TriggerFailedError);
    expect(received).toHaveLength(1);
    status = 503;
    const warnings: unknown[] = [];
    await runTriggers(triggers(`        url: "${url}/x"\n        retries: 2\n        required: false`), notification(null), ctx, {
      warn: (m, a) => void warnings.push({ m, a }),
      backoffMs: () => 0,
    });
    expect(received).toHaveLength(4);
    expect(warnings).toEqual([{ m: 'optional trigger failed; continuing', a: expect.objectContaining({ kind: 'teams', retries: 2 }) }]);
    status = 200;
  });
});
