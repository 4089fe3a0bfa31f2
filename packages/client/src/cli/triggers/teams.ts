import { renderForAttempt, type TriggerEnvironment, type TriggerNotification } from './types.js';
import { send } from './http.js';

/**
 * teams: a Microsoft Teams Workflows ("Post to a channel when a webhook request is received")
 * Adaptive Card built from the notification, POSTed as `application/json` to a templated URL,
 * with the webhook trigger's retries and failure classes. The card is the aviso client's: a title
 * TextBlock, a FactSet with `Event`, `Sequence` and one fact per identifier field, then the
 * payload (a FactSet for a non-empty object, a monospace TextBlock for anything else but null).
 * The body is built as data and never passed through the template engine, so `{{` inside a
 * notification stays literal.
 */

export interface TeamsOptions {
  readonly url: string;
  readonly titleTemplate: string;
  readonly timeoutMs: number | undefined;
}

/** A fact value is text: strings as they are, `null` as `null`, anything else as compact JSON. */
function factValue(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === null || value === undefined ? 'null' : JSON.stringify(value);
}

/** Field order is the aviso client's (its maps are sorted by key). */
function facts(record: Readonly<Record<string, unknown>>): { title: string; value: string }[] {
  return Object.keys(record)
    .sort()
    .map((title) => ({ title, value: factValue(record[title]) }));
}

export function adaptiveCard(n: TriggerNotification, title: string): Record<string, unknown> {
  const body: unknown[] = [
    { type: 'TextBlock', text: title, weight: 'Bolder', size: 'Medium', color: 'Accent', wrap: true },
    {
      type: 'FactSet',
      facts: [
        { title: 'Event', value: n.view.event_type },
        { title: 'Sequence', value: String(n.view.sequence) },
        ...facts(n.view.identifier),
      ],
    },
  ];
  const payload = n.view.payload;
  const isObject = payload !== null && typeof payload === 'object' && !Array.isArray(payload);
  if (isObject && Object.keys(payload).length > 0) {
    body.push({ type: 'TextBlock', text: 'Payload', weight: 'Bolder', spacing: 'Medium' });
    body.push({ type: 'FactSet', facts: facts(payload as Record<string, unknown>) });
  } else if (payload !== null && payload !== undefined) {
    body.push({ type: 'TextBlock', text: `Payload: ${JSON.stringify(payload)}`, fontType: 'Monospace', wrap: true, spacing: 'Medium' });
  }
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: { type: 'AdaptiveCard', $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', version: '1.4', body },
      },
    ],
  };
}

export async function runTeams(n: TriggerNotification, o: TeamsOptions, ctx: TriggerEnvironment): Promise<void> {
  const url = renderForAttempt(o.url, n, ctx, 'url', 'teams url').text;
  const title = renderForAttempt(o.titleTemplate, n, ctx, 'plain', 'teams title').text;
  const body = JSON.stringify(adaptiveCard(n, title));
  await send('teams', url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }, o.timeoutMs);
}
