/**
 * How a failed listener is reported on stderr, as the aviso client reports it:
 * `Error in listener NAME: …`, an optional `  Hint: …` for the mistakes an operator makes most,
 * then `  Other listeners continue.`. Text that came from the server or a receiver is made safe
 * for a terminal first.
 */

/**
 * Server text for a terminal: a whitespace-separated token that looks like a URL is replaced by
 * `[URL omitted]` (with its user info, path and query, which may hold secrets), and control
 * characters other than newline and tab are shown escaped, so a message cannot recolour the
 * terminal or move the cursor over earlier output.
 */
export function sanitizeServerText(text: string): string {
  return text
    .split(/(\s+)/)
    .map((part) => {
      if (/^\s+$/.test(part)) return part;
      const bare = part.replace(/^['"`<([]+/, '');
      return part.includes('://') || bare.startsWith('//') ? '[URL omitted]' : part;
    })
    .join('')
    .split('')
    .map((c) => (isControl(c) ? `\\u{${c.charCodeAt(0).toString(16)}}` : c))
    .join('');
}

/** C0 and C1 control characters, except newline and tab (layout, not control, here). */
function isControl(c: string): boolean {
  const code = c.charCodeAt(0);
  return (code < 0x20 && c !== '\n' && c !== '\t') || (code >= 0x7f && code <= 0x9f);
}

interface ErrorShape {
  readonly name?: string;
  readonly status?: number;
  readonly code?: string;
  readonly body?: string;
  readonly message: string;
  readonly cause?: unknown;
}

function httpHint(error: ErrorShape): string | undefined {
  const body = `${error.code ?? ''} ${error.body ?? ''}`;
  if (body.includes('UNKNOWN_EVENT_TYPE') || body.includes('unknown event type')) {
    return 'the event type is not configured on the server; run `aviso schema list` for the ones it accepts, and check `event:` in your listener for a typo.';
  }
  if (/missing/i.test(body) && /required/i.test(body)) {
    return "identifiers the schema marks `required: true` must appear in the listener's `identifiers:`; only `required: false` ones may be left out. Run `aviso schema get <TYPE>` to see which.";
  }
  if (body.includes('outside allowed range') || body.includes('Allowed: [') || body.includes('exceeds maximum length')) {
    return "an identifier value breaks the schema's constraints (the server names the field above); run `aviso schema get <TYPE>` for the handler and its limits.";
  }
  if (error.status === 401) {
    return 'credentials are missing, invalid or expired; check --token / --username / --password, AVISO_TOKEN / AVISO_USERNAME / AVISO_PASSWORD, the config file and the credentials file (`aviso config dump --redact` shows which is used).';
  }
  if (error.status === 403)
    return "the credential was accepted but may not allow watching this event type; ask the server's administrator.";
  return undefined;
}

function triggerHint(error: ErrorShape): string | undefined {
  const message = error.message;
  if (/template error/.test(message))
    return "a `{{ … }}` in the trigger names a field the notification does not have, or an unset variable; check the trigger's templates.";
  if (/timed out/.test(message)) return 'the trigger did not finish within its `timeout:`; raise it, or check the command or receiver.';
  if (/exited with code|was killed/.test(message))
    return 'the command failed; run it by hand with the AVISO_* variables of the notification to see why.';
  if (/got HTTP 4\d\d/.test(message)) return "the receiver rejected the request; check the trigger's URL, headers and body.";
  if (/got HTTP 5\d\d|request failed/.test(message))
    return 'the receiver is unreachable or failing; `retries:` lets a trigger ride out a short outage.';
  return undefined;
}

export function hintFor(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const shape = error as ErrorShape;
  if (shape.name === 'TriggerFailedError') return triggerHint(shape);
  if (shape.name === 'HttpError') return httpHint(shape);
  if (shape.name === 'AuthError') {
    const cause = shape.cause as ErrorShape | undefined;
    return httpHint({ ...shape, ...(cause && typeof cause === 'object' ? { body: cause.body, code: cause.code } : {}) });
  }
  if (shape.name === 'StreamProtocolError' && /opening/.test(shape.message)) {
    return 'the server did not confirm an aviso stream; check that the base URL points to an aviso server (not a web page, a login page or a proxy).';
  }
  return undefined;
}

/** The lines of one failed listener. */
export function listenerFailureLines(label: string, error: unknown): string[] {
  const e = error instanceof Error ? error : new Error(String(error));
  const requestId = (e as { requestId?: unknown }).requestId;
  const message = sanitizeServerText(typeof requestId === 'string' ? `${e.message} (request id ${requestId})` : e.message);
  const hint = hintFor(e);
  return [
    `Error in listener ${label}: ${message}`,
    ...(hint ? [`  Hint: ${sanitizeServerText(hint)}`] : []),
    '  Other listeners continue.',
  ];
}
