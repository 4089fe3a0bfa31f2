/**
 * What one SSE frame of a watch or replay is (docs/streaming.md "What arrives"), for display.
 * Pure: no DOM.
 */

export type FrameKind = 'notification' | 'lifecycle' | 'heartbeat' | 'error' | 'close';

export interface ClassifiedFrame {
  readonly kind: FrameKind;
  /** Short name shown as the frame's badge: `live`, `replay`, `opening`, `replay started`, … */
  readonly label: string;
  /** One line about it: the CloudEvent id, the close reason and cause, the limit, … */
  readonly summary: string;
  /** The data as parsed, or the raw text when it is not JSON. */
  readonly data: unknown;
  /** The stream's request id when the frame carries one. */
  readonly requestId?: string;
}

type Json = Record<string, unknown>;

export function classifyFrame(event: string, text: string): ClassifiedFrame {
  const data = parse(text);
  const fields: Json = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Json) : {};
  const requestId = typeof fields.request_id === 'string' ? { requestId: fields.request_id } : {};
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the fields read with it are scalars in every frame the server sends
  const str = (key: string): string => (fields[key] === undefined || fields[key] === null ? '' : String(fields[key]));
  switch (event) {
    case 'live-notification':
    case 'replay':
      if (fields.type === 'connection_established') {
        return {
          kind: 'lifecycle',
          label: 'opening',
          summary: `topic ${str('topic')}, closes in ${str('connection_will_close_in_seconds')} s`,
          data,
          ...requestId,
        };
      }
      return {
        kind: 'notification',
        label: event === 'replay' ? 'replay' : 'live',
        summary: str('id') || '(no id)',
        data,
        ...requestId,
      };
    case 'replay-control':
      return { ...replayControl(fields, str), data, ...requestId };
    case 'heartbeat':
      return { kind: 'heartbeat', label: 'heartbeat', summary: str('timestamp'), data, ...requestId };
    case 'connection-closing': {
      const cause = str('cause');
      return {
        kind: 'close',
        label: 'closing',
        summary: `${str('reason')}${cause ? ` (cause ${cause})` : ''}: ${str('message')}`,
        data,
        ...requestId,
      };
    }
    case 'error':
      return { kind: 'error', label: 'error', summary: [str('error'), str('message')].filter(Boolean).join(': '), data, ...requestId };
    default:
      return { kind: 'lifecycle', label: event, summary: '', data, ...requestId };
  }
}

function replayControl(fields: Json, str: (key: string) => string): { kind: FrameKind; label: string; summary: string } {
  switch (fields.type) {
    case 'replay_started': {
      const from = fields.from_sequence != null ? `from #${str('from_sequence')}` : `from ${str('from_date')}`;
      const end = fields.end_sequence != null ? ` to #${str('end_sequence')}` : fields.to_date != null ? ` to ${str('to_date')}` : '';
      return { kind: 'lifecycle', label: 'replay started', summary: `${from}${end}, batches of ${str('batch_size')}` };
    }
    case 'replay_completed':
      return { kind: 'lifecycle', label: 'replay completed', summary: 'history exhausted' };
    case 'notification_replay_limit_reached':
      return { kind: 'lifecycle', label: 'limit reached', summary: `${str('message')} (max ${str('max_allowed')})` };
    default:
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a replay-control frame's type is a string
      return { kind: 'lifecycle', label: String(fields.type ?? 'replay-control'), summary: '' };
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * JSON for reading: indented objects, but an array of scalars (or of arrays of scalars, such as
 * a polygon's `[lat,lon]` pairs) on one line, so a CloudEvent stays short.
 */
export function formatJson(value: unknown, indent = ''): string {
  if (isFlat(value)) return JSON.stringify(value) ?? 'undefined';
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((item) => inner + formatJson(item, inner)).join(',\n')}\n${indent}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${formatJson(item, inner)}`).join(',\n')}\n${indent}}`;
}

function isFlat(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (!Array.isArray(value) || depth > 1) return false;
  return value.every((item) => (Array.isArray(item) ? isFlat(item, depth + 1) : item === null || typeof item !== 'object'));
}
