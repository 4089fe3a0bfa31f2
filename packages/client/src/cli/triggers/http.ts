import { AttemptError, renderForAttempt, type TriggerEnvironment, type TriggerNotification } from './types.js';

export interface WebhookOptions {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly bodyTemplate: string | undefined;
  readonly timeoutMs: number | undefined;
}

function render(template: string, n: TriggerNotification, ctx: TriggerEnvironment, target: 'plain' | 'url', context: string): string {
  return renderForAttempt(template, n, ctx, target, context).text;
}

function renderHeaders(n: TriggerNotification, ctx: TriggerEnvironment, headers: Readonly<Record<string, string>>): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) out.set(name, render(value, n, ctx, 'plain', `header ${name}`));
  return out;
}

/** One HTTP attempt: a 4xx is deterministic (fail_fast skips the retries), a 5xx, a transport error or a timeout is not. */
export async function send(kind: string, url: string, init: RequestInit, timeoutMs: number | undefined): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, {
      ...init,
      ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
    });
  } catch (error) {
    const cause =
      error instanceof Error && error.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : String((error as Error).cause ?? error);
    // Neither the URL (it may carry a token) nor the body is repeated in the message.
    throw new AttemptError(`${kind} trigger request failed: ${cause}`, false);
  }
  await response.body?.cancel();
  if (response.status >= 400) {
    throw new AttemptError(`${kind} trigger got HTTP ${response.status}`, response.status < 500);
  }
}

/** webhook: templated URL (values percent-encoded), method, headers and body. */
export async function runWebhook(n: TriggerNotification, o: WebhookOptions, ctx: TriggerEnvironment): Promise<void> {
  const url = render(o.url, n, ctx, 'url', 'webhook url');
  const headers = renderHeaders(n, ctx, o.headers);
  const body = o.bodyTemplate === undefined ? JSON.stringify(n.view) : render(o.bodyTemplate, n, ctx, 'plain', 'webhook body');
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  const withBody = o.method !== 'GET';
  await send('webhook', url, { method: o.method, headers, ...(withBody ? { body } : {}) }, o.timeoutMs);
}

/** A CloudEvent for notifications that arrived without the server's envelope. */
function fallbackCloudEvent(n: TriggerNotification): unknown {
  return {
    specversion: '1.0',
    type: `int.ecmwf.aviso.${n.view.event_type}`,
    source: 'aviso-ts-client',
    id: `${n.view.event_type}@${n.view.sequence}`,
    datacontenttype: 'application/json',
    data: { identifier: n.view.identifier, payload: n.view.payload },
  };
}

/** post: the server's CloudEvent, always POSTed, as application/cloudevents+json unless overridden. */
export async function runPost(
  n: TriggerNotification,
  o: { readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly timeoutMs: number | undefined },
  ctx: TriggerEnvironment,
): Promise<void> {
  const url = render(o.url, n, ctx, 'url', 'post url');
  const headers = renderHeaders(n, ctx, o.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/cloudevents+json');
  const body = JSON.stringify(n.cloudEvent ?? fallbackCloudEvent(n));
  await send('post', url, { method: 'POST', headers, body }, o.timeoutMs);
}
